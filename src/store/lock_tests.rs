use super::*;

#[test]
fn a_second_lock_on_one_state_dir_is_refused_naming_the_first_pid() {
    let dir = tempfile::tempdir().unwrap();
    let first = acquire(dir.path()).unwrap();
    let err = acquire(dir.path()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("(PID {})", std::process::id())),
        "{text}"
    );
    drop(first);
    assert!(acquire(dir.path()).is_ok(), "released with its holder");
}
