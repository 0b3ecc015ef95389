//! Per-agent resource limits, as `SetUnitProperties` wants them.
//!
//! The spec carries unit-file syntax (`CPUQuota=200%`, `MemoryMax=4G`), but
//! over D-Bus systemd takes the underlying properties: `CPUQuotaPerSecUSec`
//! (microseconds of CPU time per second), `MemoryMax` (bytes) and `TasksMax`
//! (a count, already one in the spec). We convert
//! here, as `systemctl set-property` does. Decision: `SetUnitProperties` with
//! `runtime=false` rather than writing a drop-in file ourselves — systemd
//! persists it under `/etc/systemd/system.control/` and applies it to a
//! running unit at once, without a `daemon-reload` of the whole manager.
//! A missing limit is sent as "no limit", so a rebuild removes a limit the
//! spec no longer has.

use zbus::zvariant::Value;

use crate::containers::ContainerSpec;

/// A limit systemd could not be given; the message names the value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} {value:?} is not understood: {why}")]
pub struct LimitError {
    what: &'static str,
    value: String,
    why: &'static str,
}

/// "No limit" for each property.
const INFINITY: u64 = u64::MAX;

/// `CPUQuota=` (`"150%"`, `"12.5%"`) as microseconds per second.
pub fn cpu_quota_usec(value: &str) -> Result<u64, LimitError> {
    let err = |why| LimitError {
        what: "CPUQuota",
        value: value.to_owned(),
        why,
    };
    let percent = value
        .strip_suffix('%')
        .ok_or_else(|| err("write a percentage such as 200%"))?;
    let (whole, frac) = percent.split_once('.').unwrap_or((percent, ""));
    if frac.len() > 2 || whole.is_empty() {
        return Err(err("use at most two decimals, such as 12.5%"));
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) {
        return Err(err("write a percentage such as 200%"));
    }
    let whole: u64 = whole.parse().map_err(|_| err("too large"))?;
    let frac: u64 = format!("{frac:0<2}").parse().unwrap_or(0);
    let permyriad = whole.checked_mul(100).and_then(|w| w.checked_add(frac));
    let usec = permyriad
        .and_then(|p| p.checked_mul(100))
        .ok_or_else(|| err("too large"))?;
    if usec == 0 {
        return Err(err(
            "a quota of 0% would stop the container; leave it unset for no limit",
        ));
    }
    Ok(usec)
}

/// `MemoryMax=` (`"4G"`, `"512M"`, `"1073741824"`, `"infinity"`) in bytes;
/// suffixes are powers of 1024 as in systemd.
pub fn memory_bytes(value: &str) -> Result<u64, LimitError> {
    let err = |why| LimitError {
        what: "MemoryMax",
        value: value.to_owned(),
        why,
    };
    if value == "infinity" {
        return Ok(INFINITY);
    }
    let (number, shift) = match value.as_bytes().last() {
        Some(b'K') => (&value[..value.len() - 1], 10),
        Some(b'M') => (&value[..value.len() - 1], 20),
        Some(b'G') => (&value[..value.len() - 1], 30),
        Some(b'T') => (&value[..value.len() - 1], 40),
        _ => (value, 0),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(
            "write whole bytes with an optional K, M, G or T, such as 4G",
        ));
    }
    let n: u64 = number.parse().map_err(|_| err("too large"))?;
    n.checked_mul(1u64 << shift).ok_or_else(|| err("too large"))
}

/// The `SetUnitProperties` list for a spec's limits.
pub fn properties(
    cpu_quota: Option<&str>,
    memory_max: Option<&str>,
    tasks_max: Option<u64>,
) -> Result<Vec<(&'static str, Value<'static>)>, LimitError> {
    let cpu = cpu_quota
        .map(cpu_quota_usec)
        .transpose()?
        .unwrap_or(INFINITY);
    let mem = memory_max
        .map(memory_bytes)
        .transpose()?
        .unwrap_or(INFINITY);
    Ok(vec![
        ("CPUQuotaPerSecUSec", Value::U64(cpu)),
        ("MemoryMax", Value::U64(mem)),
        ("TasksMax", Value::U64(tasks_max.unwrap_or(INFINITY))),
    ])
}

/// The `SetUnitProperties` list for `spec`'s limits.
pub fn of(spec: &ContainerSpec) -> Result<Vec<(&'static str, Value<'static>)>, LimitError> {
    properties(
        spec.cpu_quota.as_deref(),
        spec.memory_max.as_deref(),
        spec.tasks_max,
    )
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
