//! The reader behind `tests/layers.rs`: a file's tokens as the compiler
//! sees them (comments dropped, literals emptied), its test items left
//! out wherever they stand, every `crate::`/`super::`/`self::` path made
//! absolute, and the graph of each folder's files with its circles.
//!
//! Decision: a small tokenizer rather than line matching, so a path in a
//! multi-line `use` group, after a `#[cfg(test)]` module or inside a
//! string is read for what it is; and rather than `syn`, so the guard-rail
//! adds no dependency to the package.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_str().unwrap();
    name.ends_with("_tests.rs") || name == "tests.rs"
}

/// A file's module path (`src/service/approvals.rs`: `service::approvals`;
/// `src/web/mod.rs`: `web`); `None` for the binaries.
pub fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_owned())
        .collect();
    let last = parts.pop()?;
    if parts.first().is_some_and(|p| p == "bin") || (parts.is_empty() && last == "main.rs") {
        return None;
    }
    match last.trim_end_matches(".rs") {
        "mod" | "lib" => {}
        stem => parts.push(stem.to_owned()),
    }
    Some(parts)
}

/// The tokens of `text` as the compiler reads them: comments dropped,
/// string and char literals emptied (so a path in a message or a doc is no
/// import), `::` one token, identifiers whole, any other character alone.
fn tokens(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let at = |j: usize| c.get(j).copied().unwrap_or('\0');
        if c[i].is_whitespace() {
            i += 1;
        } else if c[i] == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push("\"\"".to_owned());
        } else if c[i] == '\'' && at(i + 1) == '\\' {
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push("' '".to_owned());
        } else if c[i] == '\'' && at(i + 2) == '\'' {
            i += 3;
            out.push("' '".to_owned());
        } else if c[i] == ':' && at(i + 1) == ':' {
            i += 2;
            out.push("::".to_owned());
        } else if is_ident(c[i]) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // A raw string (r"..", r#".."#, br#".."#), not a raw identifier.
            let hashes = c[i..].iter().take_while(|h| **h == '#').count();
            if (word == "r" || word == "br") && at(i + hashes) == '"' {
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let body: String = c[i + hashes + 1..].iter().collect();
                let len = body.find(&close).unwrap_or(body.len());
                i += hashes + 1 + body[..len].chars().count() + close.chars().count();
                out.push("\"\"".to_owned());
            } else {
                out.push(word);
            }
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

/// `tokens` without the items under `#[cfg(test)]` (a `mod tests { .. }`,
/// a `#[path] mod x;`, a test-only `use` or `fn`): test code may reach
/// anywhere, and everything else in the file is read, wherever it stands.
fn without_test_items(toks: &[String]) -> Vec<String> {
    let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !toks[i..].iter().take(attr.len()).eq(attr.iter()) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += attr.len();
        // Further attributes of the same item.
        while toks.get(i).is_some_and(|t| t == "#") && toks.get(i + 1).is_some_and(|t| t == "[") {
            let mut depth = 0;
            while i < toks.len() {
                match toks[i].as_str() {
                    "[" => depth += 1,
                    "]" => depth -= 1,
                    _ => {}
                }
                i += 1;
                if depth == 0 && toks[i - 1] == "]" {
                    break;
                }
            }
        }
        // The item: up to its `;` or `,`, or the `}` that closes its body.
        let mut depth = 0i32;
        while i < toks.len() {
            match toks[i].as_str() {
                "{" | "(" | "[" => depth += 1,
                "}" | ")" | "]" if depth == 0 => break,
                "}" if depth == 1 => {
                    i += 1;
                    if toks.get(i).is_some_and(|t| t == ";") {
                        i += 1;
                    }
                    break;
                }
                "}" | ")" | "]" => depth -= 1,
                ";" | "," if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The tokens of a file's code outside its test items.
pub fn code_tokens(text: &str) -> Vec<String> {
    without_test_items(&tokens(text))
}

/// Every path that starts at `crate`, `super` or `self` (and, in a `use`,
/// at a bare name), with its groups expanded: `use crate::{a::b, c}` gives
/// `crate::a::b` and `crate::c`; `super::x::f(..)` gives `super::x::f`.
fn paths(toks: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let after_sep = i > 0 && toks[i - 1] == "::";
        let rooted = matches!(toks[i].as_str(), "crate" | "super" | "self")
            && toks.get(i + 1).is_some_and(|t| t == "::");
        let used = i > 0 && toks[i - 1] == "use";
        if !after_sep && (rooted || used) {
            let (trees, next) = use_tree(toks, i);
            found.extend(trees);
            i = next.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// The paths of one use-tree starting at `toks[i]`, and the index after it.
fn use_tree(toks: &[String], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        match toks.get(i).map(String::as_str) {
            Some("{") => {
                let mut all = Vec::new();
                i += 1;
                while toks.get(i).is_some_and(|t| t != "}") {
                    if toks[i] == "," {
                        i += 1;
                        continue;
                    }
                    let (trees, next) = use_tree(toks, i);
                    all.extend(trees.into_iter().map(|t| {
                        let mut p = prefix.clone();
                        p.extend(t.into_iter().filter(|s| s != "self"));
                        p
                    }));
                    i = next.max(i + 1);
                }
                return (all, i + 1);
            }
            Some(t) if t.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                prefix.push(t.to_owned());
                i += 1;
                if toks.get(i).is_some_and(|t| t == "::") {
                    i += 1;
                    continue;
                }
                if toks.get(i).is_some_and(|t| t == "as") {
                    i += 2;
                }
                return (vec![prefix], i);
            }
            Some("*") => return (vec![prefix], i + 1),
            _ => return (vec![prefix], i),
        }
    }
}

/// The module paths a file's code names, made absolute (`super::x` in
/// `service/approvals.rs` is `service::x`), test items left out.
pub fn absolute_paths(module: &[String], is_mod_file: bool, text: &str) -> Vec<Vec<String>> {
    let toks = without_test_items(&tokens(text));
    let mut out = Vec::new();
    for path in paths(&toks) {
        let mut segs = path.into_iter().peekable();
        let mut base: Vec<String> = match segs.peek().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("self" | "super") => module.to_vec(),
            // A bare `use x::..`: a child of a mod.rs; anything else is an
            // outside crate.
            Some(_) if is_mod_file => {
                out.push(module.iter().cloned().chain(segs).collect());
                continue;
            }
            _ => continue,
        };
        // In a file `a/b.rs` (module a::b), `super` is `a`.
        while let Some(seg) = segs.next_if(|s| s == "crate" || s == "super" || s == "self") {
            if seg == "super" {
                base.pop();
            }
        }
        base.extend(segs);
        out.push(base);
    }
    out
}

/// The rooms of `src/` (every folder below it) and, in each, which of its
/// children uses which: a child is a file or a sub-folder, and a use is any
/// path into a sibling (`super::x`, `crate::room::x`, or a name the room's
/// `mod.rs` re-exports from `x`). The room's `mod.rs` is its door, not a
/// child: every child may use it.
pub type Rooms = BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>>;

pub fn rooms(src: &Path) -> Rooms {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| !is_test_file(f));
    let modules: Vec<(Vec<String>, bool, String)> = files
        .iter()
        .filter_map(|f| {
            let module = module_path(src, f)?;
            let is_mod = f.ends_with("mod.rs");
            Some((module, is_mod, std::fs::read_to_string(f).unwrap()))
        })
        .collect();
    let mut rooms = Rooms::new();
    for (module, is_mod, _) in &modules {
        if *is_mod {
            rooms.entry(module.clone()).or_default();
        }
    }
    // The children of each room, and what its mod.rs re-exports from them.
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (module, _, _) in &modules {
        for depth in 1..module.len() {
            let room = module[..depth].to_vec();
            if rooms.contains_key(&room) {
                children
                    .entry(room)
                    .or_default()
                    .insert(module[depth].clone());
            }
        }
    }
    let mut reexports: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for (module, is_mod, text) in &modules {
        if !*is_mod {
            continue;
        }
        let kids = children.get(module).cloned().unwrap_or_default();
        for path in absolute_paths(module, true, text) {
            if path.len() > module.len() + 1
                && path.starts_with(module)
                && kids.contains(&path[module.len()])
            {
                let name = path.last().unwrap().clone();
                reexports.insert((module.clone(), name), path[module.len()].clone());
            }
        }
    }
    for (module, is_mod, text) in &modules {
        let used = absolute_paths(module, *is_mod, text);
        for depth in 1..module.len() + usize::from(*is_mod) {
            let room = &module[..depth];
            if depth >= module.len() || !rooms.contains_key(room) {
                continue;
            }
            let from = module[depth].clone();
            let kids = children.get(room).cloned().unwrap_or_default();
            let edges = rooms
                .get_mut(room)
                .unwrap()
                .entry(from.clone())
                .or_default();
            for path in &used {
                if path.len() <= depth || !path.starts_with(room) {
                    continue;
                }
                let to = if kids.contains(&path[depth]) {
                    Some(path[depth].clone())
                } else {
                    reexports
                        .get(&(room.to_vec(), path[depth].clone()))
                        .cloned()
                };
                if let Some(to) = to.filter(|to| *to != from) {
                    edges.insert(to);
                }
            }
        }
    }
    rooms
}

/// The circles in one room's graph: its strongly connected parts of more
/// than one child (Tarjan's algorithm), each as its sorted members.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for to in w.graph.get(v).into_iter().flatten() {
            let to = to.as_str();
            if !w.index.contains_key(to) {
                visit(w, to);
                let low = w.low[v].min(w.low[to]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(to) {
                let low = w.low[v].min(w.index[to]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut part = Vec::new();
            while let Some(top) = w.stack.pop() {
                w.on_stack.remove(top);
                part.push(top.to_owned());
                if top == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort();
                w.found.push(part);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.found
}

/// Which file of a folder calls a method of `ty` that another file of it
/// defines: the edges of the calls between the files of one façade (each
/// file an `impl Hive` block of its own), read from `self.m(`, `hive.m(`
/// and `h.m(` outside test items. `files` are (file stem, text).
pub fn method_calls(ty: &str, files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let code: Vec<(String, Vec<String>)> = files
        .iter()
        .map(|(stem, text)| (stem.clone(), code_tokens(text)))
        .collect();
    let mut defined_in: BTreeMap<String, String> = BTreeMap::new();
    for (stem, toks) in &code {
        let mut i = 0;
        while i + 2 < toks.len() {
            if toks[i] == "impl" && toks[i + 1] == ty && toks[i + 2] == "{" {
                let (mut depth, mut j) = (0, i + 2);
                while j < toks.len() {
                    match toks[j].as_str() {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        "fn" if depth == 1 => {
                            defined_in.insert(toks[j + 1].clone(), stem.clone());
                        }
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    j += 1;
                }
                i = j;
            }
            i += 1;
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (stem, toks) in &code {
        let calls = edges.entry(stem.clone()).or_default();
        for w in toks.windows(4) {
            let receiver = matches!(w[0].as_str(), "self" | "hive" | "h");
            if receiver
                && w[1] == "."
                && w[3] == "("
                && let Some(to) = defined_in.get(&w[2]).filter(|to| *to != stem)
            {
                calls.insert(to.clone());
            }
        }
    }
    edges
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;

/// Does a room's code name the façade, `Hive`? Every `Hive` token does,
/// but one that ends another type's path (`SpendScope::Hive`, a variant
/// of the wire's) — unless that path is the service's (`service::Hive`,
/// `super::Hive`, `crate::Hive`).
pub fn names_the_facade(toks: &[String]) -> bool {
    toks.iter().enumerate().any(|(i, t)| {
        let owner = (i >= 2 && toks[i - 1] == "::").then(|| toks[i - 2].as_str());
        t == "Hive" && owner.is_none_or(|o| matches!(o, "service" | "super" | "crate"))
    })
}
