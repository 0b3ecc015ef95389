use super::*;

fn ident(s: &str) -> Ident {
    Ident::new(s).unwrap()
}

#[test]
fn a_verdict_line_round_trips_through_its_one_line() {
    let line = VerdictLine::new(Verdict::Forbidden)
        .target("loop.evil.test:443")
        .address("127.0.0.1")
        .reason("resolved to 127.0.0.1, a loopback address\nsecond line");
    let bytes = line.to_line();
    assert!(bytes.starts_with(VERDICT_PREFIX.as_bytes()));
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(VerdictLine::parse(&bytes), Ok(line));
}

#[test]
fn every_verdict_parses_back_from_its_name() {
    for v in Verdict::ALL {
        assert_eq!(Verdict::parse(v.as_str()), Some(v));
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(json, format!("\"{}\"", v.as_str()));
    }
    assert_eq!(Verdict::parse("ALLOWED"), None);
}

/// What an agent (or an origin it controls) might send that looks like a
/// verdict: none of it is one unless it is exactly the service's line.
#[test]
fn an_agents_bytes_that_look_like_a_verdict_are_never_taken_for_one() {
    let genuine = String::from_utf8(VerdictLine::new(Verdict::Allowed).to_line()).unwrap();
    let json = genuine.strip_prefix(VERDICT_PREFIX).unwrap();
    let forged = [
        // An HTTP answer first, the verdict after it.
        format!("HTTP/1.1 200 OK\r\n\r\n{genuine}"),
        // The JSON alone, without the prefix.
        json.to_owned(),
        // Another version's prefix.
        format!("hive-c0re-egress-verdict/2 {json}"),
        format!("HIVE-C0RE-EGRESS-VERDICT/1 {json}"),
        format!(" {genuine}"),
        // No newline at its end (the line is not complete).
        genuine.trim_end().to_owned(),
        // A CR before the newline, or two lines in one.
        format!("{}\r\n", genuine.trim_end()),
        format!("{}\n{genuine}", genuine.trim_end()),
        // Unknown keys, a wrong type, trailing bytes after the object.
        format!(r#"{VERDICT_PREFIX}{{"verdict":"allowed","agent":"bob"}}"#) + "\n",
        format!(r#"{VERDICT_PREFIX}{{"verdict":"granted"}}"#) + "\n",
        format!(r#"{VERDICT_PREFIX}{{"verdict":"allowed"}} x"#) + "\n",
        format!(r#"{VERDICT_PREFIX}{{}}"#) + "\n",
        // A value over its bound.
        format!(
            r#"{VERDICT_PREFIX}{{"verdict":"allowed","target":"{}"}}"#,
            "a".repeat(MAX_TARGET + 1)
        ) + "\n",
        // Over the line's length.
        format!(
            r#"{VERDICT_PREFIX}{{"verdict":"refused","reason":"{}"}}"#,
            "r".repeat(MAX_VERDICT_LINE)
        ) + "\n",
    ];
    for bytes in forged {
        assert!(
            VerdictLine::parse(bytes.as_bytes()).is_err(),
            "taken for a verdict: {bytes:?}"
        );
    }
    assert!(VerdictLine::parse(genuine.as_bytes()).is_ok());
}

#[test]
fn values_over_their_bound_are_cut_on_a_character_boundary_when_built() {
    let long = "é".repeat(MAX_REASON);
    let line = VerdictLine::new(Verdict::Unresolved).reason(&long);
    let reason = line.reason.clone().unwrap();
    assert!(reason.len() <= MAX_REASON && reason.chars().all(|c| c == 'é'));
    assert!(line.to_line().len() <= MAX_VERDICT_LINE);
    assert_eq!(VerdictLine::parse(&line.to_line()), Ok(line));
}

fn record(agent: &str, verdict: Verdict, target: Option<&str>, at_ms: i64) -> EgressRecord {
    EgressRecord {
        agent: ident(agent),
        at_ms,
        verdict,
        target: target.map(str::to_owned),
        address: None,
        reason: None,
        up: 10,
        down: 20,
        ms: 5,
        count: 1,
    }
}

#[test]
fn refusals_of_one_agent_target_and_minute_merge_and_allowed_connections_never_do() {
    let first = record("alice", Verdict::Limited, None, 60_000);
    assert!(first.absorbs(&record("alice", Verdict::Limited, None, 119_999)));
    assert!(!first.absorbs(&record("alice", Verdict::Limited, None, 120_000)));
    assert!(!first.absorbs(&record("bob", Verdict::Limited, None, 60_001)));
    assert!(!first.absorbs(&record("alice", Verdict::Busy, None, 60_001)));
    let refused = record("alice", Verdict::Refused, Some("a.test:443"), 0);
    assert!(refused.absorbs(&record("alice", Verdict::Refused, Some("a.test:443"), 1)));
    assert!(!refused.absorbs(&record("alice", Verdict::Refused, Some("b.test:443"), 1)));
    let allowed = record("alice", Verdict::Allowed, Some("a.test:443"), 0);
    assert!(!allowed.absorbs(&allowed.clone()));

    let mut merged = first.clone();
    let mut later = record("alice", Verdict::Limited, None, 61_000);
    later.ms = 50;
    merged.absorb(&later);
    assert_eq!(
        (merged.count, merged.up, merged.down, merged.ms),
        (2, 20, 40, 50)
    );
    assert_eq!(merged.at_ms, 60_000);
}
