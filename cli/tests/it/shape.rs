//! The shape of the sources (issue 18), checked in `cargo test` so that a change that breaks it
//! fails the build's tests:
//!
//! - no import circle between the files of `src/`, nor between those of `mock-server/src/`
//!   (the same check as `scripts/circles.py`);
//! - one module-file convention: a module with children is `foo/mod.rs`, never `foo.rs` beside
//!   a `foo/`.
//!
//! The import circles:
//!
//! Edges come from the top-level `use` lines of each file (the binary under `src/bin/` and test
//! files are left out). A `use` of an item that a module re-exports is followed to the file that
//! defines it, and a file's own `pub use` lines are not its dependencies. Paths written out in
//! code without a `use` are not seen. A circle is a strongly connected component of more than
//! one file.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    fs,
    path::{Path, PathBuf},
};

/// A module path (`["supervisor", "actor"]`) → its file, relative to `src/`.
type Modules = BTreeMap<Vec<String>, String>;

fn modules(src: &Path) -> Modules {
    let mut out = Modules::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read src/") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src/");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.starts_with("bin/") {
                continue;
            }
            let mut parts: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_owned)
                .collect();
            if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] {
                parts.pop();
            }
            out.insert(parts, rel);
        }
    }
    out
}

fn is_test(rel: &str) -> bool {
    rel.ends_with("tests.rs") || rel.contains("/tests/")
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_owned()];
    };
    let close = tree.rfind('}').expect("a closing brace");
    let (prefix, body) = (&tree[..open], &tree[open + 1..close]);
    let (mut items, mut depth, mut current) = (Vec::new(), 0, String::new());
    for ch in body.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            items.push(std::mem::take(&mut current));
        } else {
            current.push(ch);
        }
    }
    items.push(current);
    items
        .iter()
        .filter(|item| !item.trim().is_empty())
        .flat_map(|item| expand(item))
        .map(|tail| format!("{prefix}{tail}"))
        .collect()
}

/// The `use` lines of a file at the start of a line: `(is pub, path, name it binds)`.
fn uses(text: &str) -> Vec<(bool, String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = find_use(rest) {
        let (public, start) = at;
        let Some(end) = rest[start..].find(';') else {
            break;
        };
        let statement: String = rest[start..start + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for path in expand(&statement) {
            let (path, alias) = match path.split_once(" as ") {
                Some((path, alias)) => (path.trim().to_owned(), alias.trim().to_owned()),
                None => {
                    let name = path.rsplit("::").next().unwrap_or("").trim().to_owned();
                    (path.trim().to_owned(), name)
                }
            };
            out.push((public, path, alias));
        }
        rest = &rest[start + end..];
    }
    out
}

/// The next `use` (or `pub…use`) at the start of a line: whether it is public, and where its
/// path starts.
fn find_use(text: &str) -> Option<(bool, usize)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        if line.starts_with("use ") {
            return Some((false, line_start + 4));
        }
        if line.starts_with("pub")
            && let Some(at) = line.find(" use ")
        {
            let head = &line[..at];
            if head == "pub" || (head.starts_with("pub(") && head.ends_with(')')) {
                return Some((true, line_start + at + 5));
            }
        }
    }
    None
}

/// `path` as used in the module `at`, made absolute; `None` for another crate's.
fn absolute(modules: &Modules, at: &[String], path: &str) -> Option<Vec<String>> {
    let segs: Vec<String> = path
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let first = segs.first()?;
    let (mut base, mut segs) = match first.as_str() {
        "crate" => (Vec::new(), segs[1..].to_vec()),
        "self" => (at.to_vec(), segs[1..].to_vec()),
        "super" => (at.to_vec(), segs),
        _ => {
            let mut child = at.to_vec();
            child.push(first.clone());
            if !modules.contains_key(&child) {
                return None;
            }
            (at.to_vec(), segs)
        }
    };
    while segs.first().is_some_and(|s| s == "super") {
        base.pop();
        segs.remove(0);
    }
    base.extend(segs);
    Some(base)
}

struct Graph {
    modules: Modules,
    /// `(file, name)` → the absolute path a module's `use` binds that name to.
    bound: HashMap<(String, String), Vec<String>>,
}

impl Graph {
    /// The file that defines what `path` names.
    fn file_of(&self, path: &[String], depth: usize) -> Option<String> {
        for k in (0..=path.len()).rev() {
            let Some(file) = self.modules.get(&path[..k]) else {
                continue;
            };
            let rest = &path[k..];
            if let Some(first) = rest.first()
                && first != "*"
                && depth < 10
                && let Some(target) = self.bound.get(&(file.clone(), first.clone()))
            {
                let mut next = target.clone();
                next.extend_from_slice(&rest[1..]);
                return self.file_of(&next, depth + 1);
            }
            return Some(file.clone());
        }
        None
    }
}

/// Tarjan's strongly connected components of more than one node.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let texts: BTreeMap<String, String> = modules
        .values()
        .map(|rel| {
            let text = fs::read_to_string(src.join(rel)).expect("read a file");
            (rel.clone(), text)
        })
        .collect();
    let mut bound = HashMap::new();
    for (at, rel) in &modules {
        for (_, path, name) in uses(&texts[rel]) {
            if let Some(target) = absolute(&modules, at, &path) {
                bound.insert((rel.clone(), name), target);
            }
        }
    }
    let graph = Graph { modules, bound };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (at, rel) in &graph.modules {
        if is_test(rel) {
            continue;
        }
        for (public, path, _) in uses(&texts[rel]) {
            let Some(target) = absolute(&graph.modules, at, &path) else {
                continue;
            };
            if public {
                continue;
            }
            if let Some(file) = graph.file_of(&target, 0)
                && &file != rel
            {
                edges.entry(rel.clone()).or_default().insert(file);
            }
        }
    }
    edges
}

fn src() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("src")
}

#[test]
fn no_import_circle_between_the_files_of_src() {
    let edges = edges(&src());
    assert!(
        edges.len() > 50,
        "the check sees too few files with imports: {}",
        edges.len()
    );
    let found = circles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            let lines: Vec<String> = c
                .iter()
                .map(|f| {
                    let inside: Vec<&String> = edges[f].iter().filter(|t| c.contains(t)).collect();
                    format!("  {f} -> {inside:?}")
                })
                .collect();
            format!("{} files:\n{}", c.len(), lines.join("\n"))
        })
        .collect();
    assert!(found.is_empty(), "import circles:\n{}", shown.join("\n"));
}

/// The mock server's sources: the circle and size checks cover them as they cover `src/`.
fn mock_src() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("mock-server/src")
}

#[test]
fn no_import_circle_between_the_files_of_the_mock_server() {
    let edges = edges(&mock_src());
    assert!(
        edges.len() > 30,
        "the check sees too few files with imports: {}",
        edges.len()
    );
    let found = circles(&edges);
    assert!(
        found.is_empty(),
        "import circles in mock-server/src/: {found:?}"
    );
}

#[test]
fn the_check_finds_a_circle_and_follows_re_exports() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\nmod d;\npub use c::Thing;\n",
    );
    write("a.rs", "use crate::b::{B, other::{X}};\n");
    write(
        "b.rs",
        "use super::a::A;\npub(crate) use crate::c::Thing as B;\n",
    );
    write("c.rs", "pub struct Thing;\n");
    // Through the root's re-export: c.rs, not lib.rs.
    write("d.rs", "use crate::Thing;\n");
    let edges = edges(src);
    assert_eq!(
        edges["a.rs"].iter().collect::<Vec<_>>(),
        ["b.rs", "c.rs"],
        "B is c.rs's, through b.rs's re-export"
    );
    assert_eq!(edges["d.rs"].iter().collect::<Vec<_>>(), ["c.rs"]);
    assert!(
        !edges.contains_key("lib.rs"),
        "re-exports are not dependencies"
    );
    assert_eq!(
        circles(&edges),
        [vec!["a.rs".to_owned(), "b.rs".to_owned()]]
    );
}

/// Every `.rs` file under `root`, as paths relative to it (`/`-separated), sorted.
fn rs_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under the root");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The crates' source roots, relative to the workspace.
const SOURCES: [&str; 4] = ["src", "cli/src", "mock-server/src", "conformance/src"];

/// `foo.rs` files that sit beside a `foo/` directory (the module-file convention is `foo/mod.rs`).
fn file_and_directory_pairs(root: &Path) -> Vec<String> {
    rs_files(root)
        .into_iter()
        .filter(|rel| !rel.ends_with("/mod.rs") && rel != "mod.rs")
        .filter(|rel| root.join(rel.trim_end_matches(".rs")).is_dir())
        .collect()
}

#[test]
fn a_module_with_children_is_a_directory_with_a_mod_rs() {
    let workspace = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let pairs: Vec<String> = SOURCES
        .iter()
        .flat_map(|root| {
            file_and_directory_pairs(&workspace.join(root))
                .into_iter()
                .map(move |rel| format!("{root}/{rel}"))
        })
        .collect();
    assert!(
        pairs.is_empty(),
        "move each into its directory as mod.rs: {pairs:?}"
    );
}

#[test]
fn the_convention_check_finds_a_file_beside_its_directory() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for rel in ["lib.rs", "a.rs", "a/b.rs", "c/mod.rs", "c/d.rs"] {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, "").expect("write");
    }
    assert_eq!(file_and_directory_pairs(root), ["a.rs"]);
}

/// The most lines a file of `src/` may have without a reason in its module docs.
const FILE_LIMIT: usize = 300;
/// The most lines a function may have, from its `fn` to its closing brace.
const FN_LIMIT: usize = 100;

/// `text` with comments, strings and character literals blanked (newlines kept), so that the
/// braces inside them do not count.
fn blank(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank_out = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            blank_out(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < bytes.len() {
                if bytes[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if bytes[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank_out(&mut out, i, j);
            i = j;
        } else if let Some(open) = raw_string_open(rest).filter(|_| i == 0 || !ident(bytes[i - 1]))
        {
            let hashes = open
                - rest[..open]
                    .iter()
                    .position(|&b| b == b'#' || b == b'"')
                    .unwrap_or(0)
                - 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = bytes[i + open..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(bytes.len(), |n| i + open + n + close.len());
            blank_out(&mut out, i, end);
            i = end;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            blank_out(&mut out, i, j + 1);
            i = j + 1;
        } else if bytes[i] == b'\'' {
            match char_literal_len(rest) {
                Some(len) => {
                    blank_out(&mut out, i, i + len);
                    i += len;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// For `r"`, `r#"`, `br##"`…: the length of the opening, up to and including its quote.
fn raw_string_open(rest: &[u8]) -> Option<usize> {
    let start = match rest {
        [b'r', ..] => 1,
        [b'b', b'r', ..] => 2,
        _ => return None,
    };
    let hashes = rest[start..].iter().take_while(|&&b| b == b'#').count();
    (rest.get(start + hashes) == Some(&b'"')).then_some(start + hashes + 1)
}

/// The length of a character literal at the start of `rest` (`'x'`, `'\n'`, `'\u{1F600}'`),
/// or `None` for a lifetime.
fn char_literal_len(rest: &[u8]) -> Option<usize> {
    let body = rest.get(1..)?;
    let len = if body.first() == Some(&b'\\') {
        body.iter().skip(1).position(|&b| b == b'\'')? + 1
    } else {
        let ch = std::str::from_utf8(&body[..body.len().min(4)])
            .ok()
            .or_else(|| {
                (1..4)
                    .rev()
                    .find_map(|n| std::str::from_utf8(body.get(..n)?).ok())
            })?
            .chars()
            .next()?;
        ch.len_utf8()
    };
    (body.get(len) == Some(&b'\'') && len <= 12).then_some(len + 2)
}

/// `(name, first line, lines)` of every function over [`FN_LIMIT`] lines in `text`.
fn long_functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = blank(text);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(n) = code[at..].find("fn ") {
        let start = at + n;
        at = start + 3;
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let name: String = code[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let Some(open) = code[at..].find(['{', ';']).map(|n| at + n) else {
            break;
        };
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0;
        let mut end = open;
        for (k, &b) in bytes[open..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = open + k;
                break;
            }
        }
        let first = code[..start].matches('\n').count() + 1;
        let last = code[..end].matches('\n').count() + 1;
        if last - first + 1 > FN_LIMIT {
            found.push((name, first, last - first + 1));
        }
    }
    found
}

/// Whether the module docs of `text` say why it is over [`FILE_LIMIT`] lines.
fn gives_a_reason(text: &str) -> bool {
    text.lines()
        .filter(|line| line.starts_with("//!"))
        .any(|line| line.to_lowercase().contains("over 300 lines"))
}

/// Every file of `root` over [`FILE_LIMIT`] lines without a reason, and every function over
/// [`FN_LIMIT`], as lines to print.
fn oversized(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for rel in rs_files(root) {
        let text = fs::read_to_string(root.join(&rel)).expect("read a file");
        let lines = text.lines().count();
        if lines > FILE_LIMIT && !gives_a_reason(&text) {
            found.push(format!(
                "{rel}: {lines} lines, no reason in its module docs"
            ));
        }
        for (name, first, count) in long_functions(&text) {
            found.push(format!("{rel}:{first}: fn {name} is {count} lines"));
        }
    }
    found
}

#[test]
fn no_file_of_src_is_over_300_lines_without_a_reason_and_no_function_over_100() {
    let found = oversized(&src());
    assert!(
        found.is_empty(),
        "split by concern (or say why in the module docs: \"over 300 lines\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_file_of_the_mock_server_is_over_300_lines_without_a_reason_and_no_function_over_100() {
    let found = oversized(&mock_src());
    assert!(
        found.is_empty(),
        "split by concern (or say why in the module docs: \"over 300 lines\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_size_check_counts_only_real_braces_and_reads_the_reason() {
    let body = "    let x = 1;\n".repeat(FN_LIMIT);
    let tricky = concat!(
        "    let s = \"}}}\"; let r = r#\"}\"#; let c = '}'; let d = '\\'';\n",
        "    // }\n    /* } /* } */ } */\n    let l: &'static str = \"{\";\n",
    );
    let long = format!("fn long<'a>(x: &'a str) {{\n{tricky}{body}}}\n");
    let short = format!("fn short() {{\n{tricky}}}\nfn decl();\n");
    let found = long_functions(&format!("{short}{long}"));
    assert_eq!(found.len(), 1, "{found:?}");
    // `short` takes lines 1-6, `decl` line 7; `long` is its line, 4 tricky ones, the body and
    // its closing brace.
    assert_eq!((found[0].0.as_str(), found[0].1), ("long", 8));
    assert_eq!(found[0].2, 1 + 4 + FN_LIMIT + 1);

    let dir = tempfile::tempdir().expect("a temporary directory");
    let filler = "// a line\n".repeat(FILE_LIMIT);
    fs::write(
        dir.path().join("quiet.rs"),
        format!("//! A file.\n{filler}"),
    )
    .expect("write");
    fs::write(
        dir.path().join("told.rs"),
        format!("//! Over 300 lines: one table.\n{filler}"),
    )
    .expect("write");
    let found = oversized(dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("quiet.rs: 301 lines"), "{found:?}");
}

/// Every path docs/ARCHITECTURE.md names (in backticks, under the repository's top folders)
/// exists: the map stays true when a module moves.
#[test]
fn every_path_the_architecture_map_names_exists() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let map = fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("the map");
    let tops = [
        "src/",
        "cli/",
        "tests/",
        "scripts/",
        "benches/",
        "examples/",
        "mock-server/",
        "conformance/",
        "fuzz/",
        "docs/",
    ];
    let named: Vec<&str> = map
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|p| tops.iter().any(|t| p.starts_with(t)) && !p.contains(char::is_whitespace))
        .collect();
    assert!(
        named.len() > 100,
        "the map names too few paths: {}",
        named.len()
    );
    let missing: Vec<&&str> = named
        .iter()
        .filter(|p| !root.join(p.trim_end_matches('/')).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "named by docs/ARCHITECTURE.md, not found: {missing:?}"
    );
}
