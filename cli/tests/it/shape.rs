//! The shape of the sources (issues 18 and 41), checked in `cargo test` so that a change that
//! breaks it fails the build's tests. Every crate of the workspace is covered: the members of
//! the root `Cargo.toml`, each from its source roots (`src/lib.rs`, `src/main.rs`, `[lib]` and
//! `[[bin]]` paths), so a new member is covered without a change here.
//!
//! - no import circle between the files of a crate;
//! - one module-file convention: a module with children is `foo/mod.rs`, never `foo.rs` beside
//!   a `foo/`;
//! - a file over 300 lines says in its module docs the one concept it holds, and no function is
//!   over 100 lines;
//! - every path docs/ARCHITECTURE.md names exists.
//!
//! Over 300 lines: one concept, the module graph as the compiler sees it (read here, used by
//! `layers.rs` too), with the rules read from it and their fixtures.
//!
//! The module graph: a crate's files are those its root declares (`mod a;`, and so on down),
//! `#[cfg(test)]` items and test files left out. A file depends on the file that defines what
//! it names: through a `use` anywhere in it (at the top, in a function, in a block), or through
//! a path written in its code (`crate::a::b::f()`, `super::x::y`, `super::super::x`,
//! `self::x`, or `x::y` from a child module or a name a `use` binds), comments and strings
//! blanked first.
//! A name a module re-exports (`pub use`, globs included) is followed to the file that defines
//! it, and a file's own `pub use` lines are not its dependencies. Between a module and its own
//! children only `use` lines count: in code, a parent names its children's parts and a child
//! its parent's (`super::X`, the type whose `impl` it holds) as one module ([`nested`]). A
//! circle is a strongly connected component of more than one file.
//!
//! `cargo test -p mcp-resilient-cli --test it -- shape --nocapture` prints the circles, each
//! edge with the names that tie it; `MCP_SHAPE_FILE=src/a/b.rs` prints one file's edges too.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    fs,
    path::{Path, PathBuf},
};

/// The workspace's root directory.
pub(crate) fn workspace() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).to_path_buf()
}

/// A module path (`["supervisor", "actor"]`) → its file, relative to the workspace.
pub(crate) type Modules = BTreeMap<Vec<String>, String>;

/// A file → each file it depends on → the names it takes from it.
pub(crate) type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The module graph of one crate, or of the whole workspace.
#[derive(Default)]
pub(crate) struct Graph {
    /// Each crate, by its root file (`src/lib.rs`, `cli/src/main.rs`) → its modules.
    pub(crate) crates: BTreeMap<String, Modules>,
    pub(crate) edges: Edges,
}

/// The quoted strings of `key = […]` or `key = "…"` in the `section`s (`[workspace]`,
/// `[[bin]]`) of a Cargo.toml.
fn toml_strings(text: &str, section: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut current, mut value, mut open) = (String::new(), String::new(), false);
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if !open && line.starts_with('[') {
            current = line.to_owned();
            continue;
        }
        if !open && current == section {
            let Some((name, rest)) = line.split_once('=') else {
                continue;
            };
            if name.trim() != key {
                continue;
            }
            (value, open) = (rest.to_owned(), true);
        } else if open {
            value.push_str(line);
        }
        if open && (!value.trim_start().starts_with('[') || value.contains(']')) {
            out.extend(value.split('"').skip(1).step_by(2).map(str::to_owned));
            (value, open) = (String::new(), false);
        }
    }
    out
}

/// `rel` under the member directory `member`, relative to the workspace (`src/lib.rs`,
/// `cli/src/main.rs`).
fn under(member: &str, rel: &str) -> String {
    let member = member.trim_end_matches('/');
    if member == "." || member.is_empty() {
        rel.to_owned()
    } else {
        format!("{member}/{rel}")
    }
}

/// The root files of a member's crates: its library, then its binaries.
fn source_roots(ws: &Path, member: &str) -> Vec<String> {
    let manifest = fs::read_to_string(ws.join(under(member, "Cargo.toml"))).unwrap_or_default();
    let exists = |rel: &str| ws.join(under(member, rel)).is_file();
    let mut roots: Vec<String> = toml_strings(&manifest, "[lib]", "path");
    if roots.is_empty() && exists("src/lib.rs") {
        roots.push("src/lib.rs".to_owned());
    }
    roots.extend(toml_strings(&manifest, "[[bin]]", "path"));
    if exists("src/main.rs") {
        roots.push("src/main.rs".to_owned());
    }
    if let Ok(bins) = fs::read_dir(ws.join(under(member, "src/bin"))) {
        let mut bins: Vec<String> = bins
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".rs"))
            .map(|name| format!("src/bin/{name}"))
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    let mut seen = BTreeSet::new();
    roots
        .into_iter()
        .map(|rel| under(member, rel.trim_start_matches("./")))
        .filter(|rel| seen.insert(rel.clone()))
        .collect()
}

/// Every crate root of the workspace at `ws`, from the `[workspace] members` of its Cargo.toml.
pub(crate) fn crate_roots(ws: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(ws.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    toml_strings(&manifest, "[workspace]", "members")
        .iter()
        .flat_map(|member| source_roots(ws, member))
        .collect()
}

fn is_test(rel: &str) -> bool {
    rel.ends_with("tests.rs") || rel.contains("/tests/")
}

fn ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Spaces over `from..to` of `out`, newlines kept.
fn blank_range(out: &mut [u8], from: usize, to: usize) {
    let to = to.min(out.len());
    for b in &mut out[from.min(to)..to] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// Where the item that starts at `at` ends: after its `;`, or after the brace that closes its
/// body (parentheses and brackets before it skipped: `[u8; 4]`, attributes).
fn item_end(bytes: &[u8], at: usize) -> usize {
    let mut depth = 0i32;
    for i in at..bytes.len() {
        match bytes[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => return i + 1,
            b'{' if depth == 0 => {
                let mut braces = 0;
                for (j, &b) in bytes.iter().enumerate().skip(i) {
                    match b {
                        b'{' => braces += 1,
                        b'}' => braces -= 1,
                        _ => {}
                    }
                    if braces == 0 {
                        return j + 1;
                    }
                }
                return bytes.len();
            }
            _ => {}
        }
    }
    bytes.len()
}

/// Blanked code (see [`blank`]) without its `#[cfg(test)]` items.
fn without_tests(code: &str) -> String {
    const TEST: &str = "#[cfg(test)]";
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(n) = code[from..].find(TEST) {
        let start = from + n;
        let end = item_end(code.as_bytes(), start + TEST.len());
        blank_range(&mut out, start, end);
        from = end;
    }
    String::from_utf8(out).expect("spaces for ASCII")
}

/// A file's code as the graph reads it: comments, strings and test items blanked.
fn code_of(text: &str) -> String {
    without_tests(&blank(text))
}

/// The `ident` at `at` of `code`, if one starts there.
fn ident_at(code: &str, at: usize) -> Option<&str> {
    let bytes = code.as_bytes();
    if !bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return None;
    }
    let len = bytes[at..].iter().take_while(|&&b| ident(b)).count();
    Some(&code[at..at + len])
}

/// Where each whole word `word` of `code` starts.
fn words<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = code.as_bytes();
    code.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| {
            (at == 0 || !ident(bytes[at - 1]) && bytes[at - 1] != b'$')
                && !bytes.get(at + word.len()).is_some_and(|&b| ident(b))
        })
}

/// The modules a file declares with `mod name;` (a body in braces is no file of its own).
fn declared_modules(code: &str) -> Vec<String> {
    words(code, "mod")
        .filter_map(|at| {
            let rest = &code[at + 3..];
            let name = ident_at(rest, rest.len() - rest.trim_start().len())?;
            let after = rest.trim_start()[name.len()..].trim_start();
            after.starts_with(';').then(|| name.to_owned())
        })
        .collect()
}

/// One crate's modules, from its root file down its `mod` declarations (`#[cfg(test)]` ones
/// left out).
fn crate_modules(ws: &Path, root: &str) -> Modules {
    let mut out = Modules::new();
    let mut stack = vec![(Vec::<String>::new(), root.to_owned())];
    while let Some((module, file)) = stack.pop() {
        let Ok(text) = fs::read_to_string(ws.join(&file)) else {
            continue;
        };
        let (dir, stem) = file.rsplit_once('/').unwrap_or(("", file.as_str()));
        // A crate root's and a `mod.rs`'s children sit beside it; `a.rs`'s in `a/`.
        let dir = if module.is_empty() || stem == "mod.rs" {
            dir.to_owned()
        } else {
            under(dir, stem.trim_end_matches(".rs"))
        };
        for name in declared_modules(&code_of(&text)) {
            let flat = under(&dir, &format!("{name}.rs"));
            let nested = under(&dir, &format!("{name}/mod.rs"));
            let child = if ws.join(&flat).is_file() {
                flat
            } else {
                nested
            };
            let mut path = module.clone();
            path.push(name);
            stack.push((path, child));
        }
        out.insert(module, file);
    }
    out
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

/// One path of a `use` declaration.
struct Use {
    /// `pub use`, `pub(crate) use`…: a re-export.
    public: bool,
    /// `["super", "a", "B"]`; a glob ends in `*`.
    path: Vec<String>,
    /// The name it binds (`B`, its alias, or the module of `a::{self}`).
    name: String,
}

/// `a :: b` → `["a", "b"]`.
fn segments(path: &str) -> Vec<String> {
    path.split("::").map(|s| s.trim().to_owned()).collect()
}

/// Every `use` declaration of `code` (at the top or nested), and `code` with them blanked.
fn uses(code: &str) -> (Vec<Use>, String) {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut rest = bytes.to_vec();
    for at in words(code, "use") {
        let after = &code[at + 3..];
        let path_start = after.trim_start();
        // `use<'a>` (precise capturing) is no declaration.
        if !after.starts_with(char::is_whitespace)
            || !path_start
                .starts_with(|c: char| c.is_alphabetic() || c == '_' || c == ':' || c == '{')
        {
            continue;
        }
        let Some(end) = after.find(';').map(|n| at + 3 + n) else {
            break;
        };
        // `pub`, `pub(crate)`, `pub(in a::b)` before it.
        let mut start = at;
        let head = code[..at].trim_end();
        let head = match head.strip_suffix(')') {
            Some(h) => h.rfind('(').map_or(head, |open| h[..open].trim_end()),
            None => head,
        };
        let public = head.ends_with("pub")
            && !head[..head.len() - 3]
                .bytes()
                .next_back()
                .is_some_and(ident);
        if public {
            start = head.len() - 3;
        }
        let statement = code[at + 3..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for path in expand(&statement) {
            let (path, alias) = match path.split_once(" as ") {
                Some((path, alias)) => (path.to_owned(), Some(alias.trim().to_owned())),
                None => (path, None),
            };
            let mut path = segments(&path);
            if path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let name = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
            out.push(Use { public, path, name });
        }
        blank_range(&mut rest, start, end + 1);
    }
    (out, String::from_utf8(rest).expect("spaces for ASCII"))
}

/// The paths of two segments or more written in `code` (`crate::a::f`, `super::x`, `http::X`),
/// each from its first segment.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = i == 0 || !(ident(bytes[i - 1]) || b"$:.'#".contains(&bytes[i - 1]));
        let Some(first) = ident_at(code, i).filter(|_| starts) else {
            i += 1;
            continue;
        };
        let mut path = vec![first.to_owned()];
        let mut end = i + first.len();
        loop {
            let rest = &code[end..];
            let Some(tail) = rest.trim_start().strip_prefix("::") else {
                break;
            };
            let skip = tail.len() - tail.trim_start().len();
            let Some(next) = ident_at(tail, skip) else {
                break;
            };
            path.push(next.to_owned());
            end += rest.len() - tail.len() + skip + next.len();
        }
        if path.len() > 1 {
            out.push(path);
        }
        i = end;
    }
    out
}

/// One crate's modules and what its files bind, for resolving the paths they write.
struct Resolver<'a> {
    modules: &'a Modules,
    /// `(file, name)` → the absolute path a `use` of that file binds the name to.
    bound: HashMap<(String, String), Vec<String>>,
    /// The `(file, name)`s of `bound` that a `pub use` binds: what a glob can take.
    exported: BTreeSet<(String, String)>,
    /// A file → the modules its `use …::*` lines take every name of.
    globs: HashMap<String, Vec<Vec<String>>>,
    /// A file → its code, blanked.
    code: HashMap<String, String>,
}

impl Resolver<'_> {
    /// `path` as written in the module `at` (file `file`), made absolute; `None` for another
    /// crate's, a local name's, or a type's own (`Self::new`).
    fn absolute(&self, at: &[String], file: &str, path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        let (mut base, mut rest) = match first.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (at.to_vec(), &path[1..]),
            "super" => (at.to_vec(), path),
            _ => {
                let mut child = at.to_vec();
                child.push(first.clone());
                let bound = self.bound.get(&(file.to_owned(), first.clone()));
                if self.modules.contains_key(&child) {
                    (at.to_vec(), path)
                } else {
                    (bound?.clone(), &path[1..])
                }
            }
        };
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// Whether `file` defines an item `name` (or re-exports it with a `pub use`).
    fn defines(&self, file: &str, name: &str) -> bool {
        if self.exported.contains(&(file.to_owned(), name.to_owned())) {
            return true;
        }
        let code = &self.code[file];
        let kinds = [
            "fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod",
        ];
        kinds.iter().any(|kind| {
            words(code, kind).any(|at| {
                let rest = &code[at + kind.len()..];
                let rest = rest.trim_start();
                rest.strip_prefix(name)
                    .is_some_and(|after| !after.bytes().next().is_some_and(ident))
            })
        }) || code.contains(&format!("macro_rules! {name}"))
    }

    /// The file that defines what the absolute `path` names, through re-exports.
    fn file_of(&self, path: &[String], depth: usize) -> Option<String> {
        for k in (0..=path.len()).rev() {
            let Some(file) = self.modules.get(&path[..k]) else {
                continue;
            };
            let Some(first) = path.get(k).filter(|f| *f != "*" && depth < 10) else {
                return Some(file.clone());
            };
            let via = match self.bound.get(&(file.clone(), first.clone())) {
                Some(target) => Some(target.clone()),
                None => self.globs.get(file).into_iter().flatten().find_map(|glob| {
                    let mut item = glob.clone();
                    item.push(first.clone());
                    let inner = self.file_of(glob, depth + 1)?;
                    self.defines(&inner, first).then_some(item)
                }),
            };
            return match via {
                Some(mut next) => {
                    next.extend_from_slice(&path[k + 1..]);
                    self.file_of(&next, depth + 1)
                }
                None => Some(file.clone()),
            };
        }
        None
    }
}

/// Whether the module of `file` is inside the module `at`, or `at` inside it. Between a module
/// and its own children, a path written in code is one module's business: the parent names its
/// children's parts (`child::X`, `X::new` of a child's `X` it re-exports) as it declares them,
/// and a child its parent's (`super::X`, the type whose `impl` it holds). Only their `use`
/// lines count there.
fn nested(modules: &Modules, at: &[String], file: &str) -> bool {
    modules
        .iter()
        .find(|(_, f)| *f == file)
        .is_some_and(|(other, _)| other.starts_with(at) || at.starts_with(other))
}

/// The module graph of the crate whose root file is `root` (relative to `ws`).
pub(crate) fn read_crate(ws: &Path, root: &str) -> Graph {
    let modules = crate_modules(ws, root);
    let mut resolver = Resolver {
        modules: &modules,
        bound: HashMap::new(),
        exported: BTreeSet::new(),
        globs: HashMap::new(),
        code: HashMap::new(),
    };
    let mut declarations = Vec::new();
    for (at, file) in &modules {
        let text = fs::read_to_string(ws.join(file)).expect("read a file");
        let (found, rest) = uses(&code_of(&text));
        for u in &found {
            let Some(mut target) = resolver.absolute(at, file, &u.path) else {
                continue;
            };
            if u.name == "*" {
                target.pop();
                resolver.globs.entry(file.clone()).or_default().push(target);
            } else if u.name != "_" {
                if u.public {
                    resolver.exported.insert((file.clone(), u.name.clone()));
                }
                resolver
                    .bound
                    .insert((file.clone(), u.name.clone()), target);
            }
        }
        resolver.code.insert(file.clone(), rest.clone());
        declarations.push((at, file, found, rest));
    }
    let mut edges = Edges::new();
    for (at, file, found, rest) in declarations {
        if is_test(file) {
            continue;
        }
        let written = found
            .into_iter()
            .filter(|u| !u.public)
            .map(|u| (u.path, false))
            .chain(inline_paths(&rest).into_iter().map(|path| (path, true)));
        for (path, inline) in written {
            let Some(target) = resolver.absolute(at, file, &path) else {
                continue;
            };
            if let Some(to) = resolver.file_of(&target, 0)
                && &to != file
                && !(inline && nested(&modules, at, &to))
            {
                let name = target.last().cloned().unwrap_or_default();
                let names = edges.entry(file.clone()).or_default();
                names.entry(to).or_default().insert(name);
            }
        }
    }
    Graph {
        crates: BTreeMap::from([(root.to_owned(), modules)]),
        edges,
    }
}

/// The module graph of every crate of the workspace at `ws`.
pub(crate) fn read_workspace(ws: &Path) -> Graph {
    let mut graph = Graph::default();
    for root in crate_roots(ws) {
        let one = read_crate(ws, &root);
        graph.crates.extend(one.crates);
        for (from, to) in one.edges {
            let into = graph.edges.entry(from).or_default();
            for (file, names) in to {
                into.entry(file).or_default().extend(names);
            }
        }
    }
    graph
}

/// Tarjan's strongly connected components of more than one node.
pub(crate) fn circles(edges: &Edges) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a Edges,
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
        for w in s.edges.get(v).into_iter().flat_map(BTreeMap::keys) {
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
    state.found.sort();
    state.found
}

/// Each circle, each edge inside it with the names that tie it, as lines to print.
fn show(edges: &Edges, found: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (n, circle) in found.iter().enumerate() {
        out.push_str(&format!(
            "circle {}: {} files: {}\n",
            n + 1,
            circle.len(),
            circle.join(", ")
        ));
        for from in circle {
            for (to, names) in &edges[from] {
                if circle.contains(to) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    out.push_str(&format!("  {from} -> {to}: {}\n", names.join(", ")));
                }
            }
        }
    }
    out
}

#[test]
fn no_import_circle_between_the_files_of_any_crate() {
    let graph = read_workspace(&workspace());
    for root in ["src/lib.rs", "cli/src/main.rs", "mock-server/src/lib.rs"] {
        assert!(graph.crates.contains_key(root), "no crate at {root}");
    }
    for (root, modules) in &graph.crates {
        println!("{root}: {} files", modules.len());
    }
    assert!(
        graph.edges.len() > 200,
        "the check sees too few files with imports: {}",
        graph.edges.len()
    );
    if let Ok(file) = std::env::var("MCP_SHAPE_FILE") {
        for (to, names) in graph.edges.get(&file).into_iter().flatten() {
            println!("{file} -> {to}: {names:?}");
        }
    }
    let found = circles(&graph.edges);
    let shown = show(&graph.edges, &found);
    println!(
        "{} crates, {} files with imports, {} circles\n{shown}",
        graph.crates.len(),
        graph.edges.len(),
        found.len()
    );
    assert!(
        found.is_empty(),
        "import circles (move the shared piece down):\n{shown}"
    );
}

/// `files` (`path`, text) written under a new temporary directory.
fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (rel, text) in files {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
    dir
}

/// The files of `edges` that `from` depends on.
fn targets<'a>(edges: &'a Edges, from: &str) -> Vec<&'a str> {
    edges
        .get(from)
        .into_iter()
        .flat_map(BTreeMap::keys)
        .map(String::as_str)
        .collect()
}

#[test]
fn the_check_finds_a_circle_and_follows_re_exports() {
    let dir = fixture(&[
        (
            "src/lib.rs",
            "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use c::Thing;\n",
        ),
        ("src/a.rs", "use crate::b::{B, other::{X}};\n"),
        (
            "src/b.rs",
            "use super::a::A;\npub(crate) use crate::c::Thing as B;\n",
        ),
        ("src/c.rs", "pub struct Thing;\npub(crate) fn made() {}\n"),
        // Through the root's re-export: c.rs, not lib.rs.
        ("src/d.rs", "use crate::Thing;\n"),
        // Through a glob re-export: `crate::e::made` is c.rs's.
        (
            "src/e.rs",
            "pub(crate) use crate::c::*;\nfn f() { crate::e::made(); }\n",
        ),
    ]);
    let edges = read_crate(dir.path(), "src/lib.rs").edges;
    assert_eq!(
        targets(&edges, "src/a.rs"),
        ["src/b.rs", "src/c.rs"],
        "B is c.rs's, through b.rs's re-export"
    );
    assert_eq!(targets(&edges, "src/d.rs"), ["src/c.rs"]);
    assert_eq!(targets(&edges, "src/e.rs"), ["src/c.rs"]);
    assert!(
        !edges.contains_key("src/lib.rs"),
        "re-exports are not dependencies"
    );
    assert_eq!(circles(&edges), [vec!["src/a.rs", "src/b.rs"]]);
}

#[test]
fn the_check_finds_a_circle_tied_only_by_a_path_written_in_code() {
    let dir = fixture(&[
        (
            "src/lib.rs",
            "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod tests;\n",
        ),
        (
            "src/a.rs",
            "//! Names crate::c::C in its docs only.\npub fn fa() -> u8 {\n    let _ = \"crate::c::C\";\n    crate::b::fb()\n}\n",
        ),
        (
            "src/b.rs",
            "pub fn fb() -> u8 {\n    if true {\n        use crate::c::C;\n        let _ = C;\n    }\n    let _ = crate :: a :: fa;\n    1\n}\n#[cfg(test)]\nmod tests {\n    use crate::c::Tested;\n}\n",
        ),
        ("src/c.rs", "pub struct C;\npub struct Tested;\n"),
        ("src/tests.rs", "use crate::a::fa;\n"),
    ]);
    let edges = read_crate(dir.path(), "src/lib.rs").edges;
    assert_eq!(targets(&edges, "src/a.rs"), ["src/b.rs"]);
    assert_eq!(targets(&edges, "src/b.rs"), ["src/a.rs", "src/c.rs"]);
    assert_eq!(
        edges["src/b.rs"]["src/c.rs"],
        BTreeSet::from(["C".to_owned()])
    );
    assert!(!edges.contains_key("src/tests.rs"), "test files stay out");
    assert_eq!(circles(&edges), [vec!["src/a.rs", "src/b.rs"]]);
}

#[test]
fn the_check_finds_a_circle_tied_by_a_super_chain() {
    let dir = fixture(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        // A parent naming its own child in code: one module's business.
        (
            "src/a/mod.rs",
            "mod deep;\npub fn fa() { self::deep::fd(); }\n",
        ),
        ("src/a/deep.rs", "pub fn fd() { super::super::b::fb(); }\n"),
        // `self::reach`: through b.rs's own re-export, to a/deep.rs.
        (
            "src/b.rs",
            "pub use super::a::deep::fd as reach;\npub fn fb() { let _ = self::reach; }\n",
        ),
    ]);
    let edges = read_crate(dir.path(), "src/lib.rs").edges;
    assert!(!edges.contains_key("src/a/mod.rs"), "{edges:?}");
    assert_eq!(targets(&edges, "src/a/deep.rs"), ["src/b.rs"]);
    assert_eq!(targets(&edges, "src/b.rs"), ["src/a/deep.rs"]);
    assert_eq!(circles(&edges), [vec!["src/a/deep.rs", "src/b.rs"]]);
}

#[test]
fn the_check_reads_every_member_and_finds_a_circle_in_a_bin_crate() {
    let dir = fixture(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\n    \".\", # the library\n    \"app\",\n]\n\n[package]\nname = \"lib\"\n",
        ),
        ("src/lib.rs", "pub mod a;\n"),
        ("src/a.rs", "pub fn fa() {}\n"),
        (
            "app/Cargo.toml",
            "[package]\nname = \"app\"\n\n[[bin]]\nname = \"app\"\npath = \"src/main.rs\"\n",
        ),
        (
            "app/src/main.rs",
            "mod args;\nmod commands;\nfn main() { lib::a::fa(); }\n",
        ),
        ("app/src/args/mod.rs", "mod parse;\npub use parse::Args;\n"),
        (
            "app/src/args/parse.rs",
            "pub struct Args;\npub fn check() { super::super::commands::exit(); }\n",
        ),
        (
            "app/src/commands.rs",
            "pub fn exit() {}\nfn run() { let _ = crate::args::Args; }\n",
        ),
    ]);
    assert_eq!(crate_roots(dir.path()), ["src/lib.rs", "app/src/main.rs"]);
    let graph = read_workspace(dir.path());
    assert_eq!(
        graph.crates["app/src/main.rs"].values().collect::<Vec<_>>(),
        [
            "app/src/main.rs",
            "app/src/args/mod.rs",
            "app/src/args/parse.rs",
            "app/src/commands.rs"
        ]
    );
    assert_eq!(
        circles(&graph.edges),
        [vec!["app/src/args/parse.rs", "app/src/commands.rs"]]
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

/// The directories of the workspace's crates (`src`, `cli/src`…): where their roots sit.
fn source_dirs(ws: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = crate_roots(ws)
        .iter()
        .map(|root| root.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned())
        .collect();
    dirs.sort();
    dirs.dedup_by(|inner, outer| inner.starts_with(&format!("{outer}/")));
    dirs
}

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
    let ws = workspace();
    let dirs = source_dirs(&ws);
    assert!(dirs.len() >= 5, "too few crates: {dirs:?}");
    let pairs: Vec<String> = dirs
        .iter()
        .flat_map(|root| {
            file_and_directory_pairs(&ws.join(root))
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

/// The most lines a file may have without naming, in its module docs, the one concept it holds.
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

/// Whether the module docs of `text` (`//!` lines, which only the top of a file can hold) say
/// why it is over [`FILE_LIMIT`] lines: "over 300 lines: one state machine and its rules".
fn gives_a_reason(text: &str) -> bool {
    text.lines()
        .filter(|line| line.starts_with("//!"))
        .any(|line| line.to_lowercase().contains("over 300 lines"))
}

/// Every file of `root` over [`FILE_LIMIT`] lines that does not name its one concept, and every
/// function over [`FN_LIMIT`], as lines to print.
fn oversized(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for rel in rs_files(root) {
        let text = fs::read_to_string(root.join(&rel)).expect("read a file");
        let lines = text.lines().count();
        if lines > FILE_LIMIT && !gives_a_reason(&text) {
            found.push(format!(
                "{rel}: {lines} lines: is it one concept? If so, begin it with module docs that \
                 name it (\"//! … Over 300 lines: …\"); if not, split it by concern"
            ));
        }
        for (name, first, count) in long_functions(&text) {
            found.push(format!(
                "{rel}:{first}: fn {name} is {count} lines: split it (a step, a case, a table)"
            ));
        }
    }
    found
}

/// A prompt for review: a long file should hold one concept, and say which.
#[test]
fn no_file_of_any_crate_is_over_300_lines_without_naming_its_concept_nor_a_function_over_100() {
    let ws = workspace();
    let found: Vec<String> = source_dirs(&ws)
        .iter()
        .flat_map(|dir| {
            oversized(&ws.join(dir))
                .into_iter()
                .map(move |line| format!("{dir}/{line}"))
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
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
    let root = workspace();
    let map = fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("the map");
    let tops = [
        "src/",
        "gateway/",
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
