use super::*;

#[test]
fn cpu_quota_percentages_become_microseconds_per_second() {
    assert_eq!(cpu_quota_usec("200%"), Ok(2_000_000));
    assert_eq!(cpu_quota_usec("20%"), Ok(200_000));
    assert_eq!(cpu_quota_usec("12.5%"), Ok(125_000));
    for bad in ["200", "%", "1.234%", "-5%", "0%", "abc%"] {
        assert!(cpu_quota_usec(bad).is_err(), "{bad}");
    }
}

#[test]
fn memory_sizes_use_powers_of_1024() {
    assert_eq!(memory_bytes("4G"), Ok(4 << 30));
    assert_eq!(memory_bytes("512M"), Ok(512 << 20));
    assert_eq!(memory_bytes("1000"), Ok(1000));
    assert_eq!(memory_bytes("infinity"), Ok(u64::MAX));
    for bad in ["G", "4 G", "50%", "1.5G", "99999999999T"] {
        assert!(memory_bytes(bad).is_err(), "{bad}");
    }
}

#[test]
fn an_absent_limit_is_sent_as_no_limit() {
    let props = properties(None, Some("1K"), None).unwrap();
    assert_eq!(props[0], ("CPUQuotaPerSecUSec", Value::U64(u64::MAX)));
    assert_eq!(props[1], ("MemoryMax", Value::U64(1024)));
    assert_eq!(props[2], ("TasksMax", Value::U64(u64::MAX)));
}

#[test]
fn a_tasks_limit_is_sent_as_the_count_it_is() {
    let props = properties(None, None, Some(4096)).unwrap();
    assert_eq!(props[2], ("TasksMax", Value::U64(4096)));
}
