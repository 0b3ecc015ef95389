//! Line framing shared by every socket: one JSON object per `\n`-terminated
//! line, with a cap on a line's length that is enforced *while* reading, so
//! a client streaming an endless line costs at most one cap of memory.
//!
//! The codec works on any `AsyncBufRead`, so it is tested on byte slices;
//! the listeners add the read timeout around it.

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// The longest request line accepted: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;

/// Why no line could be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The line passed the cap before its newline. Not read further.
    #[error("request line is longer than {0} bytes")]
    TooLong(usize),
    /// The connection failed.
    /// (The cause is in the message only, so a chain walker prints it once.)
    #[error("connection error: {0}")]
    Io(std::io::Error),
}

impl From<std::io::Error> for FrameError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

/// Read one line without its `\n`. `Ok(None)` is a clean end of input with
/// nothing pending (a liveness probe, or a client that is done). Bytes
/// followed by end of input, without a newline, count as a last line.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    cap: usize,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut line = Vec::new();
    Ok(read_line_into(reader, cap, &mut line)
        .await?
        .then_some(line))
}

/// [`read_line`] into `line` (cleared first), so a long-lived connection
/// reuses one buffer: whether a line was read.
pub async fn read_line_into<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    cap: usize,
    line: &mut Vec<u8>,
) -> Result<bool, FrameError> {
    line.clear();
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(!line.is_empty());
        }
        if let Some(pos) = buf.iter().position(|&b| b == b'\n') {
            if line.len() + pos > cap {
                return Err(FrameError::TooLong(cap));
            }
            line.extend_from_slice(&buf[..pos]);
            reader.consume(pos + 1);
            return Ok(true);
        }
        let n = buf.len();
        if line.len() + n > cap {
            return Err(FrameError::TooLong(cap));
        }
        line.extend_from_slice(buf);
        reader.consume(n);
    }
}

/// Parse one request line tagged by `cmd`, or say what is wrong with it:
/// not UTF-8, not JSON, not an object, no `cmd`, a `cmd` not in
/// `commands` (listed back), or fields of the wrong shape.
pub fn parse_request<T: DeserializeOwned>(line: &[u8], commands: &[&str]) -> Result<T, String> {
    let text = std::str::from_utf8(line).map_err(|_| "request is not valid UTF-8".to_owned())?;
    // A well-formed request (every one a working client sends) is parsed
    // once; only a bad one is parsed again, to say what is wrong with it.
    // Objects only: serde reads a tagged enum from an array too.
    if text.trim_start().starts_with('{')
        && let Ok(request) = serde_json::from_str(text)
    {
        return Ok(request);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("request is not valid JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("request is not a JSON object".to_owned());
    };
    let cmd = match object.get("cmd") {
        Some(Value::String(cmd)) => cmd.clone(),
        Some(_) => return Err("\"cmd\" must be a string".to_owned()),
        None => return Err("request has no \"cmd\"".to_owned()),
    };
    if !commands.contains(&cmd.as_str()) {
        return Err(format!(
            "unknown cmd {:?}; this hive-c0re knows: {}",
            clip(&cmd),
            commands.join(", ")
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| format!("invalid {cmd} request: {}", clip(&e.to_string())))
}

/// The longest piece of a client's own input an error quotes back (serde
/// quotes a wrong-typed string whole: a 1 MiB one would come back whole).
const QUOTE_CAP: usize = 200;

/// `text` cut to [`QUOTE_CAP`] bytes at a character boundary, `…` marking
/// the cut.
fn clip(text: &str) -> String {
    if text.len() <= QUOTE_CAP {
        return text.to_owned();
    }
    let mut end = QUOTE_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// How long a client may take to read an answer, on every socket.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Write `line` and its `\n` in one call, within [`WRITE_TIMEOUT`]: a
/// client that does not read cannot hold its connection's task forever.
pub async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &str) -> std::io::Result<()> {
    write_terminated(w, &terminated(line)).await
}

/// Write `bytes` (a line with its `\n`) in one call, within
/// [`WRITE_TIMEOUT`].
pub async fn write_terminated<W: AsyncWrite + Unpin>(
    w: &mut W,
    bytes: &[u8],
) -> std::io::Result<()> {
    tokio::time::timeout(WRITE_TIMEOUT, w.write_all(bytes))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "client did not read"))?
}

/// `line` followed by `\n`, ready to write in one call.
pub fn terminated(line: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 1);
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
    out
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
