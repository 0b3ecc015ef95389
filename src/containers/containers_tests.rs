use super::*;

use crate::testing::id;

#[test]
fn unit_names_follow_the_profile() {
    assert_eq!(
        Profile::Nspawn.unit_name(&id("alice")),
        "systemd-nspawn@h-alice.service"
    );
    assert_eq!(
        Profile::Nixos.unit_name(&id("alice")),
        "container@h-alice.service"
    );
    assert_eq!(machine_name(&id("alice")), "h-alice");
}

#[test]
fn only_our_units_map_back_to_agents() {
    let p = Profile::Nspawn;
    assert_eq!(
        p.agent_of_unit("systemd-nspawn@h-bob.service"),
        Some(id("bob"))
    );
    assert_eq!(p.agent_of_unit("systemd-nspawn@bob.service"), None);
    assert_eq!(p.agent_of_unit("systemd-nspawn@h-Bob.service"), None);
    assert_eq!(p.agent_of_unit("container@h-bob.service"), None);
    assert_eq!(
        Profile::Nixos.agent_of_unit("container@h-bob.service"),
        Some(id("bob"))
    );
}
