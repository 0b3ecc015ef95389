use super::*;
use crate::testing::id;

#[test]
fn a_missed_window_fires_once_and_moves_to_the_next_future_slot() {
    // Due at 100, every 60 s; fired on time: next is 160.
    assert_eq!(next_fire_after(100, Some(60), 100), Some(160));
    // Fired 10 minutes late: next is the first slot after now.
    assert_eq!(next_fire_after(100, Some(60), 700), Some(760));
    assert_eq!(next_fire_after(100, Some(60), 701), Some(760));
    // Fired early (fire-now before the due time): one step on.
    assert_eq!(next_fire_after(100, Some(60), 50), Some(160));
    assert_eq!(next_fire_after(100, None, 100), None);
    assert_eq!(next_fire_after(100, Some(0), 100), None);
}

#[test]
fn reminder_due_times_are_relative_to_now_or_absolute() {
    assert_eq!(
        reminder_due(&ReminderTiming::InSeconds { seconds: 30 }, 1000),
        1030
    );
    assert_eq!(
        reminder_due(&ReminderTiming::At { unix_timestamp: 5 }, 1000),
        5
    );
    assert_eq!(
        reminder_due(&ReminderTiming::InSeconds { seconds: u64::MAX }, 1),
        i64::MAX
    );
}

#[test]
fn file_paths_that_leave_the_state_directory_are_refused_lexically() {
    assert_eq!(
        check_relative_path("notes/./today.md").unwrap(),
        vec!["notes", "today.md"]
    );
    for bad in ["../x", "a/../../x", "/etc/passwd", "", ".", "a\0b"] {
        assert!(
            matches!(check_relative_path(bad), Err(AgendaError::BadPath { .. })),
            "{bad:?}"
        );
    }
    assert!(check_relative_path(&"a".repeat(256)).is_err());
}

#[test]
fn schedule_targets_are_agents_or_the_operator() {
    assert_eq!(
        ScheduleTarget::parse("operator"),
        Ok(ScheduleTarget::Operator)
    );
    assert_eq!(
        ScheduleTarget::parse("alice"),
        Ok(ScheduleTarget::Agent(id("alice")))
    );
    assert!(ScheduleTarget::parse("Alice!").is_err());
}

#[test]
fn ages_saturate_at_zero_when_the_clock_goes_back() {
    assert_eq!(age(100, 150), 50);
    assert_eq!(age(200, 150), 0);
}
