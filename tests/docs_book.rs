//! The operator's book (`docs/`) stays true to the code and to itself: the
//! configuration reference has exactly the keys and defaults of the
//! daemon's `Config` (read through the real type, so `#[serde(skip)]`
//! fields and renames count as serde counts them), every relative link of
//! the book, the README and nix/README.md reaches a file and, with
//! `#anchor`, a heading of it (mdBook's ids), and `SUMMARY.md` lists exactly the book's pages.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hive_c0re::config::{Config, ConfigError};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BOOK: &str = "docs/src";
const REFERENCE: &str = "docs/src/configuration.md";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn root() -> PathBuf {
    PathBuf::from(ROOT)
}

/// The book's pages, SUMMARY.md included, by file name.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join(BOOK))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages
}

/// The text outside fenced code blocks, line by line (a fence's lines are
/// left out, so a `#` comment or a `](` in code is neither heading nor link).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// mdBook's id of a heading's text: lowercase ASCII, whitespace to `-`,
/// letters, digits, `_` and `-` kept, everything else (backticks, colons,
/// apostrophes, dashes of other kinds) dropped.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// Every id mdBook gives the headings of a page: a repeated one gets `-1`,
/// `-2`, ... as mdBook numbers them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for line in prose(text).lines() {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let id = slug(heading.trim_start_matches('#').trim());
        let n = seen.entry(id.clone()).or_insert(0);
        ids.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    ids
}

/// The targets of a text's inline links `[text](target)`.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].to_owned());
        }
    }
    targets
}

/// Why one link of `file` does not resolve, if it does not.
fn broken(file: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap().join(path)
    };
    if !resolved.exists() {
        return Some(format!("{target}: no file {}", resolved.display()));
    }
    if anchor.is_empty() {
        return None;
    }
    if resolved.extension().is_none_or(|x| x != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let ids = anchors(&read(&resolved));
    (!ids.contains(anchor)).then(|| format!("{target}: no heading with the id {anchor:?}"))
}

/// The rows of the first table after `## <section>` in the reference:
/// each row's cells, its key cell unquoted.
fn table(section: &str) -> Vec<Vec<String>> {
    let text = read(&root().join(REFERENCE));
    let start = text
        .find(&format!("\n## {section}\n"))
        .unwrap_or_else(|| panic!("{REFERENCE} has no section {section:?}"));
    let body = &text[start + section.len() + 5..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    body.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect()
        })
        .collect()
}

/// The keys serde accepts where `json` puts an unknown one, read from
/// serde's refusal ("unknown field `x`, expected one of `a`, `b`, ...") of
/// the real `Config`.
fn accepted_keys(json: &str) -> BTreeSet<String> {
    let source = match Config::parse(json.as_bytes(), Path::new("config.json")) {
        Err(ConfigError::Parse { source, .. }) => source.to_string(),
        other => panic!("{json} was not refused as an unknown key: {other:?}"),
    };
    let list = source
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde's refusal lists no keys: {source}"))
        .1;
    let list = list.rsplit_once(" at line ").map_or(list, |(l, _)| l);
    list.split(", ")
        .map(|k| k.trim_matches('`').to_owned())
        .collect()
}

fn documented_keys(rows: &[Vec<String>]) -> BTreeSet<String> {
    rows.iter().map(|r| r[0].clone()).collect()
}

/// An object of each row's key and its documented default (a JSON value).
fn documented_defaults(rows: &[Vec<String>]) -> String {
    let fields: Vec<String> = rows
        .iter()
        .filter(|r| r[2] != "required")
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r[2])
                .unwrap_or_else(|e| panic!("`{}`'s default {:?} is not JSON: {e}", r[0], r[2]));
            format!("\"{}\": {}", r[0], r[2])
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

#[test]
fn the_configuration_reference_lists_exactly_the_keys_of_the_daemons_config() {
    let documented = documented_keys(&table("The keys"));
    let accepted = accepted_keys(r#"{"no_such_key_of_the_book": 0}"#);
    assert!(
        accepted.contains("state_dir") && accepted.len() > 40,
        "{accepted:?}"
    );
    assert_eq!(
        documented.difference(&accepted).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "in {REFERENCE} but not keys of Config"
    );
    assert_eq!(
        accepted.difference(&documented).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "keys of Config missing from {REFERENCE}"
    );
}

#[test]
fn the_configuration_references_defaults_are_the_daemons_defaults() {
    let defaults = documented_defaults(&table("The keys"));
    let config = Config::parse(defaults.as_bytes(), Path::new(REFERENCE))
        .unwrap_or_else(|e| panic!("{defaults}: {e:?}"));
    assert_eq!(config, Config::default(), "{defaults}");
}

#[test]
fn the_swarm_table_lists_exactly_the_swarm_sections_keys_with_their_defaults() {
    let rows = table("`swarm`");
    let names = r#""hive_name": "a", "swarm_name": "s""#;
    let accepted = accepted_keys(&format!(
        r#"{{{names}, "swarm": {{"urls": [], "no_such_key": 0}}}}"#
    ));
    assert_eq!(documented_keys(&rows), accepted);
    let required: Vec<&str> = rows
        .iter()
        .filter(|r| r[2] == "required")
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(required, ["urls"]);
    let parse = |swarm: &str| {
        Config::parse(
            format!(r#"{{{names}, "swarm": {swarm}}}"#).as_bytes(),
            Path::new(REFERENCE),
        )
    };
    assert!(parse("{}").is_err(), "a swarm without urls loads");
    let documented = documented_defaults(&rows).replacen('{', r#"{"urls": [], "#, 1);
    assert_eq!(
        parse(&documented).unwrap(),
        parse(r#"{"urls": []}"#).unwrap(),
        "{documented}"
    );
}

#[test]
fn an_anchor_is_mdbooks_id_of_the_heading() {
    assert_eq!(
        slug("Telling the operator: `notify_command`"),
        "telling-the-operator-notify_command"
    );
    assert_eq!(
        slug("The demo's stand-in model"),
        "the-demos-stand-in-model"
    );
    assert_eq!(
        anchors("# Architecture\n```\n# not a heading\n```\n## Architecture\n"),
        BTreeSet::from(["architecture".to_owned(), "architecture-1".to_owned()])
    );
}

#[test]
fn every_relative_link_of_the_book_and_the_readmes_reaches_a_file_and_its_heading() {
    let mut files = pages();
    files.extend(["README.md", "nix/README.md"].map(|f| root().join(f)));
    let mut broken_links = Vec::new();
    let mut checked = 0;
    for file in &files {
        for target in link_targets(&read(file)) {
            checked += 1;
            if let Some(why) = broken(file, &target) {
                broken_links.push(format!("{}: {why}", file.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(broken_links.is_empty(), "{}", broken_links.join("\n"));
}

#[test]
fn the_summary_lists_every_page_of_the_book_and_only_pages_that_exist() {
    let book = root().join(BOOK);
    let listed: BTreeSet<String> = link_targets(&read(&book.join("SUMMARY.md")))
        .into_iter()
        .collect();
    let present: BTreeSet<String> = pages()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "SUMMARY.md")
        .collect();
    assert_eq!(
        present.difference(&listed).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "pages missing from SUMMARY.md"
    );
    assert_eq!(
        listed.difference(&present).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "SUMMARY.md entries with no page"
    );
}
