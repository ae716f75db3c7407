//! The registry's invariants, each shown on its own. Over 300 lines: one concept, the
//! registry's contract as the supervisors and hosts rely on it.

use std::sync::Arc;

use rmcp::model::Tool;

use super::*;
use crate::state::Generation;

fn tool(name: &str, description: &str) -> Tool {
    Tool::new(
        name.to_owned(),
        description.to_owned(),
        Arc::new(serde_json::Map::new()),
    )
}

fn tools(names: &[&str]) -> Vec<Tool> {
    names.iter().map(|n| tool(n, "d")).collect()
}

fn server(name: &str) -> Arc<str> {
    Arc::from(name)
}

#[test]
fn publish_registers_every_tool_under_its_public_name() {
    let registry = ToolRegistry::new();
    let change = registry
        .publish(&server("s"), Generation::of(1), tools(&["a", "b"]))
        .unwrap()
        .change;
    assert_eq!(change.added, ["a", "b"]);
    let snapshot = registry.snapshot();
    assert_eq!(snapshot.len(), 2);
    let a = snapshot.get("mcp__s__a").expect("a");
    assert_eq!((&*a.server, &*a.raw_name), ("s", "a"));
    assert_eq!(snapshot.server("s").unwrap().generation, 1);
}

#[test]
fn the_diff_names_added_removed_and_changed_tools() {
    let registry = ToolRegistry::new();
    registry
        .publish(
            &server("s"),
            Generation::of(1),
            vec![tool("keep", "x"), tool("edit", "old"), tool("drop", "x")],
        )
        .unwrap();
    let change = registry
        .publish(
            &server("s"),
            Generation::of(2),
            vec![tool("keep", "x"), tool("edit", "new"), tool("new", "x")],
        )
        .unwrap()
        .change;
    assert_eq!(change.added, ["new"]);
    assert_eq!(change.removed, ["drop"]);
    assert_eq!(change.changed, ["edit"]);
    assert_eq!(change.tools, ["keep", "edit", "new"]);
    let same = registry
        .publish(
            &server("s"),
            Generation::of(2),
            vec![tool("keep", "x"), tool("edit", "new"), tool("new", "x")],
        )
        .unwrap()
        .change;
    assert!(same.is_empty(), "an unchanged list is no change");
}

#[test]
fn a_duplicate_raw_name_rejects_the_list_and_keeps_the_previous_set() {
    let registry = ToolRegistry::new();
    registry
        .publish(&server("s"), Generation::of(1), tools(&["a"]))
        .unwrap();
    let err = registry
        .publish(&server("s"), Generation::of(2), tools(&["b", "b"]))
        .unwrap_err();
    assert_eq!(err, PublishError::DuplicateTool("b".into()));
    let snapshot = registry.snapshot();
    assert!(snapshot.get("mcp__s__a").is_some());
    assert_eq!(snapshot.server("s").unwrap().generation, 1);
}

#[test]
fn an_older_generation_cannot_overwrite_a_newer_one() {
    let registry = ToolRegistry::new();
    registry
        .publish(&server("s"), Generation::of(4), tools(&["new"]))
        .unwrap();
    let err = registry
        .publish(&server("s"), Generation::of(3), tools(&["old"]))
        .unwrap_err();
    assert_eq!(
        err,
        PublishError::Stale {
            generation: Generation::of(3),
            registered: Generation::of(4)
        }
    );
    assert!(registry.snapshot().get("mcp__s__new").is_some());
}

#[test]
fn a_public_name_owned_by_another_server_is_refused() {
    let registry = ToolRegistry::new();
    // `a__b` is hashed and `a` + `b__c` is not, so they cannot clash by construction; force a
    // clash through a tool whose name equals another server's hashed public name.
    let hashed = public_name("x", "t.t");
    let tail = hashed.strip_prefix("mcp__x__").unwrap().to_owned();
    registry
        .publish(&server("x"), Generation::of(1), tools(&["t.t"]))
        .unwrap();
    // Same server publishing its own names again is fine.
    registry
        .publish(&server("x"), Generation::of(2), tools(&["t.t"]))
        .unwrap();
    // A tool of server `x` literally named like the hash tail gets a different (hashed) name.
    assert_ne!(public_name("x", &tail), hashed);
}

#[test]
fn every_tool_is_found_by_its_public_name_whether_or_not_it_is_indexed() {
    let registry = ToolRegistry::new();
    let many: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let long = "long".repeat(20);
    let sets: [(&str, Vec<&str>); 5] = [
        // Read back from the name: found through the server's set.
        ("plain", vec!["a", "b.c", "b_c"]),
        // A normalized server name, a cut one, a server past the scanned size: indexed.
        ("odd name", vec!["a", "b"]),
        (&long, vec!["a"]),
        ("big", many.clone()),
        ("a", vec!["b__c"]),
    ];
    for (name, list) in &sets {
        registry
            .publish(&server(name), Generation::of(1), tools(list))
            .unwrap();
    }
    let check = |expected: usize| {
        let snapshot = registry.snapshot();
        assert_eq!(snapshot.len(), expected);
        assert_eq!(snapshot.tools().count(), expected);
        for tool in snapshot.tools() {
            let found = snapshot
                .get(&tool.public_name)
                .expect("every tool is found");
            assert_eq!(
                (&found.server, &found.raw_name),
                (&tool.server, &tool.raw_name)
            );
        }
        for missing in [
            "mcp__plain__z",
            "mcp__big__t100",
            "mcp__nobody__a",
            "mcp__",
            "x",
        ] {
            assert!(snapshot.get(missing).is_none(), "{missing}");
        }
    };
    check(3 + 2 + 1 + 100 + 1);
    // A set that shrinks below the scanned size leaves nothing behind in the index.
    registry
        .publish(&server("big"), Generation::of(2), tools(&many[..2]))
        .unwrap();
    check(3 + 2 + 1 + 2 + 1);
    registry.unregister(&server("odd name"));
    check(3 + 1 + 2 + 1);
    assert!(
        registry
            .snapshot()
            .get(&public_name("odd name", "a"))
            .is_none()
    );
}

#[test]
fn unregister_removes_one_server_and_reports_it() {
    let registry = ToolRegistry::new();
    registry
        .publish(&server("a"), Generation::of(1), tools(&["t"]))
        .unwrap();
    registry
        .publish(&server("b"), Generation::of(1), tools(&["t"]))
        .unwrap();
    let mut changes = registry.changes();
    let change = registry.unregister(&server("a")).unwrap();
    assert_eq!(change.removed, ["t"]);
    assert!(change.tools.is_empty());
    assert_eq!(changes.try_recv().unwrap(), Some(change));
    let snapshot = registry.snapshot();
    assert!(snapshot.server("a").is_none());
    assert!(snapshot.get("mcp__b__t").is_some());
}

#[test]
fn snapshots_are_immutable_once_taken() {
    let registry = ToolRegistry::new();
    registry
        .publish(&server("s"), Generation::of(1), tools(&["a"]))
        .unwrap();
    let before = registry.snapshot();
    registry
        .publish(&server("s"), Generation::of(2), tools(&["b"]))
        .unwrap();
    assert!(before.get("mcp__s__a").is_some() && before.get("mcp__s__b").is_none());
    assert!(registry.snapshot().get("mcp__s__b").is_some());
}

#[test]
fn a_publish_nobody_watches_patches_the_snapshot_in_place_and_a_held_one_stays_whole() {
    let registry = ToolRegistry::new();
    let address = |snapshot: Arc<Snapshot>| Arc::as_ptr(&snapshot) as usize;
    let first = address(registry.snapshot());
    for i in 0..1_000 {
        registry
            .publish(&server(&format!("s{i}")), Generation::of(1), tools(&["a"]))
            .unwrap();
    }
    // No reader held it: the same snapshot, patched (nothing was copied).
    assert_eq!(address(registry.snapshot()), first);
    let held = registry.snapshot();
    registry
        .publish(&server("s7"), Generation::of(2), tools(&["b"]))
        .unwrap();
    registry.unregister(&server("s8"));
    assert_eq!(held.len(), 1_000);
    assert!(held.get("mcp__s7__a").is_some() && held.get("mcp__s7__b").is_none());
    assert!(held.get("mcp__s8__a").is_some());
    let now = registry.snapshot();
    assert!(!Arc::ptr_eq(&now, &held));
    assert_eq!(now.len(), 999);
    assert!(now.get("mcp__s7__b").is_some() && now.get("mcp__s7__a").is_none());
    assert!(now.server("s8").is_none());
}

#[test]
fn concurrent_readers_see_whole_sets_only() {
    let registry = ToolRegistry::new();
    let odd: Vec<String> = (0..50).map(|i| format!("odd_{i}")).collect();
    let even: Vec<String> = (0..50).map(|i| format!("even_{i}")).collect();
    let as_tools = |names: &[String]| names.iter().map(|n| tool(n, "d")).collect::<Vec<_>>();
    registry
        .publish(&server("s"), Generation::of(1), as_tools(&odd))
        .unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (registry, stop, odd, even) =
                (registry.clone(), stop.clone(), odd.clone(), even.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
                    let snapshot = registry.snapshot();
                    let names: Vec<String> = snapshot
                        .server("s")
                        .unwrap()
                        .tools
                        .iter()
                        .map(|t| t.raw_name.to_string())
                        .collect();
                    assert!(
                        names == odd || names == even,
                        "partial set: {} tools",
                        names.len()
                    );
                    assert_eq!(snapshot.len(), 50);
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for generation in 2..200 {
        let names = if generation % 2 == 0 { &even } else { &odd };
        registry
            .publish(&server("s"), Generation::of(generation), as_tools(names))
            .unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().expect("reader") > 0);
    }
}

#[test]
fn handles_resolve_by_name_and_fail_for_unknown_tools() {
    let registry = ToolRegistry::new();
    registry
        .publish(&server("s"), Generation::of(1), tools(&["a"]))
        .unwrap();
    let handle = registry.handle("mcp__s__a").unwrap();
    assert_eq!(
        (handle.server(), handle.raw_name(), handle.public_name()),
        ("s", "a", "mcp__s__a")
    );
    let unknown = registry.handle("mcp__s__zzz").unwrap_err();
    assert_eq!(unknown.name, "mcp__s__zzz");
    let typo = registry.handle("mcp__s__b").unwrap_err();
    assert_eq!(typo.closest.as_deref(), Some("mcp__s__a"), "{typo}");
    assert_eq!(
        typo.to_string(),
        "no tool named 'mcp__s__b' (did you mean 'mcp__s__a'?)"
    );
}

#[test]
fn an_identical_set_from_a_new_generation_is_not_announced() {
    let registry = ToolRegistry::new();
    let mut changes = registry.changes();
    registry
        .publish(&server("s"), Generation::of(1), tools(&["a"]))
        .map(|published| registry.announce(&published))
        .unwrap();
    let first = changes
        .try_recv()
        .unwrap()
        .expect("the first registration is announced");
    assert_eq!(first.added, ["a"]);
    // A reconnect (generation 2) that lists exactly the same tools.
    registry
        .publish(&server("s"), Generation::of(2), tools(&["a"]))
        .map(|published| registry.announce(&published))
        .unwrap();
    assert!(
        changes.try_recv().unwrap().is_none(),
        "nothing changed, nothing announced"
    );
    assert_eq!(registry.snapshot().server("s").unwrap().generation, 2);
    registry
        .publish(&server("s"), Generation::of(3), tools(&["a", "b"]))
        .map(|published| registry.announce(&published))
        .unwrap();
    assert_eq!(
        changes.try_recv().unwrap().expect("a real change").added,
        ["b"]
    );
}
