use super::*;

#[test]
fn a_stale_socket_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let l = bind(&path).unwrap();
    assert!(UnixStream::connect(&path).is_ok());
    drop(l);
}

#[test]
fn a_live_socket_is_never_stolen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    let _live = UnixListener::bind(&path).unwrap();
    assert!(matches!(bind(&path), Err(BindError::AlreadyRunning(p)) if p == path));
}

/// What an agent can leave at its socket's path (its `/run/hive` is
/// writable from inside its container) used to stop every later
/// daemon start: a directory ("Is a directory"), or a symlink to a live
/// socket ("already running").
#[test]
fn whatever_an_agent_leaves_at_its_socket_path_is_replaced_without_following_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let staging = dir.path().join("staging");
    let agent = dir.path().join("agents/alice");
    std::fs::create_dir_all(&agent).unwrap();
    let elsewhere = dir.path().join("elsewhere.sock");
    let _live = UnixListener::bind(&elsewhere).unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = agent.join("mcp.sock");
    let plants: [&dyn Fn(); 5] = [
        &|| std::fs::create_dir_all(path.join("deep/er")).unwrap(),
        &|| std::os::unix::fs::symlink(&elsewhere, &path).unwrap(),
        &|| std::os::unix::fs::symlink(&target, &path).unwrap(),
        &|| std::fs::write(&path, "junk").unwrap(),
        &|| drop(UnixListener::bind(&path).unwrap()),
    ];
    for plant in plants {
        plant();
        let l = bind_replacing(&path, &staging, 0o600).unwrap();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()));
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(UnixStream::connect(&path).is_ok());
        drop(l);
        std::fs::remove_file(&path).unwrap();
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    // Neither removed nor chmod'ed through the symlink.
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn a_path_too_long_for_a_unix_socket_says_so() {
    let path = PathBuf::from(format!("/tmp/{}/host.sock", "d".repeat(120)));
    let err = bind(&path).unwrap_err();
    assert!(matches!(err, BindError::PathTooLong { .. }));
    assert!(err.to_string().contains("past the ~100"), "{err}");
}

#[test]
fn a_datagram_socket_is_not_taken_as_the_listener() {
    let (a, _b) = std::os::unix::net::UnixDatagram::pair().unwrap();
    let err = listener_from_fd("host", OwnedFd::from(a)).unwrap_err();
    assert!(matches!(err, ActivationError::NotAListener { .. }));
}
