use super::*;

#[test]
fn the_container_env_lists_grants_comma_separated_in_snake_case() {
    let env = grant_env(
        &[Capability::ReadHostJournal, Capability::QueryAgentState],
        ToolGroup::AGENT_DEFAULT,
    );
    assert_eq!(
        env,
        vec![
            (
                "HIVE_CAPABILITIES".to_owned(),
                "read_host_journal,query_agent_state".to_owned()
            ),
            (
                "HIVE_TOOL_GROUPS".to_owned(),
                "messaging,meta,inbox,execution".to_owned()
            ),
        ]
    );
    assert_eq!(grant_env(&[], &[ToolGroup::WebTools])[0].1, "");
    assert_eq!(grant_env(&[], &[ToolGroup::WebTools])[1].1, "web_tools");
}
