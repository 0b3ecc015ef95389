use super::*;

#[test]
fn the_upstream_is_an_https_host_and_port_and_nothing_else() {
    let u = Upstream::parse("https://api.anthropic.com").unwrap();
    assert_eq!((u.host.as_str(), u.port), ("api.anthropic.com", 443));
    assert_eq!(u.authority(), "api.anthropic.com");
    let u = Upstream::parse("https://127.0.0.2:8443/").unwrap();
    assert_eq!(u.authority(), "127.0.0.2:8443");
    for bad in [
        "http://api.anthropic.com",
        "https://",
        "https://a.example/v1",
        "https://user@a.example",
        "https://a.example?x=1",
        "api.anthropic.com",
    ] {
        let err = Upstream::parse(bad).unwrap_err();
        assert!(err.to_string().contains(bad), "{err}");
    }
}

#[test]
fn a_credential_file_is_one_line_an_oauth_token_by_its_prefix_and_never_shown_by_debug() {
    assert_eq!(
        Credential::parse("sk-ant-api03-abc\n"),
        Some(Credential::ApiKey("sk-ant-api03-abc".into()))
    );
    assert_eq!(
        Credential::parse("  sk-ant-oat01-xyz  "),
        Some(Credential::OAuth("sk-ant-oat01-xyz".into()))
    );
    assert_eq!(Credential::parse(""), None);
    assert_eq!(Credential::parse("two\nlines"), None);
    assert_eq!(Credential::parse("sp ace"), None);
    let shown = format!("{:?}", Credential::parse("sk-ant-api03-secret").unwrap());
    assert!(!shown.contains("secret"), "{shown}");
}

#[test]
fn a_named_credential_is_read_from_the_directory_and_a_missing_one_names_the_directive() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("anthropic"), "sk-ant-api03-k\n").unwrap();
    let name = CredentialName::new("anthropic").unwrap();
    assert_eq!(
        Credential::load(Some(dir.path()), &name).unwrap(),
        Credential::ApiKey("sk-ant-api03-k".into())
    );
    let other = CredentialName::new("other").unwrap();
    let err = Credential::load(Some(dir.path()), &other).unwrap_err();
    assert!(
        err.to_string().contains("LoadCredential=other:PATH"),
        "{err}"
    );
    let err = Credential::load(None, &name).unwrap_err();
    assert!(
        err.to_string().contains("no credentials directory"),
        "{err}"
    );
}

#[test]
fn an_extra_ca_file_without_a_certificate_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.pem");
    std::fs::write(&path, "not a certificate").unwrap();
    let err = tls_config(Some(&path)).unwrap_err();
    assert!(err.to_string().contains("empty.pem"), "{err}");
    let missing = dir.path().join("missing.pem");
    assert!(
        tls_config(Some(&missing))
            .unwrap_err()
            .to_string()
            .contains("missing.pem")
    );
}
