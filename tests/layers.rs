//! The layer rule, checked: imports run one way.
//!
//! ```text
//! wire  <-  hive  <-  store  <-  service  <-  server / cli / web  <-  daemon
//!            ^-- containers, systemd (beside store: service drives them)
//! ```
//!
//! Every file under `src/` names the modules it uses as `crate::<module>`
//! paths; each top-level module may use only the modules [`LAYERS`] lists
//! for it. A new top-level module fails this test until it is given its
//! place here. Test code (`*_tests.rs`, `tests.rs`, `testing.rs` and
//! everything after a file's first `#[cfg(test)]`) may reach anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may import. The one table of
/// the layer rule: keep `src/lib.rs`'s map and the README in step with it.
const LAYERS: &[(&str, &[&str])] = &[
    // Foundations: no crate imports at all.
    ("wire", &[]),
    ("clock", &[]),
    ("command", &[]),
    ("logging", &[]),
    ("errors", &[]),
    // The rules: pure, own types.
    ("hive", &["wire", "clock", "errors"]),
    // Beside the store: the container seam and the daemon's config.
    ("containers", &["wire", "hive", "clock"]),
    ("config", &["wire", "containers"]),
    // Persistence of hive's types.
    ("store", &["wire", "hive", "clock"]),
    // systemd: activation, notify, the D-Bus driver, the journal.
    (
        "systemd",
        &[
            "wire",
            "hive",
            "containers",
            "config",
            "command",
            "clock",
            "errors",
        ],
    ),
    // The only API the front doors use.
    (
        "service",
        &[
            "wire",
            "hive",
            "store",
            "containers",
            "systemd",
            "config",
            "command",
            "clock",
            "errors",
        ],
    ),
    // Front doors: the wire and the service, nothing under it.
    ("server", &["wire", "service", "config", "clock", "errors"]),
    ("web", &["wire", "service", "config", "clock", "errors"]),
    // The swarm door: this hive on NATS JetStream, like a socket.
    ("swarm", &["wire", "service", "config"]),
    ("client", &["wire", "config"]),
    // The in-container harness (hive-agent): a client of the agent socket,
    // with sd_notify from systemd; nothing of the daemon's state.
    ("agent", &["wire", "systemd"]),
    ("cli", &["wire", "client", "config", "clock", "errors"]),
    // The composition root: it builds the driver and the front doors, and
    // reaches the store and the rules only through the service.
    (
        "daemon",
        &[
            "wire",
            "containers",
            "systemd",
            "config",
            "clock",
            "service",
            "server",
            "web",
            "swarm",
            "logging",
            "errors",
        ],
    ),
];

/// Modules that are test support or the crate root, and may use anything.
const UNCHECKED: &[&str] = &["lib", "testing"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to (`None`: a binary).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_str()?.to_owned();
    if first == "bin" || first == "main.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_owned())
}

fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_str().unwrap();
    name.ends_with("_tests.rs") || name == "tests.rs"
}

/// The top-level modules `text` names as `crate::<module>`, including the
/// `use crate::{a::b, c}` form, in code before the first `#[cfg(test)]`.
/// Comments are skipped (doc links may point anywhere).
fn crate_imports(text: &str) -> BTreeSet<String> {
    let mut found = paths_after(text, "crate::");
    found.extend(multi_line_groups(text));
    found
}

/// The first segment of every path after `prefix` (`crate::`, `super::`),
/// also in a one-line `prefix{a::x, b}` group, in code before the first
/// `#[cfg(test)]`; comments skipped.
fn paths_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line.split("//").next().unwrap_or("");
        while let Some(at) = rest.find(prefix) {
            let after = &rest[at + prefix.len()..];
            if let Some(group) = after.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    found.extend(first_segment(item.trim()));
                }
            } else {
                found.extend(first_segment(after));
            }
            rest = after;
        }
    }
    found
}

fn first_segment(path: &str) -> Option<String> {
    let name: String = path
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The items of `use crate::{` groups that span several lines.
fn multi_line_groups(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut in_group = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if in_group {
            if line.starts_with('}') {
                in_group = false;
                continue;
            }
            found.extend(first_segment(line));
        } else if line.ends_with("crate::{") {
            in_group = true;
        }
    }
    found
}

#[test]
fn every_module_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        if UNCHECKED.contains(&module.as_str()) || is_test_file(file) {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| *m == module) else {
            violations.push(format!(
                "{}: module `{module}` has no place in tests/layers.rs's LAYERS; add it",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for used in crate_imports(&text) {
            if used != module && !allowed.contains(&used.as_str()) {
                violations.push(format!(
                    "{}: `{module}` imports `crate::{used}`, which is not below it",
                    file.display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "upward or sideways imports:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_import_reader_sees_plain_grouped_and_multi_line_imports_but_not_comments() {
    let text = "use crate::wire::x;\n\
                use crate::{store::a, hive};\n\
                use crate::{\n    service::Hive,\n    clock::Clock,\n};\n\
                // crate::daemon in a comment\n\
                let x = crate::config::MANAGER; // crate::cli\n\
                #[cfg(test)]\n\
                use crate::testing::id;\n";
    let found: Vec<String> = crate_imports(text).into_iter().collect();
    assert_eq!(
        found,
        vec!["clock", "config", "hive", "service", "store", "wire"]
    );
}

#[test]
fn every_layer_in_the_table_names_only_modules_in_the_table() {
    let known: BTreeSet<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    for (module, allowed) in LAYERS {
        for dep in *allowed {
            assert!(known.contains(dep), "{module} allows unknown module {dep}");
            assert_ne!(module, dep, "{module} lists itself");
        }
    }
}

#[test]
fn no_two_files_of_a_module_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // (directory, file stem) -> siblings it imports
    let mut edges = std::collections::BTreeMap::new();
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let stem = file.file_stem().unwrap().to_str().unwrap().to_owned();
        if stem == "mod" {
            continue;
        }
        let dir = file.parent().unwrap().to_owned();
        let text = std::fs::read_to_string(file).unwrap();
        edges.insert((dir, stem), paths_after(&text, "super::"));
    }
    let mut circles = Vec::new();
    for ((dir, a), uses) in &edges {
        for b in uses {
            let back = edges
                .get(&(dir.clone(), b.clone()))
                .is_some_and(|u| u.contains(a));
            if back && a < b {
                circles.push(format!("{}: {a} <-> {b}", dir.display()));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "module circles:\n{}",
        circles.join("\n")
    );
}
