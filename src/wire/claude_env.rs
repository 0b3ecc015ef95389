//! `HIVE_CLAUDE_ENV`: the environment an agent's reviewed `agent.json`
//! gives Claude Code (its `environment`, its `model` as `ANTHROPIC_MODEL`),
//! carried from the daemon to the harness in one variable of the
//! container's environment.
//!
//! The daemon can only set variables for the container's init (the
//! settings file's `Environment=`, the nixos profile's `--setenv=`); systemd
//! starts `hive-agent.service` in a clean environment and passes on only
//! the names its unit lists (`PassEnvironment=`), and an unprivileged
//! harness cannot read its init's `/proc/1/environ`. So the agent's own
//! variables, whose names only the reviewed config knows, travel as one
//! listed variable the harness decodes and hands to each turn's command.
//! Rejected: an environment file the daemon writes into the agent's bound
//! runtime directory (one more file to keep in step at every start, in a
//! directory the agent's user owns).
//!
//! Format: `NAME=VALUE` entries joined by `,`, each value percent-encoded
//! but for `A-Z a-z 0-9 - . _ ~ / : @ + =`, so the whole value has no
//! space, quote, backslash, comma or control character: it fits both
//! settings-file formats unquoted (the nixos profile splits its flags on
//! spaces). An empty value is no variables.

/// The container environment variable carrying the agent's variables.
pub const ENV_CLAUDE_ENV: &str = "HIVE_CLAUDE_ENV";

/// Why a `HIVE_CLAUDE_ENV` value cannot be read; names the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ENV_CLAUDE_ENV}: entry {0:?} is not NAME=VALUE with a percent-encoded UTF-8 value")]
pub struct BadClaudeEnv(pub String);

fn kept(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~/:@+=".contains(&b)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()))
}

/// The value for `vars` (names as `agent.json` allows them).
pub fn encode<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (name, value) in vars {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(name);
        out.push('=');
        for b in value.bytes() {
            if kept(b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// The variables of a value [`encode`] made, in its order.
pub fn decode(text: &str) -> Result<Vec<(String, String)>, BadClaudeEnv> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|entry| {
            let bad = || BadClaudeEnv(entry.chars().take(80).collect());
            let (name, value) = entry.split_once('=').ok_or_else(bad)?;
            if !valid_name(name) {
                return Err(bad());
            }
            let mut bytes = Vec::with_capacity(value.len());
            let mut rest = value.as_bytes();
            while let Some((&b, tail)) = rest.split_first() {
                if b == b'%' {
                    let hex = tail.get(..2).ok_or_else(bad)?;
                    let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
                    bytes.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
                    rest = &tail[2..];
                } else {
                    bytes.push(b);
                    rest = tail;
                }
            }
            let value = String::from_utf8(bytes).map_err(|_| bad())?;
            Ok((name.to_owned(), value))
        })
        .collect()
}

#[cfg(test)]
#[path = "claude_env_tests.rs"]
mod tests;
