use super::*;
use tokio::io::BufReader;

async fn lines(input: &[u8], cap: usize, chunk: usize) -> Vec<Result<Option<Vec<u8>>, String>> {
    let mut r = BufReader::with_capacity(chunk, input);
    let mut out = Vec::new();
    loop {
        let next = read_line(&mut r, cap).await.map_err(|e| e.to_string());
        let stop = !matches!(next, Ok(Some(_)));
        out.push(next);
        if stop {
            return out;
        }
    }
}

#[tokio::test]
async fn two_lines_in_one_read_come_out_one_at_a_time() {
    let got = lines(b"{\"a\":1}\n{\"b\":2}\n", 100, 64).await;
    assert_eq!(
        got,
        vec![
            Ok(Some(b"{\"a\":1}".to_vec())),
            Ok(Some(b"{\"b\":2}".to_vec())),
            Ok(None)
        ]
    );
}

#[tokio::test]
async fn a_line_split_across_reads_is_joined() {
    let got = lines(b"abcdefghij\n", 100, 3).await;
    assert_eq!(got[0], Ok(Some(b"abcdefghij".to_vec())));
}

#[tokio::test]
async fn a_partial_last_line_without_newline_still_counts() {
    let got = lines(b"{\"cmd\":\"list\"}", 100, 8).await;
    assert_eq!(
        got,
        vec![Ok(Some(b"{\"cmd\":\"list\"}".to_vec())), Ok(None)]
    );
}

#[tokio::test]
async fn an_empty_connection_is_a_clean_end_not_an_error() {
    assert_eq!(lines(b"", 100, 8).await, vec![Ok(None)]);
}

#[tokio::test]
async fn an_over_long_line_is_refused_without_reading_to_its_end() {
    // 10 bytes of cap, then a line that never ends: the reader stops
    // after the first chunk past the cap.
    let input = vec![b'x'; 1000];
    let mut r = BufReader::with_capacity(4, input.as_slice());
    let err = read_line(&mut r, 10).await.unwrap_err();
    assert!(matches!(err, FrameError::TooLong(10)));
    // Only the cap plus one chunk was pulled from the client.
    assert!(
        r.get_ref().len() >= 1000 - 10 - 4,
        "read {} bytes",
        1000 - r.get_ref().len()
    );
}

#[tokio::test]
async fn a_line_of_exactly_the_cap_is_accepted() {
    let mut input = vec![b'x'; 10];
    input.push(b'\n');
    assert_eq!(lines(&input, 10, 4).await[0], Ok(Some(vec![b'x'; 10])));
}

#[tokio::test]
async fn a_line_read_into_a_used_buffer_holds_that_line_only() {
    let input = b"{\"a\":\"a long first line\"}\n{\"b\":2}\n";
    let mut r = BufReader::with_capacity(8, &input[..]);
    let mut line = Vec::new();
    assert!(read_line_into(&mut r, 100, &mut line).await.unwrap());
    assert_eq!(line, b"{\"a\":\"a long first line\"}");
    assert!(read_line_into(&mut r, 100, &mut line).await.unwrap());
    assert_eq!(line, b"{\"b\":2}");
    assert!(!read_line_into(&mut r, 100, &mut line).await.unwrap());
    assert!(line.is_empty(), "{line:?}");
}
