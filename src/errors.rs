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
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the config")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_chain_names_the_error_then_each_cause_once() {
        let err = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(chain(&err), "cannot read the config: disk on fire");
    }

    #[test]
    fn an_error_without_a_source_is_its_message() {
        assert_eq!(chain(&std::io::Error::other("plain")), "plain");
    }
}
