//! The parts of the library import each other in one direction only, the one
//! docs/ARCHITECTURE.md draws: each part only the parts listed after it in [`PARTS`], and the
//! foundation ([`FOUNDATION`]) none of them.
//!
//! What a file imports is read from its `use crate::…` lines and the `crate::…` paths written
//! in its code (comments and `#[cfg(test)]` parts left out), at the level of the crate's
//! top-level modules.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::Path,
};

/// The parts, from the top down: a part may import the parts after it, never one before it.
const PARTS: [&str; 10] = [
    "supervisor",
    "actor",
    "call_path",
    "transition",
    "registry",
    "board",
    "session",
    "mailbox",
    "reconnect",
    "transport",
];

/// What any part may use, and which imports no part.
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

/// The top-level modules of `lib.rs`.
fn top_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').to_owned())
        })
        .collect()
}

/// The top-level modules `text` names after `crate::` (outside comments and test modules).
fn imported(text: &str, tops: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut found = BTreeSet::new();
    let mut in_use_group = false;
    for line in code.lines() {
        let line = line.trim();
        if line.starts_with("//") {
            continue;
        }
        if line.starts_with("use crate::{") || line.starts_with("pub(crate) use crate::{") {
            in_use_group = !line.ends_with("};");
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if tops.contains(&name) {
                found.insert(name);
            }
        }
        // Inside `use crate::{a::…, b::{…}}`, each group member names a top-level module.
        if in_use_group || line.starts_with("use crate::{") {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
                if let Some(name) = word.split("::").next()
                    && word.contains("::")
                    && tops.contains(name)
                {
                    found.insert(name.to_owned());
                }
            }
            if line.ends_with("};") {
                in_use_group = false;
            }
        }
    }
    found
}

/// Every top-level module → the top-level modules its files import.
fn module_imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let tops = top_modules(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(src)
                .expect("under src/")
                .to_string_lossy();
            if !rel.ends_with(".rs") || rel.ends_with("tests.rs") || rel.contains("/tests/") {
                continue;
            }
            let top = rel.split('/').next().unwrap_or("").trim_end_matches(".rs");
            let text = fs::read_to_string(&path).expect("a file");
            let mut names = imported(&text, &tops);
            names.remove(top);
            out.entry(top.to_owned()).or_default().extend(names);
        }
    }
    out
}

/// Every import against the direction of [`PARTS`], and every part a foundation module imports.
fn wrong_way(imports: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let rank = |name: &str| PARTS.iter().position(|p| *p == name);
    let mut wrong = Vec::new();
    for (from, names) in imports {
        for to in names.iter().filter(|to| *to != from) {
            match (rank(from), rank(to)) {
                (Some(a), Some(b)) if b <= a => {
                    wrong.push(format!("{from} imports {to}, which is above it"))
                }
                (None, Some(_)) if FOUNDATION.contains(&from.as_str()) => {
                    wrong.push(format!("the foundation's {from} imports the part {to}"))
                }
                _ => {}
            }
        }
    }
    wrong
}

#[test]
fn the_parts_import_each_other_in_one_direction_only() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("src");
    let imports = module_imports(&src);
    for part in PARTS.iter().chain(&FOUNDATION) {
        assert!(imports.contains_key(*part), "no module `{part}` in src/");
    }
    let wrong = wrong_way(&imports);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_check_sees_use_groups_and_paths_and_refuses_an_upward_import() {
    let tops: BTreeSet<String> = ["session", "actor", "state"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let text = "//! docs name crate::actor\nuse crate::{\n    state::Status,\n    actor::Actor,\n};\nfn f() { crate::session::go(); }\n#[cfg(test)]\nmod tests { use crate::actor; }\n";
    let found = imported(text, &tops);
    let expected: BTreeSet<String> = ["actor", "session", "state"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(found, expected);
    let mut imports = BTreeMap::new();
    imports.insert("session".to_owned(), found);
    assert_eq!(
        wrong_way(&imports),
        ["session imports actor, which is above it"]
    );
}
