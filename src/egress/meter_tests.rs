use super::*;

fn sse(events: &[serde_json::Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect::<String>()
        .into_bytes()
}

fn stream() -> Vec<u8> {
    sse(&[
        serde_json::json!({"type": "message_start", "message": {"model": "claude-opus-4-5-20251101",
            "usage": {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 20,
                      "cache_read_input_tokens": 30}}}),
        serde_json::json!({"type": "content_block_delta", "delta": {"text": "x".repeat(1000)}}),
        serde_json::json!({"type": "message_delta", "usage": {"output_tokens": 40}}),
        serde_json::json!({"type": "message_delta", "usage": {"output_tokens": 77, "input_tokens": 101}}),
    ])
}

const WANT: Tokens = Tokens {
    input: 101,
    output: 77,
    cache_write: 20,
    cache_read: 30,
};

#[test]
fn a_stream_read_in_chunks_of_any_size_says_the_same_model_and_the_last_running_usage() {
    let bytes = stream();
    for size in [1, 2, 7, 64, 4096, bytes.len()] {
        let mut tap = Tap::new(Kind::Stream);
        for chunk in bytes.chunks(size) {
            tap.feed(chunk);
        }
        tap.end();
        assert_eq!(tap.tokens, WANT, "chunks of {size}");
        assert_eq!(tap.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(tap.error, None);
    }
}

#[test]
fn a_line_past_the_limit_is_skipped_whole_and_the_lines_after_it_are_read() {
    let mut bytes = format!("data: {}\n", "y".repeat(MAX_LINE + 10)).into_bytes();
    bytes.extend(stream());
    let mut tap = Tap::new(Kind::Stream);
    for chunk in bytes.chunks(1000) {
        tap.feed(chunk);
    }
    assert_eq!(tap.tokens, WANT);
}

#[test]
fn an_error_event_and_a_json_error_answer_say_their_message() {
    let mut tap = Tap::new(Kind::Stream);
    tap.feed(b"event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\n\r\n");
    assert_eq!(tap.error.as_deref(), Some("Overloaded"));
    let mut tap = Tap::new(Kind::Json);
    tap.feed(br#"{"type":"error","error":{"type":"rate_limit_error"}}"#);
    tap.end();
    assert_eq!(tap.error.as_deref(), Some("rate_limit_error"));
}

#[test]
fn a_json_answer_is_read_at_its_end_and_one_past_the_limit_not_at_all() {
    let mut tap = Tap::new(Kind::Json);
    tap.feed(br#"{"model":"claude-haiku-4-5","usage":{"input_tokens":3,"#);
    tap.feed(br#""output_tokens":4}}"#);
    assert_eq!(tap.tokens, Tokens::default(), "nothing before the end");
    tap.end();
    assert_eq!((tap.tokens.input, tap.tokens.output), (3, 4));
    let mut tap = Tap::new(Kind::Json);
    tap.feed(&vec![b' '; MAX_JSON]);
    tap.feed(br#"{"usage":{"input_tokens":3}}"#);
    tap.end();
    assert_eq!(tap.tokens, Tokens::default());
}

#[test]
fn the_shipped_table_prices_a_dated_model_by_its_longest_key_and_an_unknown_one_not_at_all() {
    let prices = Prices::shipped();
    assert!(prices.price("claude-sonnet-4-5-20250929").is_some());
    // claude-opus-4-5 (5/25), not claude-opus-4 (15/75).
    let opus = prices.price("claude-opus-4-5-20251101").unwrap();
    assert_eq!((opus.input, opus.output), (5.0, 25.0));
    let tokens = Tokens {
        input: 1_000_000,
        output: 1_000_000,
        cache_write: 0,
        cache_read: 0,
    };
    assert_eq!(
        prices.cost(Some("claude-opus-4-5-x"), &tokens),
        Some(30_000_000)
    );
    assert_eq!(prices.cost(Some("gpt-9"), &tokens), None);
    assert_eq!(prices.cost(None, &tokens), None);
}

#[test]
fn the_shipped_price_file_parses_and_every_price_is_positive() {
    let file: serde_json::Value = serde_json::from_str(SHIPPED_PRICES).unwrap();
    let models = file["models"].as_object().unwrap();
    assert!(models.len() >= 8);
    let prices = Prices::parse(SHIPPED_PRICES).unwrap();
    for name in models.keys() {
        let p = prices.price(name).unwrap();
        assert!(p.input > 0.0 && p.output > 0.0 && p.cache_write > 0.0 && p.cache_read > 0.0);
    }
}
