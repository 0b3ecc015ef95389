use super::*;

#[test]
fn every_code_serializes_as_its_name_and_reads_back() {
    for code in ErrorCode::ALL {
        let json = serde_json::to_string(&code).unwrap();
        assert_eq!(json, format!("\"{}\"", code.as_str()));
        assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), code);
    }
}

#[test]
fn a_code_from_a_newer_daemon_reads_as_unknown() {
    let code: ErrorCode = serde_json::from_str("\"quota_exceeded\"").unwrap();
    assert_eq!(code, ErrorCode::Unknown);
    assert_eq!(code.exit_status(), exit::REFUSED);
}

#[test]
fn only_in_progress_is_a_success_status_and_only_the_hives_own_failure_is_a_500() {
    for code in ErrorCode::ALL {
        let status = code.http_status();
        assert_eq!(status < 400, code == ErrorCode::InProgress, "{code}");
        assert_eq!(status == 500, code == ErrorCode::Internal, "{code}");
    }
}
