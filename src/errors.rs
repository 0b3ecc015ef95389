//! Errors on one line: the crate's one walker over `source()` chains.
//!
//! An error's `Display` says what failed; its `source()` says why. Where a
//! message goes to a log or a terminal, [`chain`] joins both. The crate's
//! errors keep a cause either in their message or as their source, never
//! both, so nothing is printed twice.

use std::error::Error;

/// `err` and each of its sources, joined by `": "`.
pub fn chain(err: &dyn Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[cfg(test)]
#[path = "errors_tests.rs"]
mod tests;
