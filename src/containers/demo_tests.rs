//! Where the demo's harnesses connect.

use super::*;

fn agents() -> DemoAgents {
    DemoAgents {
        program: "/bin/hive-agent".into(),
        runtime_dir: "/run/h".into(),
        dir: "/var/lib/h/demo-agents".into(),
        manager: Ident::new("ruth").unwrap(),
    }
}

#[test]
fn an_agents_harness_uses_its_agent_socket_and_the_managers_the_manager_socket() {
    let a = agents();
    assert_eq!(
        a.socket(&Ident::new("alice").unwrap()),
        PathBuf::from("/run/h/agents/alice/mcp.sock")
    );
    assert_eq!(
        a.socket(&Ident::new("ruth").unwrap()),
        PathBuf::from("/run/h/manager/mcp.sock")
    );
}
