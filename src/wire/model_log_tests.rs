use super::*;

fn row() -> MeterRow {
    MeterRow {
        at_ms: 0,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: Tokens {
            input: 1,
            output: 2,
            cache_write: 3,
            cache_read: 4,
        },
        cost_micro_usd: Some(9),
        ms: 5,
        request_id: Some("req_1".into()),
        error: None,
    }
}

#[test]
fn a_meter_frame_and_a_data_head_parse_back_to_what_was_sent() {
    assert_eq!(
        FrameHead::parse(&row().to_frame()),
        Ok(FrameHead::Meter(row()))
    );
    assert_eq!(FrameHead::parse(&data_head(1)), Ok(FrameHead::Data(1)));
    assert_eq!(
        FrameHead::parse(&data_head(MAX_DATA_FRAME)),
        Ok(FrameHead::Data(MAX_DATA_FRAME))
    );
}

#[test]
fn anything_else_is_no_frame() {
    let mut unknown = row().to_frame();
    unknown.splice(2..3, b"{\"x\":1,".iter().copied());
    let long = format!("M {{\"route\":\"{}\"}}\n", "r".repeat(MAX_FRAME_HEAD));
    for bad in [
        b"D 0\n".to_vec(),
        b"D 01\n".to_vec(),
        b"D +1\n".to_vec(),
        b"D 1".to_vec(),
        b"D 1\r\n".to_vec(),
        format!("D {}\n", MAX_DATA_FRAME + 1).into_bytes(),
        b"X 1\n".to_vec(),
        b"M {}\n".to_vec(),
        unknown,
        long.into_bytes(),
    ] {
        assert!(
            FrameHead::parse(&bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(&bad)
        );
    }
}

#[test]
fn a_row_is_cut_to_its_bounds_before_it_is_sent_and_one_over_them_is_refused() {
    let mut long = row();
    long.error = Some("e".repeat(MAX_ERROR * 2));
    long.model = Some("m".repeat(MAX_MODEL * 2));
    let frame = long.clone().bounded().to_frame();
    match FrameHead::parse(&frame).unwrap() {
        FrameHead::Meter(r) => {
            assert_eq!(r.error.unwrap().len(), MAX_ERROR);
            assert_eq!(r.model.unwrap().len(), MAX_MODEL);
        }
        other => panic!("{other:?}"),
    }
    assert!(FrameHead::parse(&long.to_frame()).is_err());
}

#[test]
fn a_credential_name_is_a_file_name_in_the_credentials_directory_and_nothing_more() {
    for good in ["anthropic", "team-a.key_2", "A"] {
        assert_eq!(CredentialName::new(good).unwrap().as_str(), good);
    }
    for bad in [
        "",
        ".hidden",
        "../x",
        "a/b",
        "sp ace",
        &"x".repeat(65),
        "-lead",
    ] {
        let err = CredentialName::new(bad).unwrap_err();
        assert!(err.to_string().contains("LoadCredential="), "{err}");
    }
    let parsed: Result<CredentialName, _> = serde_json::from_str("\"../etc\"");
    assert!(parsed.is_err());
}

#[test]
fn the_model_log_answer_serializes_to_its_golden_line() {
    let answer = super::super::host::HostResponse::model_log(vec![ModelLogRow {
        agent: crate::testing::id("alice"),
        request: MeterRow {
            at_ms: 1_796_040_000_250,
            model: Some("claude-sonnet-4-5-20250929".into()),
            tokens: Tokens {
                input: 12,
                output: 34,
                cache_write: 5,
                cache_read: 6,
            },
            cost_micro_usd: Some(540),
            ms: 812,
            request_id: Some("req_01".into()),
            ..row()
        },
    }]);
    assert_eq!(
        answer.to_line(),
        r#"{"version":1,"ok":true,"model_log":[{"agent":"alice","request":{"at_ms":1796040000250,"route":"POST /v1/messages","model":"claude-sonnet-4-5-20250929","status":200,"tokens":{"input":12,"output":34,"cache_write":5,"cache_read":6},"cost_micro_usd":540,"ms":812,"request_id":"req_01"}}]}"#
    );
}
