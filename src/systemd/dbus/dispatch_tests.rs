use super::*;

#[test]
fn the_list_pattern_matches_the_profiles_unit_names() {
    let agent = Ident::new("x").unwrap();
    for profile in [Profile::Nspawn, Profile::Nixos] {
        let unit = unit_pattern(profile).replace('*', "x");
        assert_eq!(profile.agent_of_unit(&unit), Some(agent.clone()));
        assert_eq!(unit, profile.unit_name(&agent));
    }
}
