//! The module graph of `src/`: every file's imports point down the layers of
//! docs/architecture.md ("Layers"), and no files import each other in a loop.
//!
//! Reads the sources only (no build of vkcl is needed): every `use` item and every path that
//! starts with `crate::`, `super::` or `self::` outside comments and string literals, resolved
//! to the file that defines the module it reaches. An import of an item re-exported by a
//! `mod.rs` is an arrow to that `mod.rs` (which has its own arrow to the defining file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first, and the layers each may import. A file's layer is the first folder
/// under `src/`; `src/lib.rs` is the crate root, which may import every layer and which no
/// layer imports.
const LAYERS: &[(&str, &[&str])] = &[
    ("api", &["core", "compiler", "util"]),
    ("core", &["backend", "compiler", "util"]),
    ("backend", &["util"]),
    ("compiler", &["util"]),
    ("util", &[]),
];

/// The device crates: named only by files of `backend/`.
const DEVICE_CRATES: &[&str] = &["ash", "gpu_allocator", "cudarc", "nvml_wrapper"];

/// Arrows that break the rules today: (file, the layer or device crate it names). `api/device.rs`
/// names the back end's `SplitMethod` (re-exported by `core/device.rs`); `core/device.rs` and
/// `core/kernel.rs` read driver IDs and device types from `ash`. An entry that no longer holds
/// fails the test too, so this list only shrinks.
const PENDING: &[(&str, &str)] = &[
    ("src/api/device.rs", "backend"),
    ("src/core/device.rs", "ash"),
    ("src/core/kernel.rs", "ash"),
];

/// Import loops of today, each as its sorted files, held to the same rule as [`PENDING`]:
/// module folders whose `mod.rs` holds helpers that its own files use.
const PENDING_LOOPS: &[&[&str]] = &[
    &["src/backend/cuda/green.rs", "src/backend/cuda/mod.rs"],
    &[
        "src/compiler/lower/memory/flat.rs",
        "src/compiler/lower/memory/mod.rs",
    ],
];

/// One module file: its path under `src/` and its module path (`["core", "object"]`).
struct ModFile {
    rel: String,
    module: Vec<String>,
    text: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/`: `lib.rs` is `[]`, `a/mod.rs` is `[a]`, `a/b.rs`
/// is `[a, b]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// `text` with comments, string literals and character literals replaced by spaces (lengths
/// and line breaks kept, so positions still count).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(c.len());
    let blank = |out: &mut Vec<char>, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.extend([' ', ' ']);
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.extend([' ', ' ']);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident(c[i - 1]))
        {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &c[i..j.min(c.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}'); otherwise a lifetime, kept.
            let end = if next == Some('\\') {
                (i + 2..c.len()).find(|&j| c[j] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.extend(std::iter::repeat_n(' ', e + 1 - i));
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out.into_iter().collect()
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// A word at `i` of `c` (not part of a longer identifier, not a macro's `$crate`).
fn word_at(c: &[char], i: usize, w: &str) -> bool {
    let n = w.chars().count();
    i + n <= c.len()
        && c[i..i + n].iter().copied().eq(w.chars())
        && (i == 0 || !(is_ident(c[i - 1]) || c[i - 1] == '$'))
        && c.get(i + n).is_none_or(|&ch| !is_ident(ch))
}

/// The inline modules of a stripped file (`mod name { ... }`): (start, end, name).
fn inline_modules(c: &[char]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for i in 0..c.len() {
        if !word_at(c, i, "mod") {
            continue;
        }
        let mut j = i + 3;
        while j < c.len() && c[j].is_whitespace() {
            j += 1;
        }
        let start = j;
        while j < c.len() && is_ident(c[j]) {
            j += 1;
        }
        let name: String = c[start..j].iter().collect();
        while j < c.len() && c[j].is_whitespace() {
            j += 1;
        }
        if name.is_empty() || c.get(j) != Some(&'{') {
            continue;
        }
        let mut depth = 0;
        let mut k = j;
        while k < c.len() {
            match c[k] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        out.push((j, k, name));
    }
    out
}

/// Expands a `use` tree (`a::{b, c::{d as e}}`) into its paths, each a list of segments with
/// the name it binds (`e` for `d as e`).
fn expand_use(tree: &str) -> Vec<(Vec<String>, String)> {
    fn split_top(s: &str) -> Vec<&str> {
        let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
        for (i, ch) in s.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts
    }
    fn go(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head = tree[..open].trim().trim_end_matches("::");
            let mut p = prefix.to_vec();
            p.extend(segments(head));
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            for part in split_top(inner) {
                go(&p, part, out);
            }
        } else {
            let mut halves = tree.split(" as ");
            let path = halves.next().unwrap_or(tree);
            let mut p = prefix.to_vec();
            p.extend(segments(path));
            let bound = match halves.next() {
                Some(alias) => alias.trim().to_string(),
                None => p.last().cloned().unwrap_or_default(),
            };
            out.push((p, bound));
        }
    }
    fn segments(s: &str) -> Vec<String> {
        s.split("::")
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    }
    let mut out = Vec::new();
    go(&[], &tree.replace(char::is_whitespace, " "), &mut out);
    out
}

/// A path that a file names.
struct Named {
    /// Where in the file.
    pos: usize,
    path: Vec<String>,
    /// For a `pub use` (of any visibility but private): the name it re-exports.
    reexport: Option<String>,
}

/// Every path a stripped file names: its `use` trees expanded, and the `crate::`, `super::`
/// and `self::` paths in the code.
fn named_paths(c: &mut [char]) -> Vec<Named> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if word_at(c, i, "use") {
            if let Some(end) = (i..c.len()).find(|&j| c[j] == ';') {
                let tree: String = c[i + 3..end].iter().collect();
                let tree = tree.trim_start_matches(|ch: char| ch.is_whitespace() || ch == ':');
                let before: String = c[i.saturating_sub(16)..i].iter().collect();
                let before = before.trim_end();
                let public = before.ends_with("pub") || before.ends_with(')');
                for (path, bound) in expand_use(tree) {
                    out.push(Named {
                        pos: i,
                        path,
                        reexport: public.then_some(bound),
                    });
                }
                // Blanked, so that the scan below does not read it again.
                for ch in &mut c[i..end] {
                    if *ch != '\n' {
                        *ch = ' ';
                    }
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    for i in 0..c.len() {
        if !["crate", "super", "self"].iter().any(|w| word_at(c, i, w)) {
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < c.len() && is_ident(c[j]) {
                j += 1;
            }
            if j == start {
                break;
            }
            segs.push(c[start..j].iter().collect::<String>());
            if c.get(j) == Some(&':') && c.get(j + 1) == Some(&':') {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            out.push(Named {
                pos: i,
                path: segs,
                reexport: None,
            });
        }
    }
    out
}

/// Reads every module file under `src/`.
fn read_tree() -> Vec<ModFile> {
    let src = src_dir();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            ModFile {
                module: module_of(&rel),
                text: std::fs::read_to_string(p).unwrap(),
                rel,
            }
        })
        .collect()
}

/// One file, parsed: the paths it names and its inline modules.
struct Parsed {
    named: Vec<Named>,
    inline: Vec<(usize, usize, String)>,
}

/// Resolves the paths of a tree to files.
struct Resolver<'a> {
    files: &'a [ModFile],
    parsed: Vec<Parsed>,
    by_module: BTreeMap<Vec<String>, usize>,
}

impl<'a> Resolver<'a> {
    fn new(files: &'a [ModFile]) -> Self {
        let parsed = files
            .iter()
            .map(|f| {
                let mut c: Vec<char> = strip(&f.text).chars().collect();
                let inline = inline_modules(&c);
                Parsed {
                    named: named_paths(&mut c),
                    inline,
                }
            })
            .collect();
        let by_module = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        Resolver {
            files,
            parsed,
            by_module,
        }
    }

    /// The file that `path`, named at `pos` of file `f`, reaches: the deepest module file on
    /// it, or, where the rest of the path is an item that file re-exports (`pub use`), the
    /// file the re-export reaches. None for an outside crate or an item in scope.
    fn resolve(&self, f: usize, pos: usize, path: &[String], depth: usize) -> Option<usize> {
        // The module the path is named in (a file's `mod tests { .. }` is one deeper).
        let mut here = self.files[f].module.clone();
        for (s, e, name) in &self.parsed[f].inline {
            if *s < pos && pos < *e {
                here.push(name.clone());
            }
        }
        let (mut m, mut rest): (Vec<String>, &[String]) = match path[0].as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (here.clone(), &path[1..]),
            "super" => (here[..here.len().saturating_sub(1)].to_vec(), &path[1..]),
            first => {
                // A child module named without `self::` (uniform paths); else an outside
                // crate or an item in scope, no arrow.
                let mut child = here.clone();
                child.push(first.to_string());
                if !self.by_module.contains_key(&child) {
                    return None;
                }
                (here.clone(), path)
            }
        };
        while let Some(s) = rest.first() {
            if s == "super" {
                m.pop();
            } else if s != "self" {
                let mut next = m.clone();
                next.push(s.clone());
                if !self.by_module.contains_key(&next) {
                    break;
                }
                m = next;
            }
            rest = &rest[1..];
        }
        // A path into an inline module of a file stays in that file.
        while !self.by_module.contains_key(&m) {
            m.pop();
        }
        let target = self.by_module[&m];
        if let (Some(item), true) = (rest.first(), depth < 8) {
            let again = self.parsed[target]
                .named
                .iter()
                .find(|n| n.reexport.as_deref() == Some(item.as_str()));
            if let Some(n) = again {
                if let Some(t) = self.resolve(target, n.pos, &n.path, depth + 1) {
                    return Some(t);
                }
            }
        }
        Some(target)
    }
}

/// The file arrows of the tree: file -> (files it imports, with one named path each).
fn arrows(files: &[ModFile]) -> BTreeMap<String, BTreeMap<String, String>> {
    let r = Resolver::new(files);
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (f, file) in files.iter().enumerate() {
        for n in &r.parsed[f].named {
            let Some(t) = r.resolve(f, n.pos, &n.path, 0) else {
                continue;
            };
            let target = &files[t].rel;
            if *target != file.rel {
                out.entry(file.rel.clone())
                    .or_default()
                    .entry(target.clone())
                    .or_insert_with(|| n.path.join("::"));
            }
        }
    }
    out
}

/// The layer of a file under `src/`: its first folder, or `root` for the crate root.
fn layer(rel: &str) -> &str {
    match rel.split_once('/') {
        Some((first, _)) => first,
        None => "root",
    }
}

/// The loops of the graph (strongly connected components of more than one file).
fn loops(g: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<BTreeSet<String>> {
    // Tarjan's algorithm, iteratively over a sorted node list.
    let mut nodes: BTreeSet<&str> = g.keys().map(String::as_str).collect();
    for t in g.values() {
        nodes.extend(t.keys().map(String::as_str));
    }
    let nodes: Vec<&str> = nodes.into_iter().collect();
    let index_of: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            g.get(*n)
                .map(|t| t.keys().map(|k| index_of[k.as_str()]).collect())
                .unwrap_or_default()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut out) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if *k == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = BTreeSet::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp.insert(nodes[w].to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// Whether a stripped file names the outside crate `name` (`use ash::..`, `ash::vk::..`).
fn names_crate(text: &str, name: &str) -> bool {
    let c: Vec<char> = strip(text).chars().collect();
    (0..c.len()).any(|i| {
        word_at(&c, i, name)
            && (i < 2 || !(c[i - 1] == ':' && c[i - 2] == ':'))
            && c[i + name.len()..]
                .iter()
                .collect::<String>()
                .trim_start()
                .starts_with("::")
    })
}

/// Every broken rule of the tree, one line each.
fn violations(
    files: &[ModFile],
    pending: &[(&str, &str)],
    pending_loops: &[&[&str]],
) -> Vec<String> {
    let g = arrows(files);
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let pending_list = pending;
    let pending: BTreeSet<(&str, &str)> = pending.iter().copied().collect();
    let mut seen_pending = BTreeSet::new();
    let mut out = Vec::new();
    for (from, targets) in &g {
        let lf = layer(from);
        for (to, named) in targets {
            let lt = layer(to);
            if lf == lt || lf == "root" {
                continue;
            }
            let key = (&format!("src/{from}")[..], lt);
            let ok = allowed.get(lf).is_some_and(|a| a.contains(&lt));
            if ok {
                continue;
            }
            if let Some(&p) = pending.iter().find(|p| p.0 == key.0 && p.1 == key.1) {
                seen_pending.insert(p);
                continue;
            }
            out.push(format!(
                "upward or sideways import: src/{from} ({lf}) -> src/{to} ({lt}) via {named}"
            ));
        }
    }
    for f in files {
        if layer(&f.rel) == "backend" {
            continue;
        }
        for krate in DEVICE_CRATES {
            if !names_crate(&f.text, krate) {
                continue;
            }
            let path = format!("src/{}", f.rel);
            if let Some(&p) = pending.iter().find(|p| p.0 == path && p.1 == *krate) {
                seen_pending.insert(p);
                continue;
            }
            out.push(format!("{path} names {krate}, which only backend/ may"));
        }
    }
    let mut seen_loops = BTreeSet::new();
    for comp in loops(&g) {
        let names: Vec<String> = comp.iter().map(|f| format!("src/{f}")).collect();
        if let Some(p) = pending_loops
            .iter()
            .find(|p| p.iter().copied().eq(names.iter().map(String::as_str)))
        {
            seen_loops.insert(*p);
            continue;
        }
        let inside: Vec<String> = comp
            .iter()
            .flat_map(|a| {
                g[a].iter()
                    .filter(|(b, _)| comp.contains(*b))
                    .map(move |(b, named)| format!("src/{a} -> src/{b} ({named})"))
            })
            .collect();
        out.push(format!(
            "import loop of {} files: {}",
            comp.len(),
            inside.join("; ")
        ));
    }
    for p in pending_loops {
        if !seen_loops.contains(p) {
            out.push(format!(
                "PENDING_LOOPS entry {p:?} no longer holds: remove it from tests/layering.rs"
            ));
        }
    }
    for p in pending_list {
        if !seen_pending.contains(p) {
            out.push(format!(
                "PENDING entry {p:?} no longer holds: remove it from tests/layering.rs"
            ));
        }
    }
    out
}

#[test]
fn layers_point_down_and_files_do_not_loop() {
    let files = read_tree();
    assert!(files.len() > 50, "read {} files under src/", files.len());
    let v = violations(&files, PENDING, PENDING_LOOPS);
    assert!(
        v.is_empty(),
        "{} broken layering rule(s) (docs/architecture.md, \"Layers\"):\n  {}",
        v.len(),
        v.join("\n  ")
    );
}

/// The checker itself finds what it must: an upward import, a loop, a device crate outside
/// the backend, and it ignores comments and strings.
#[test]
fn the_checker_sees_what_it_must() {
    let file = |rel: &str, text: &str| ModFile {
        rel: rel.to_string(),
        module: module_of(rel),
        text: text.to_string(),
    };
    let files = vec![
        file("lib.rs", "pub mod util; pub mod core; pub mod api;"),
        file("util/mod.rs", "pub mod a;"),
        file(
            "util/a.rs",
            "// use crate::core::x;\nconst S: &str = \"crate::api::y\";\nfn f() { crate::core::x::g(); }",
        ),
        file("core/mod.rs", "pub mod x; pub mod y;\npub use x::g as h;"),
        file("core/x.rs", "use super::{y::Y};\npub fn g() {}"),
        file("core/y.rs", "use super::x::g;\nuse ash::vk;\n#[cfg(test)] mod tests { use super::*; }"),
        file("api/mod.rs", "use crate::core::x;\nfn f() { crate::core::h(); }"),
    ];
    let g = arrows(&files);
    assert_eq!(
        g["util/a.rs"].keys().collect::<Vec<_>>(),
        ["core/x.rs"],
        "only the path in code counts"
    );
    assert!(g["core/x.rs"].contains_key("core/y.rs"));
    assert!(
        !g.get("core/y.rs").unwrap().contains_key("core/mod.rs"),
        "super:: inside an inline module is the file itself"
    );
    assert_eq!(
        g["api/mod.rs"].keys().collect::<Vec<_>>(),
        ["core/x.rs"],
        "a re-exported item is an arrow to the file that defines it"
    );
    let v = violations(&files, &[], &[]);
    assert!(
        v.iter()
            .any(|l| l.contains("util/a.rs (util) -> src/core/x.rs")),
        "{v:?}"
    );
    assert!(v.iter().any(|l| l.contains("core/y.rs names ash")), "{v:?}");
    assert!(
        v.iter().any(|l| l.starts_with("import loop of 2 files")),
        "{v:?}"
    );
    assert_eq!(v.len(), 3, "{v:?}");
}
