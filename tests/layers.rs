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
//! place here. An entry `module::part` lets a module use that one part of
//! another (`agent` reaches `systemd::notify`, not the D-Bus driver). Test
//! code (`*_tests.rs`, `tests.rs`, `testing.rs` and every item under
//! `#[cfg(test)]`, wherever it stands) may reach anywhere; the rest of each
//! file is read whole, by the reader in `tests/support/layers/source.rs`.
//!
//! And inside each folder of `src/` (a room: `service/`, `web/`, ...), no
//! files use each other in a circle of any length, whether by `super::`,
//! by `crate::room::` or through a name the room's `mod.rs` re-exports.
//!
//! Inside the service, the rooms of issue 45 ([`SERVICE_ROOMS`]): a room's
//! files (its `mod.rs` included) use of the service only their own room,
//! the rooms the table lists for it, and the one error table — never the
//! façade (`Hive`), nor a façade file's state.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/layers/source.rs"]
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use source::{
    absolute_paths, circles, code_tokens, is_test_file, method_calls, module_path,
    names_the_facade, rooms, rust_files,
};

/// Each top-level module and the modules it may import. The one table of
/// the layer rule: `src/lib.rs` shows it (checked below); keep the README in
/// step with it.
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
    // Agents' config repos: git, seeded, fetched and read.
    ("repos", &["wire", "hive", "command"]),
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
            "repos",
        ],
    ),
    // The egress proxy: one agent's connection, its allow-list, the target.
    ("egress", &["wire"]),
    // Front doors: the wire and the service, nothing under it; the agent
    // socket registry binds its listeners and keeps them in systemd's fd
    // store itself (activation and notify only, never the D-Bus driver),
    // and serves each agent's egress proxy.
    (
        "server",
        &[
            "wire",
            "service",
            "config",
            "clock",
            "errors",
            "egress",
            "systemd::activation",
            "systemd::notify",
        ],
    ),
    ("web", &["wire", "service", "config", "clock", "errors"]),
    // The swarm door: this hive on NATS JetStream, like a socket.
    ("swarm", &["wire", "service", "config"]),
    ("client", &["wire", "config"]),
    // The in-container harness (hive-agent): a client of the agent socket,
    // with sd_notify from systemd; nothing of the daemon's state.
    ("agent", &["wire", "clock", "systemd::notify"]),
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

/// The service's rooms (each a folder of `src/service/`) and the rooms each
/// may use: the table of issue 45, as [`LAYERS`] is of the crate. The
/// files directly in `src/service/` are the façade (`Hive`), not yet a
/// room: they may use every room, and no room may use them. `src/lib.rs`
/// shows this table (checked below). A new folder of `src/service/` fails
/// the check until it is given its place here.
const SERVICE_ROOMS: &[(&str, &[&str])] = &[
    // The inboxes, the broker, the mail port, the operator's notifications.
    ("messaging", &[]),
    // The turn journal, the turn in progress and its interrupt, the turn
    // counters, the spend caps (the mail port: wake a held agent let go,
    // tell of a cap reached; the operator's note an interrupt queues).
    ("usage", &["messaging"]),
    // The answers kept for repeated requests (idempotency keys) and the
    // keys being served.
    ("replies", &[]),
];

/// What every room may name of the service besides rooms: the one error
/// table every door carries (`service::error`, re-exported as
/// `service::HiveError`).
const SERVICE_SHARED: &[&str] = &["error", "HiveError"];

/// Modules that are test support or the crate root, and may use anything.
const UNCHECKED: &[&str] = &["lib", "testing"];

/// The top-level modules a file names, each with its second segment (for
/// the narrow entries of [`LAYERS`] such as `systemd::notify`).
fn crate_imports(module: &[String], is_mod_file: bool, text: &str) -> BTreeSet<String> {
    absolute_paths(module, is_mod_file, text)
        .into_iter()
        .filter(|p| !p.is_empty() && p[0] != module[0])
        .map(|p| p.iter().take(2).cloned().collect::<Vec<_>>().join("::"))
        .collect()
}

/// May `module` use `used` (`store` or `systemd::notify`)?
fn allowed(allowed: &[&str], used: &str) -> bool {
    let top = used.split("::").next().unwrap();
    allowed.iter().any(|a| *a == top || *a == used)
}

#[test]
fn every_module_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = module_path(&src, file) else {
            continue;
        };
        let Some(top) = module.first() else {
            continue; // lib.rs
        };
        if UNCHECKED.contains(&top.as_str()) || is_test_file(file) {
            continue;
        }
        let Some((_, may)) = LAYERS.iter().find(|(m, _)| m == top) else {
            violations.push(format!(
                "{}: module `{top}` has no place in tests/layers.rs's LAYERS; add it",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let is_mod = file.ends_with("mod.rs");
        for used in crate_imports(&module, is_mod, &text) {
            if !allowed(may, &used) {
                violations.push(format!(
                    "{}: `{top}` uses `crate::{used}`, which is not below it",
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
fn the_reader_sees_every_path_outside_test_items_but_none_in_comments_or_strings() {
    let text = "use crate::wire::x;\n\
                use crate::{store::a, hive};\n\
                use crate::{\n    service::Hive,\n    clock::{Clock, self},\n};\n\
                // crate::daemon in a comment\n\
                /* crate::web /* nested */ crate::web */\n\
                let x = crate::config::MANAGER; // crate::cli\n\
                let s = \"crate::agent\"; let r = r#\"crate::agent \"# ;\n\
                #[cfg(test)]\n\
                use crate::testing::id;\n\
                #[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;\n\
                #[cfg(test)]\n\
                mod more { use crate::daemon; fn f() { crate::cli::x(); } }\n\
                fn after_the_tests() { crate::swarm::go(); }\n\
                struct S { #[cfg(test)] probe: crate::web::P, kept: crate::client::C }\n";
    let module = vec!["server".to_owned(), "x".to_owned()];
    let found: Vec<String> = crate_imports(&module, false, text).into_iter().collect();
    assert_eq!(
        found,
        vec![
            "client::C",
            "clock",
            "clock::Clock",
            "config::MANAGER",
            "hive",
            "service::Hive",
            "store::a",
            "swarm::go",
            "wire::x"
        ]
    );
}

#[test]
fn the_map_in_lib_rs_is_this_table() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let lines: Vec<&str> = lib
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .skip_while(|l| !l.starts_with("module ") || !l.ends_with("may use"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    let map: BTreeMap<&str, BTreeSet<&str>> = lines
        .iter()
        .map(|l| {
            let mut words = l.split_whitespace();
            let module = words.next().unwrap();
            (module, words.filter(|w| *w != "-").collect())
        })
        .collect();
    let table: BTreeMap<&str, BTreeSet<&str>> = LAYERS
        .iter()
        .map(|(m, may)| (*m, may.iter().copied().collect()))
        .collect();
    assert_eq!(map, table, "src/lib.rs's layer table differs from LAYERS");
}

#[test]
fn every_layer_in_the_table_names_only_modules_in_the_table() {
    let known: BTreeSet<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    for (module, allowed) in LAYERS {
        for dep in *allowed {
            let top = dep.split("::").next().unwrap();
            assert!(known.contains(top), "{module} allows unknown module {dep}");
            assert_ne!(module, &top, "{module} lists itself");
        }
    }
}

#[test]
fn no_files_of_a_module_use_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rooms = rooms(&src);
    for room in [["service"], ["web"], ["server"], ["store"], ["hive"]] {
        let room: Vec<String> = room.iter().map(|s| (*s).to_owned()).collect();
        assert!(
            rooms.get(&room).is_some_and(|g| !g.is_empty()),
            "the reader found no files in src/{}",
            room.join("/")
        );
    }
    let mut found = Vec::new();
    for (room, graph) in &rooms {
        for part in circles(graph) {
            let ties: Vec<String> = part
                .iter()
                .flat_map(|a| {
                    graph[a]
                        .iter()
                        .filter(|b| part.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            found.push(format!("src/{}: {}", room.join("/"), ties.join(", ")));
        }
    }
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

/// A room of the service reaches the rest of it only as [`SERVICE_ROOMS`]
/// allows: its own files, the rooms listed for it, and the error table.
/// Not `Hive` (by any path, or a glob that brings it in), not a façade
/// file (`service::spend_state`, `service::swarm`, ...): what a room needs
/// from another concern is a port it defines, given at construction.
#[test]
fn every_service_room_uses_only_itself_the_rooms_it_may_and_the_error_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let service = src.join("service");
    let folders: BTreeSet<String> = std::fs::read_dir(&service)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let table: BTreeSet<String> = SERVICE_ROOMS.iter().map(|(r, _)| (*r).to_owned()).collect();
    assert_eq!(
        folders, table,
        "src/service/'s folders are not SERVICE_ROOMS"
    );
    let mut violations = Vec::new();
    for (room, may) in SERVICE_ROOMS {
        let mut files = Vec::new();
        rust_files(&service.join(room), &mut files);
        files.retain(|f| !is_test_file(f));
        assert!(!files.is_empty(), "no files in src/service/{room}");
        for file in &files {
            let module = module_path(&src, file).unwrap();
            let text = std::fs::read_to_string(file).unwrap();
            let is_mod = file.ends_with("mod.rs");
            for path in absolute_paths(&module, is_mod, &text) {
                let [top, used, ..] = path.as_slice() else {
                    continue;
                };
                let ok = used == room
                    || may.contains(&used.as_str())
                    || SERVICE_SHARED.contains(&used.as_str());
                if top == "service" && !ok {
                    let shown = path.join("::");
                    violations.push(format!("{}: uses `{shown}`", file.display()));
                }
            }
            if names_the_facade(&code_tokens(&text)) {
                violations.push(format!("{}: names `Hive`", file.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a service room reaching the façade or a room it may not use:\n{}",
        violations.join("\n")
    );
}

/// `src/lib.rs` shows [`SERVICE_ROOMS`] in its map, as it shows [`LAYERS`].
#[test]
fn the_rooms_in_lib_rs_are_this_table() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let shown: Vec<(String, Vec<String>)> = lib
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .skip_while(|l| !l.starts_with("room ") || !l.ends_with("may use"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .map(|l| {
            let mut words = l.split_whitespace().map(str::to_owned);
            let room = words.next().unwrap();
            (room, words.filter(|w| w != "-").collect())
        })
        .collect();
    let table: Vec<(String, Vec<String>)> = SERVICE_ROOMS
        .iter()
        .map(|(r, may)| {
            (
                (*r).to_owned(),
                may.iter().map(|m| (*m).to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shown, table,
        "src/lib.rs's room table differs from SERVICE_ROOMS"
    );
}

/// The service's state parts (`*_state.rs` in `src/service` and its
/// rooms) own their fields and know nothing of the hive: a part that named
/// [`Hive`] (or reached its `inner`) could call back up into it, and the
/// service's files would call each other in a circle again.
#[test]
fn the_services_state_parts_never_reach_back_up_into_the_hive() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/service");
    let mut parts = Vec::new();
    rust_files(&dir, &mut parts);
    parts.retain(|p| p.to_str().unwrap().ends_with("_state.rs"));
    assert!(
        parts.len() >= 3,
        "no state parts found in {}",
        dir.display()
    );
    for part in parts {
        let text = std::fs::read_to_string(&part).unwrap();
        let toks = code_tokens(&text);
        for word in ["Hive", "inner", "Inner"] {
            assert!(
                !toks.iter().any(|t| t == word),
                "{} names `{word}`: a state part must not reach back into the hive",
                part.display()
            );
        }
    }
}

/// Every message the service stores goes through the messaging room's
/// `insert` (`service/messaging/mail.rs`), which answers what to wake, and
/// every wake-up happens in `service/messaging/inbox_state.rs` (through the
/// mail port's `wake`, after the commit). A second `messages::insert` or `notify_waiters` in the service
/// would be a delivery or a wake the one path does not see.
#[test]
fn the_service_stores_and_wakes_messages_in_one_place() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/service");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut strays = Vec::new();
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let name = file.file_name().unwrap().to_str().unwrap();
        let toks = code_tokens(&std::fs::read_to_string(file).unwrap());
        let inserts = toks
            .windows(3)
            .filter(|w| w[0] == "messages" && w[1] == "::" && w[2] == "insert")
            .count();
        if inserts > 0 && name != "mail.rs" {
            strays.push(format!("{name}: messages::insert"));
        }
        if toks.iter().any(|t| t == "notify_waiters") && name != "inbox_state.rs" {
            strays.push(format!("{name}: notify_waiters"));
        }
    }
    assert!(
        strays.is_empty(),
        "deliveries or wakes outside the one path:\n{}",
        strays.join("\n")
    );
}

/// `Hive` is one façade over many files; calls between them run one way,
/// as imports do (a file that called back into one that calls it would tie
/// the two into one concern again). Read over the façade's files only: a
/// room's methods are its struct's, and it names no `Hive`
/// ([`every_service_room_uses_only_itself_the_rooms_it_may_and_the_error_table`]).
#[test]
fn the_services_files_call_each_other_in_no_circle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/service");
    let mut paths = Vec::new();
    rust_files(&dir, &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .filter(|p| !is_test_file(p) && p.parent() == Some(dir.as_path()))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_owned();
            (stem, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let graph = method_calls("Hive", &files);
    assert!(
        graph.values().map(BTreeSet::len).sum::<usize>() > 20,
        "the call reader found almost no calls: {graph:?}"
    );
    let found: Vec<String> = circles(&graph)
        .into_iter()
        .map(|part| part.join(", "))
        .collect();
    assert!(
        found.is_empty(),
        "service files calling each other in a circle:\n{}",
        found.join("\n")
    );
}

/// `src/lib.rs` ("Tests"): a unit test module is never written inline; it
/// is a `*_tests.rs` file beside the code, attached under `#[cfg(test)]`.
#[test]
fn unit_tests_live_in_sibling_tests_files_attached_under_cfg_test() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut inline = Vec::new();
    let mut attached = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            let attributes: Vec<&str> = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#["))
                .copied()
                .collect();
            let under_cfg_test = attributes.contains(&"#[cfg(test)]");
            if !under_cfg_test || is_test_file(file) {
                continue;
            }
            let declared = match line.strip_prefix("pub") {
                Some(rest) => rest.split_once(' ').map_or(rest, |(_, decl)| decl),
                None => line,
            };
            let Some(name) = declared.strip_prefix("mod ") else {
                continue;
            };
            if name.ends_with('{') {
                inline.push(format!("{}:{}", file.display(), i + 1));
                continue;
            }
            let path = attributes
                .iter()
                .find_map(|l| l.strip_prefix("#[path = \"")?.strip_suffix("\"]"));
            let target = path.map_or_else(
                || format!("{}.rs", name.trim_end_matches(';')),
                str::to_owned,
            );
            attached.insert(file.parent().unwrap().join(target));
        }
    }
    assert!(
        inline.is_empty(),
        "inline test modules (move each to a sibling *_tests.rs): {inline:?}"
    );
    let test_files: BTreeSet<_> = files.iter().filter(|f| is_test_file(f)).cloned().collect();
    let unattached: Vec<_> = test_files.difference(&attached).collect();
    assert!(
        unattached.is_empty(),
        "test files no #[cfg(test)] mod attaches: {unattached:?}"
    );
    let misnamed: Vec<_> = test_files
        .iter()
        .filter(|f| f.ends_with("tests.rs"))
        .collect();
    assert!(
        misnamed.is_empty(),
        "name a test file after what it tests (x_tests.rs): {misnamed:?}"
    );
}

/// `src/lib.rs` ("Tests"): integration tests share code from one folder,
/// `tests/support/`; the other folders under `tests/` are the tiers that
/// are not Rust (the real clients' installer, the real-systemd bed).
#[test]
fn integration_tests_share_code_only_from_tests_support() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut folders: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, ["clients", "support", "system"]);
    for entry in std::fs::read_dir(&tests).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("mod ") && line.ends_with(';') {
                let from = i.checked_sub(1).map(|p| lines[p]).unwrap_or_default();
                assert!(
                    from.starts_with("#[path = \"support/"),
                    "{}:{}: attach shared code from tests/support/ with #[path]",
                    file.display(),
                    i + 1
                );
            }
        }
    }
}
