//! The parts of the library import each other in one direction only: each part only the parts
//! listed after it in [`PARTS`], and the foundation ([`FOUNDATION`]) none of them.
//!
//! What a file imports is read from the module graph `shape.rs` reads (`use` lines anywhere,
//! paths written in code, re-exports followed to the file that defines the item; comments,
//! strings and `#[cfg(test)]` parts left out), then lifted to the table's entries.
//!
//! docs/ARCHITECTURE.md's picture of the parts is drawn from the same table and the same edges
//! (between `<!-- parts:begin -->` and `<!-- parts:end -->`):
//! `MCP_BLESS=1 cargo test -p mcp-resilient-cli --test it -- layers` redraws it.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
};

use super::shape::{Edges, Modules, read_crate, workspace};

/// The library's root file.
const LIBRARY: &str = "src/lib.rs";

/// The parts, from the top down, each a module path of the library (`supervisor`, or a nested
/// one such as `engine::actor`) and what it is: a part may import the parts after it, never one
/// before it. A file belongs to the longest entry of this table or of [`FOUNDATION`] that its
/// module path starts with.
const PARTS: [(&str, &str); 9] = [
    (
        "supervisor",
        "the public handle: builder, status, watch, requests, restart, shutdown",
    ),
    (
        "supervisor::actor",
        "the one task per server that decides (attempts, outages, sync, lifecycle) and \
         words each status change (transition)",
    ),
    (
        "supervisor::dispatch",
        "how a request reaches the current generation; reads the board",
    ),
    ("registry", "the tool registry, handles and public names"),
    (
        "supervisor::board",
        "one server's status and the generation that takes calls, and its events",
    ),
    (
        "supervisor::session",
        "building and holding one session: connect, generation, live, probe, heartbeat, \
         listen, listing, relay",
    ),
    (
        "supervisor::mailbox",
        "what a session's watchers and the handle tell the actor",
    ),
    (
        "supervisor::reconnect",
        "the policy, the backoff and budget, the retry guard, the origin watch (pure \
         decisions and pacing)",
    ),
    (
        "transport",
        "stdio, legacy SSE, Streamable HTTP; error → verdict",
    ),
];

/// What any part may use, and which imports no part (module paths, as in [`PARTS`]).
const FOUNDATION: [&str; 10] = [
    "state",
    "config",
    "error",
    "call",
    "host",
    "auth",
    "telemetry",
    "verdict",
    "text",
    "clock",
];

/// The table's entry a module belongs to: the longest of `entries` its path starts with, else
/// its top-level module; `None` for the crate's root.
fn entry_of(module: &[String], entries: &[&str]) -> Option<String> {
    entries
        .iter()
        .filter(|entry| {
            let path: Vec<&str> = entry.split("::").collect();
            module.len() >= path.len() && module.iter().zip(&path).all(|(m, p)| m == p)
        })
        .max_by_key(|entry| entry.split("::").count())
        .map(|entry| (*entry).to_owned())
        .or_else(|| module.first().cloned())
}

/// Every entry (and every top-level module outside the table) → the entries its files import.
fn entry_imports(
    modules: &Modules,
    edges: &Edges,
    entries: &[&str],
) -> BTreeMap<String, BTreeSet<String>> {
    let file_entry: BTreeMap<&str, String> = modules
        .iter()
        .filter_map(|(module, file)| Some((file.as_str(), entry_of(module, entries)?)))
        .collect();
    let mut out: BTreeMap<String, BTreeSet<String>> = file_entry
        .values()
        .map(|entry| (entry.clone(), BTreeSet::new()))
        .collect();
    for (from, targets) in edges {
        let Some(from) = file_entry.get(from.as_str()) else {
            continue;
        };
        for to in targets.keys() {
            if let Some(to) = file_entry.get(to.as_str())
                && to != from
            {
                out.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    out
}

/// Every import against the direction of `parts`, and every part a `foundation` entry imports.
fn wrong_way(
    imports: &BTreeMap<String, BTreeSet<String>>,
    parts: &[&str],
    foundation: &[&str],
) -> Vec<String> {
    let rank = |name: &str| parts.iter().position(|p| *p == name);
    let mut wrong = Vec::new();
    for (from, names) in imports {
        for to in names {
            match (rank(from), rank(to)) {
                (Some(a), Some(b)) if b <= a => {
                    wrong.push(format!("{from} imports {to}, which is above it"))
                }
                (None, Some(_)) if foundation.contains(&from.as_str()) => {
                    wrong.push(format!("the foundation's {from} imports the part {to}"))
                }
                _ => {}
            }
        }
    }
    wrong
}

/// The table's entries, parts first.
fn entries() -> Vec<&'static str> {
    PARTS
        .iter()
        .map(|(name, _)| *name)
        .chain(FOUNDATION)
        .collect()
}

/// The library's modules and each entry's imports.
fn library() -> (Modules, BTreeMap<String, BTreeSet<String>>) {
    let graph = read_crate(&workspace(), LIBRARY);
    let modules = graph.crates[LIBRARY].clone();
    let imports = entry_imports(&modules, &graph.edges, &entries());
    (modules, imports)
}

#[test]
fn the_parts_import_each_other_in_one_direction_only() {
    let (modules, imports) = library();
    for entry in entries() {
        let path: Vec<String> = entry.split("::").map(str::to_owned).collect();
        assert!(
            modules.contains_key(&path),
            "no module `{entry}` in src/ (the table of layers.rs names it)"
        );
    }
    let parts: Vec<&str> = PARTS.iter().map(|(name, _)| *name).collect();
    let wrong = wrong_way(&imports, &parts, &FOUNDATION);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `words` after `lead`, in lines of at most `width` characters, the later ones indented as
/// far as `lead`; comma-separated when `commas`.
fn wrapped(lead: &str, words: &[&str], commas: bool, width: usize) -> String {
    let indent = " ".repeat(lead.chars().count());
    let (mut out, mut line, mut empty) = (String::new(), lead.to_owned(), true);
    for (n, word) in words.iter().enumerate() {
        let word = match commas && n + 1 < words.len() {
            true => format!("{word},"),
            false => (*word).to_owned(),
        };
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            (line, empty) = (indent.clone(), true);
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(&word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The picture of docs/ARCHITECTURE.md: each part in table order with what it is and the parts
/// it imports, then the foundation, then the library's modules outside the table and the parts
/// they import.
fn picture(
    imports: &BTreeMap<String, BTreeSet<String>>,
    parts: &[(&str, &str)],
    foundation: &[&str],
) -> String {
    const WIDTH: usize = 96;
    let names: Vec<&str> = parts.iter().map(|(name, _)| *name).collect();
    let column = names.iter().map(|n| n.len()).max().unwrap_or(0) + 2;
    let of = |entry: &str| -> Vec<&str> {
        let used = imports.get(entry);
        names
            .iter()
            .copied()
            .filter(|part| used.is_some_and(|u| u.contains(*part)))
            .collect()
    };
    let mut out =
        String::from("the parts, from the top down (each imports only parts below it):\n\n");
    for (name, what) in parts {
        let words: Vec<&str> = what.split(' ').collect();
        let lead = format!("{name:<column$}");
        out.push_str(&wrapped(&lead, &words, false, WIDTH));
        let used = of(name);
        if used.is_empty() {
            out.push_str(&format!("{:column$}──► no part\n", ""));
        } else {
            out.push_str(&wrapped(&format!("{:column$}──► ", ""), &used, true, WIDTH));
        }
    }
    out.push_str("\nthe foundation, which any part may use and which imports no part:\n\n");
    out.push_str(&wrapped("  ", foundation, true, WIDTH));
    let outside: Vec<&String> = imports
        .keys()
        .filter(|e| !names.contains(&e.as_str()) && !foundation.contains(&e.as_str()))
        .collect();
    if !outside.is_empty() {
        out.push_str("\nbeside them, outside the table, and the parts they import:\n\n");
        let column = outside.iter().map(|e| e.len()).max().unwrap_or(0) + 4;
        for entry in outside {
            let used = of(entry);
            let lead = format!("  {entry:<width$}──► ", width = column - 2);
            if used.is_empty() {
                out.push_str(&format!("{lead}no part\n"));
            } else {
                out.push_str(&wrapped(&lead, &used, true, WIDTH));
            }
        }
    }
    out
}

const BEGIN: &str = "<!-- parts:begin -->\n";
const END: &str = "<!-- parts:end -->";

/// The picture's block in `map` (between [`BEGIN`] and [`END`]), and where it is.
fn block(map: &str) -> Option<(usize, usize)> {
    let start = map.find(BEGIN)? + BEGIN.len();
    let end = start + map[start..].find(END)?;
    Some((start, end))
}

#[test]
fn the_architecture_map_draws_the_parts_as_the_code_imports_them() {
    let (_, imports) = library();
    let drawn = format!(
        "<!-- Drawn by cli/tests/it/layers.rs from its table and the code's imports; \
         MCP_BLESS=1 cargo test -p mcp-resilient-cli --test it -- layers redraws it. -->\n\
         ```\n{}```\n",
        picture(&imports, &PARTS, &FOUNDATION)
    );
    let path = workspace().join("docs/ARCHITECTURE.md");
    let map = fs::read_to_string(&path).expect("the map");
    let (start, end) = block(&map).expect("docs/ARCHITECTURE.md marks the picture of the parts");
    if map[start..end] == drawn {
        return;
    }
    if std::env::var("MCP_BLESS").is_ok_and(|v| v == "1") {
        fs::write(&path, format!("{}{drawn}{}", &map[..start], &map[end..])).expect("write");
        println!("redrew the picture of the parts in {}", path.display());
        return;
    }
    panic!(
        "docs/ARCHITECTURE.md's picture of the parts is not what the code imports; redraw it with\n  \
         MCP_BLESS=1 cargo test -p mcp-resilient-cli --test it -- layers\nand read the \
         difference. Drawn from the code:\n{drawn}\nIn the map:\n{}",
        &map[start..end]
    );
}

#[test]
fn the_check_reads_paths_and_nested_uses_and_refuses_an_upward_import() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    };
    write("src/lib.rs", "mod engine;\nmod state;\nmod other;\n");
    write("src/engine/mod.rs", "mod actor;\nmod session;\n");
    write("src/engine/actor.rs", "pub fn go() {}\n");
    write(
        "src/engine/session/mod.rs",
        "//! docs name crate::other\nmod live;\nuse crate::state::Status;\n\
         #[cfg(test)]\nmod tests { use crate::other::X; }\n",
    );
    // Nested in a part, a path written in code, with no `use`.
    write(
        "src/engine/session/live.rs",
        "fn f() { super::super::actor::go(); }\n",
    );
    write("src/state.rs", "pub struct Status;\n");
    write(
        "src/other.rs",
        "pub struct X;\nfn g() { crate::engine::actor::go(); }\n",
    );
    let graph = read_crate(dir.path(), LIBRARY);
    let modules = &graph.crates[LIBRARY];
    let (parts, foundation) = (["engine::actor", "engine::session"], ["state"]);
    let entries: Vec<&str> = parts.iter().chain(&foundation).copied().collect();
    let imports = entry_imports(modules, &graph.edges, &entries);
    let names = |entry: &str| imports[entry].iter().cloned().collect::<Vec<_>>();
    assert_eq!(names("engine::session"), ["engine::actor", "state"]);
    assert_eq!(names("other"), ["engine::actor"]);
    assert!(
        names("engine").is_empty(),
        "the parent's `mod` lines import nothing"
    );
    assert_eq!(
        wrong_way(&imports, &parts, &foundation),
        ["engine::session imports engine::actor, which is above it"]
    );
    let drawn = picture(
        &imports,
        &[("engine::actor", "decides"), ("engine::session", "holds")],
        &foundation,
    );
    assert!(
        drawn.contains("engine::session  holds\n                 ──► engine::actor\n"),
        "{drawn}"
    );
    assert!(drawn.contains("  other   ──► engine::actor\n"), "{drawn}");
    let map = format!("# Map\n\n{BEGIN}```\nold\n```\n{END}\n\nMore.\n");
    let (start, end) = block(&map).expect("a block");
    assert_eq!(&map[start..end], "```\nold\n```\n");
}
