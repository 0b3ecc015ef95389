use super::*;
use crate::testing::id;
use crate::wire::model_log::{MeterRow, Tokens};

fn row(cost: Option<u64>, error: Option<&str>) -> ModelLogRow {
    ModelLogRow {
        agent: id("alice"),
        request: MeterRow {
            at_ms: 1_796_000_000_500,
            route: "POST /v1/messages".into(),
            model: Some("claude-sonnet-4-5".into()),
            status: 200,
            tokens: Tokens {
                input: 1200,
                output: 57,
                cache_write: 300,
                cache_read: 4000,
            },
            cost_micro_usd: cost,
            ms: 2_345,
            request_id: Some("req_01".into()),
            error: error.map(str::to_owned),
        },
    }
}

#[test]
fn each_request_is_one_line_with_its_tokens_cost_and_no_control_character() {
    let text = table_of(&[row(Some(6_780), None), row(None, Some("cut\x1b[2J\nnow"))]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("TIME") && lines[0].contains("CACHE_R"),
        "{text}"
    );
    for n in ["1,200", "57", "300", "4,000", "$0.0068", "2.3s", "req_01"] {
        assert!(lines[1].contains(n), "{n} in {text}");
    }
    assert!(lines[2].contains("cut [2J now"), "{text}");
    assert!(!text.contains('\x1b'));
}

#[test]
fn a_cost_reads_in_dollars_and_an_unknown_one_as_a_dash() {
    assert_eq!(usd(Some(1_234_567)), "$1.23");
    assert_eq!(usd(Some(6_780)), "$0.0068");
    assert_eq!(usd(None), "-");
    assert_eq!(table_of(&[]), "no model requests recorded\n");
}
