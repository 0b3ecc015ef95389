use super::*;

fn lock(nodes: &str) -> Vec<u8> {
    format!(r#"{{"nodes":{{"root":{{"inputs":{{"nixpkgs":"nixpkgs"}}}},{nodes}}},"root":"root","version":7}}"#)
        .into_bytes()
}

const GITHUB: &str = r#""nixpkgs":{"locked":{"lastModified":1,"narHash":"sha256-AAAA","owner":"NixOS","repo":"nixpkgs","rev":"0123456789abcdef0123456789abcdef01234567","type":"github"},"original":{"owner":"NixOS","ref":"nixos-24.05","repo":"nixpkgs","type":"github"}}"#;

#[test]
fn a_lock_with_every_input_pinned_to_a_rev_and_hash_passes() {
    check("flake.lock", &lock(GITHUB)).unwrap();
}

#[test]
fn a_tarball_input_with_a_nar_hash_passes() {
    let node = r#""nixpkgs":{"locked":{"narHash":"sha256-AAAA","type":"tarball","url":"https://example.org/n.tar.gz"},"original":{"type":"tarball","url":"https://example.org/n.tar.gz"}}"#;
    check("flake.lock", &lock(node)).unwrap();
}

#[test]
fn an_input_without_a_locked_entry_is_refused_by_name() {
    let node = r#""nixpkgs":{"original":{"owner":"NixOS","repo":"nixpkgs","type":"github"}}"#;
    let err = check("flake.lock", &lock(node)).unwrap_err().to_string();
    assert!(err.contains("\"nixpkgs\" is not locked"), "{err}");
    assert!(err.contains("nix flake lock"), "{err}");
}

#[test]
fn a_github_input_without_a_rev_is_refused_as_unlocked() {
    let node = r#""nixpkgs":{"locked":{"narHash":"sha256-AAAA","owner":"NixOS","repo":"nixpkgs","type":"github"},"original":{"type":"github","owner":"NixOS","repo":"nixpkgs"}}"#;
    let err = check("flake.lock", &lock(node)).unwrap_err().to_string();
    assert!(
        err.contains("\"nixpkgs\" is not locked to its content"),
        "{err}"
    );
}

#[test]
fn an_input_without_a_nar_hash_is_refused_as_unlocked() {
    let node = r#""nixpkgs":{"locked":{"rev":"0123456789abcdef0123456789abcdef01234567","type":"git","url":"https://example.org/n.git"},"original":{"type":"git","url":"https://example.org/n.git"}}"#;
    let err = check("flake.lock", &lock(node)).unwrap_err().to_string();
    assert!(err.contains("\"nixpkgs\""), "{err}");
}

#[test]
fn an_indirect_input_is_refused_as_unlocked() {
    let node = r#""nixpkgs":{"locked":{"id":"nixpkgs","narHash":"sha256-AAAA","type":"indirect"},"original":{"id":"nixpkgs","type":"indirect"}}"#;
    assert!(check("flake.lock", &lock(node)).is_err());
}

#[test]
fn a_path_input_is_refused_by_name_even_when_hashed() {
    let node = r#""secrets":{"locked":{"lastModified":1,"narHash":"sha256-AAAA","path":"/root/secrets","type":"path"},"original":{"path":"/root/secrets","type":"path"}}"#;
    let err = check("sub/flake.lock", &lock(node))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("sub/flake.lock: input \"secrets\" is a path: or file: input"),
        "{err}"
    );
}

#[test]
fn a_file_input_and_a_file_url_are_refused_by_name() {
    let file = r#""etc":{"locked":{"narHash":"sha256-AAAA","type":"file","url":"file:///etc/shadow"},"original":{"type":"file","url":"file:///etc/shadow"}}"#;
    let err = check("flake.lock", &lock(file)).unwrap_err().to_string();
    assert!(err.contains("\"etc\" is a path: or file: input"), "{err}");
    let git_file = r#""repo":{"locked":{"narHash":"sha256-AAAA","rev":"0123456789abcdef0123456789abcdef01234567","type":"git","url":"file:///root/repo"},"original":{"type":"git","url":"file:///root/repo"}}"#;
    let err = check("flake.lock", &lock(git_file))
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"repo\" is a path: or file: input"), "{err}");
}

#[test]
fn a_file_that_is_not_a_lock_is_refused_naming_the_file() {
    let err = check("flake.lock", b"not json").unwrap_err().to_string();
    assert!(
        err.starts_with("flake.lock: is not a flake lock file"),
        "{err}"
    );
    let err = check("flake.lock", b"{}").unwrap_err().to_string();
    assert!(err.contains("no `nodes`"), "{err}");
}

#[test]
fn the_pins_of_a_lock_are_each_inputs_nar_hash_by_name() {
    let pins = pins(&lock(GITHUB)).unwrap();
    assert_eq!(
        pins.into_iter().collect::<Vec<_>>(),
        [("nixpkgs".to_owned(), "sha256-AAAA".to_owned())]
    );
    assert!(super::pins(b"nope").is_none());
}
