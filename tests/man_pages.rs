//! The operational files that are written by hand stay in step with the
//! code: the daemon's manual page with its options, the Debian polkit rule
//! with the NixOS module's, the book's table of error codes (docs/src/errors.md) with the
//! codes.

#![allow(clippy::disallowed_methods)] // test code runs the binary under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

#[test]
fn the_daemons_manual_page_describes_every_option_of_serve() {
    let help = Command::new(env!("CARGO_BIN_EXE_hive-c0re"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let page = read("systemd/hive-c0re.8");
    let options: Vec<&str> = help
        .split_whitespace()
        .filter(|w| w.starts_with("--") && *w != "--help")
        .collect();
    assert!(options.len() >= 5, "{help}");
    for option in options {
        let roff = option.replace('-', "\\-");
        assert!(
            page.contains(&roff),
            "systemd/hive-c0re.8 does not describe {option}"
        );
    }
    for section in [
        "NAME",
        "SYNOPSIS",
        "ENVIRONMENT",
        "FILES",
        "\"EXIT STATUS\"",
        "\"SEE ALSO\"",
    ] {
        assert!(page.contains(&format!(".SH {section}")), "no {section}");
    }
}

#[test]
fn the_units_point_to_both_manual_pages() {
    for unit in ["systemd/hive-c0re.service", "systemd/hive-c0re.socket"] {
        assert!(
            read(unit).contains("Documentation=man:hive-c0re(8) man:hivectl(1)"),
            "{unit}"
        );
    }
}

/// The rule's code: from `polkit.addRule(` to its closing `});`, blank
/// space squeezed.
fn rule_code(text: &str) -> String {
    let start = text.find("polkit.addRule(").unwrap();
    let end = start + text[start..].find("});").unwrap() + 3;
    text[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_debian_polkit_rule_is_the_nixos_modules_rule() {
    let debian = rule_code(&read("systemd/hive-c0re.rules"));
    let nixos = rule_code(&read("NixOS-module.nix")).replace("${adminGroup}", "hive-admin");
    assert_eq!(debian, nixos);
    assert!(debian.contains("org.freedesktop.machine1.shell"));
}

/// The book's table of error codes (docs/src/errors.md) lists every code the daemon sends,
/// with the HTTP status and hivectl exit status the code decides.
#[test]
fn the_book_documents_every_error_code_with_its_status_and_exit() {
    use hive_c0re::wire::codes::ErrorCode;
    let readme = read("docs/src/errors.md");
    for code in ErrorCode::ALL {
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{code}` |")))
            .unwrap_or_else(|| panic!("docs/src/errors.md has no row for `{code}`"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(
            (cells[3], cells[4]),
            (
                code.http_status().to_string().as_str(),
                code.exit_status().to_string().as_str()
            ),
            "{row}"
        );
    }
}
