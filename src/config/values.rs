//! The config file's value types that serde alone does not check: counts
//! the kernel takes and disk sizes, each refused with the value and the rule.

use std::num::NonZeroU32;

use serde::Deserialize;

pub(super) const fn nonzero(n: u32) -> NonZeroU32 {
    match NonZeroU32::new(n) {
        Some(n) => n,
        None => NonZeroU32::MIN,
    }
}

/// A count the kernel takes in a sysctl of type `int`: 1 to 2^31 - 1 (0
/// would forbid inotify in the container; more is refused by the kernel).
pub(super) fn kernel_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NonZeroU32, D::Error> {
    use serde::de::Error as _;
    let n = u32::deserialize(d)?;
    NonZeroU32::new(n)
        .filter(|n| i32::try_from(n.get()).is_ok())
        .ok_or_else(|| {
            D::Error::custom(format!(
                "{n} is not a count the kernel takes (1 to 2147483647)"
            ))
        })
}

/// A disk size: bytes, or a whole number with K, M, G or T (powers of
/// 1024, as systemd's `MemoryMax=` and `agent_memory_max`); `null` is no
/// quota. Refused: 0 (an agent that can write nothing cannot run) and
/// anything under 1 MiB, which is surely a unit forgotten.
pub(super) fn disk_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error as _;
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Bytes(u64),
        Text(String),
    }
    let bytes = match Option::<Size>::deserialize(d)? {
        None => return Ok(None),
        Some(Size::Bytes(n)) => n,
        Some(Size::Text(text)) => parse_size(&text).ok_or_else(|| {
            D::Error::custom(format!(
                "{text:?} is not a size: write bytes or a whole number with K, M, G or T, \
                 such as \"10G\""
            ))
        })?,
    };
    if bytes < 1 << 20 {
        return Err(D::Error::custom(format!(
            "{bytes} bytes is below 1M: write a size such as \"10G\", or null for no quota"
        )));
    }
    Ok(Some(bytes))
}

/// `"10G"` as bytes (K, M, G, T: powers of 1024; no suffix: bytes).
pub fn parse_size(text: &str) -> Option<u64> {
    let (number, shift) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 10),
        b'M' => (&text[..text.len() - 1], 20),
        b'G' => (&text[..text.len() - 1], 30),
        b'T' => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse::<u64>().ok()?.checked_mul(1 << shift)
}
