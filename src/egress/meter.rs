//! The gateway's meter (issue 46): what one answer of the upstream says it
//! used, read from the answer itself as it passes, and its list cost.
//!
//! - A JSON answer (`stream: false`, count_tokens, models) is kept up to
//!   [`MAX_JSON`] bytes beside the copy that goes to the agent and read at
//!   its end: `model` and `usage`.
//! - A stream (`text/event-stream`) is read line by line as it passes:
//!   only `data:` lines of the events `message_start` (the model and the
//!   first usage) and `message_delta` (the running usage: every figure it
//!   carries replaces the one before, as the API's are cumulative), and an
//!   `error` event's message. Lines longer than [`MAX_LINE`] (a big text
//!   delta) are skipped whole, never kept. Nothing is held back from the
//!   agent: the tap reads copies of the chunks already on their way.
//! - The list cost is the shipped price table's ([`Prices`],
//!   `model_prices.json`, compiled in): a model is priced by the longest
//!   key its name starts with; a model not in it is counted in tokens, its
//!   cost unknown, and said once in the journal.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;

use crate::wire::model_log::Tokens;

/// The most of a JSON answer kept for reading its usage.
pub const MAX_JSON: usize = 4 << 20;
/// The longest event-stream line read.
pub const MAX_LINE: usize = 256 << 10;

/// One model's list prices, US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

impl Price {
    /// What `tokens` cost at these prices, in millionths of a dollar
    /// (tokens x dollars per million tokens is exactly that), rounded.
    pub fn micro_usd(&self, tokens: &Tokens) -> u64 {
        let sum = tokens.input as f64 * self.input
            + tokens.output as f64 * self.output
            + tokens.cache_write as f64 * self.cache_write
            + tokens.cache_read as f64 * self.cache_read;
        sum.round().max(0.0) as u64
    }
}

#[derive(Deserialize)]
struct PriceFile {
    models: BTreeMap<String, Price>,
}

/// The price table shipped with the package.
pub const SHIPPED_PRICES: &str = include_str!("model_prices.json");

/// A price table and the models already said to be missing from it.
#[derive(Debug)]
pub struct Prices {
    models: BTreeMap<String, Price>,
    warned: Mutex<HashSet<String>>,
}

impl Prices {
    /// The shipped table (compiled in, checked by a test: an unreadable one
    /// is an empty table, every cost unknown, rather than a service that
    /// does not start).
    pub fn shipped() -> Self {
        Self::parse(SHIPPED_PRICES).unwrap_or_else(|_| Self::new(BTreeMap::new()))
    }

    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let file: PriceFile = serde_json::from_str(text)?;
        Ok(Self::new(file.models))
    }

    pub fn new(models: BTreeMap<String, Price>) -> Self {
        Self {
            models,
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// `model`'s prices: the longest key it starts with.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.models
            .iter()
            .filter(|(k, _)| model.starts_with(k.as_str()))
            .max_by_key(|(k, _)| k.len())
            .map(|(_, p)| *p)
    }

    /// The cost of `tokens` on `model`; none for an unknown model (said
    /// once per model in the journal) or no model at all.
    pub fn cost(&self, model: Option<&str>, tokens: &Tokens) -> Option<u64> {
        let model = model?;
        match self.price(model) {
            Some(price) => Some(price.micro_usd(tokens)),
            None => {
                let first = self
                    .warned
                    .lock()
                    .map(|mut w| w.len() < 1000 && w.insert(model.to_owned()))
                    .unwrap_or(false);
                if first {
                    tracing::warn!(
                        "model gateway: model {model:?} is not in the price table; its requests are metered in tokens, their cost unknown"
                    );
                }
                None
            }
        }
    }
}

/// What an answer is, for reading its usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Json,
    Stream,
}

/// Reads one answer's usage from copies of its chunks.
#[derive(Debug)]
pub struct Tap {
    kind: Kind,
    buf: Vec<u8>,
    /// Skipping the rest of a line past [`MAX_LINE`].
    skipping: bool,
    /// A JSON answer past [`MAX_JSON`]: not read.
    overflow: bool,
    pub model: Option<String>,
    pub tokens: Tokens,
    /// An `error` event's message, or a JSON error answer's.
    pub error: Option<String>,
}

impl Tap {
    pub fn new(kind: Kind) -> Self {
        Self {
            kind,
            buf: Vec::new(),
            skipping: false,
            overflow: false,
            model: None,
            tokens: Tokens::default(),
            error: None,
        }
    }

    /// A chunk of the answer, as it passes.
    pub fn feed(&mut self, chunk: &[u8]) {
        match self.kind {
            Kind::Json => {
                if self.overflow || self.buf.len() + chunk.len() > MAX_JSON {
                    self.overflow = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            Kind::Stream => {
                let mut rest = chunk;
                while let Some(i) = rest.iter().position(|&b| b == b'\n') {
                    if !self.skipping && self.buf.len() + i <= MAX_LINE {
                        self.buf.extend_from_slice(&rest[..i]);
                        let line = std::mem::take(&mut self.buf);
                        self.line(&line);
                    }
                    self.buf.clear();
                    self.skipping = false;
                    rest = &rest[i + 1..];
                }
                if !self.skipping {
                    if self.buf.len() + rest.len() > MAX_LINE {
                        self.skipping = true;
                        self.buf = Vec::new();
                    } else {
                        self.buf.extend_from_slice(rest);
                    }
                }
            }
        }
    }

    /// The answer ended: read what a JSON answer said.
    pub fn end(&mut self) {
        if self.kind == Kind::Json && !self.overflow {
            let buf = std::mem::take(&mut self.buf);
            if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                self.message(&v);
                if v.get("type").and_then(Value::as_str) == Some("error") {
                    self.error = error_message(&v);
                }
            }
        }
    }

    /// One event-stream line.
    fn line(&mut self, line: &[u8]) {
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let data = data.strip_suffix(b"\r").unwrap_or(data);
        let Ok(v) = serde_json::from_slice::<Value>(data) else {
            return;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(m) = v.get("message") {
                    self.message(m);
                }
            }
            Some("message_delta") => {
                if let Some(u) = v.get("usage") {
                    self.usage(u);
                }
            }
            Some("error") => self.error = error_message(&v),
            _ => {}
        }
    }

    /// A message object: its model and usage.
    fn message(&mut self, m: &Value) {
        if let Some(model) = m.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        if let Some(u) = m.get("usage") {
            self.usage(u);
        }
    }

    /// A usage object: each figure it carries replaces the one before.
    fn usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(n) = get("input_tokens") {
            self.tokens.input = n;
        }
        if let Some(n) = get("output_tokens") {
            self.tokens.output = n;
        }
        if let Some(n) = get("cache_creation_input_tokens") {
            self.tokens.cache_write = n;
        }
        if let Some(n) = get("cache_read_input_tokens") {
            self.tokens.cache_read = n;
        }
    }
}

/// An Anthropic error object's `error.message`, else its `error.type`.
fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    e.get("message")
        .or_else(|| e.get("type"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
#[path = "meter_tests.rs"]
mod tests;
