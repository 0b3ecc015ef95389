use super::*;
use crate::store::Store;

#[test]
fn the_first_tool_group_change_starts_from_the_defaults_and_may_empty_the_set() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            assert_eq!(tool_groups(c, "a")?, ToolGroup::AGENT_DEFAULT);
            assert!(set_tool_group(c, "a", ToolGroup::Lifecycle, true)?);
            assert!(!set_tool_group(c, "a", ToolGroup::Lifecycle, true)?);
            let mut want = ToolGroup::AGENT_DEFAULT.to_vec();
            want.push(ToolGroup::Lifecycle);
            want.sort();
            assert_eq!(tool_groups(c, "a")?, want);
            for g in want {
                set_tool_group(c, "a", g, false)?;
            }
            assert_eq!(tool_groups(c, "a")?, Vec::<ToolGroup>::new());
            forget(c, "a")?;
            assert_eq!(tool_groups(c, "a")?, ToolGroup::AGENT_DEFAULT);
            Ok(())
        })
        .unwrap();
}

#[test]
fn capabilities_are_granted_and_revoked_idempotently() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            assert!(capabilities(c, "a")?.is_empty());
            assert!(set_capability(c, "a", Capability::ReadHostJournal, true)?);
            assert!(!set_capability(c, "a", Capability::ReadHostJournal, true)?);
            assert_eq!(capabilities(c, "a")?, vec![Capability::ReadHostJournal]);
            assert!(set_capability(c, "a", Capability::ReadHostJournal, false)?);
            assert!(!set_capability(c, "a", Capability::ReadHostJournal, false)?);
            Ok(())
        })
        .unwrap();
}
