use super::*;
use crate::testing::id;

#[test]
fn a_name_without_an_at_is_local_as_before() {
    for to in ["bob", "operator", "<parent>", "<children>", "Nope"] {
        assert_eq!(parse(to, Some(&id("hive-a"))), Ok(Address::Local(to)));
        assert_eq!(parse(to, None), Ok(Address::Local(to)));
    }
}

#[test]
fn agent_at_another_hive_is_remote() {
    assert_eq!(
        parse("bob@hive-b", Some(&id("hive-a"))),
        Ok(Address::Remote(RemoteAddress {
            agent: id("bob"),
            hive: id("hive-b")
        }))
    );
    assert_eq!(
        parse("operator@hive-b", Some(&id("hive-a"))).map(|a| match a {
            Address::Remote(r) => r.to_string(),
            Address::Local(l) => l.to_owned(),
        }),
        Ok("operator@hive-b".to_owned())
    );
}

#[test]
fn an_address_naming_this_hive_is_local() {
    assert_eq!(
        parse("bob@hive-a", Some(&id("hive-a"))),
        Ok(Address::Local("bob"))
    );
}

#[test]
fn system_at_any_hive_is_refused_as_no_inbox() {
    for own in [Some(id("hive-a")), None] {
        for to in ["system@hive-b", "system@hive-a"] {
            let err = parse(to, own.as_ref()).unwrap_err();
            assert_eq!(err, UnknownRecipient::Reserved(to.to_owned()));
            assert!(err.to_string().contains("names no inbox"), "{err}");
        }
    }
}

#[test]
fn a_malformed_address_is_refused_by_name() {
    for to in [
        "@hive-b",
        "bob@",
        "bob@hive@b",
        "<parent>@hive-b",
        "Bob@hive-b",
        "bob@../x",
    ] {
        let err = parse(to, Some(&id("hive-a"))).unwrap_err();
        assert_eq!(err, UnknownRecipient::Malformed(to.to_owned()));
        assert!(err.to_string().contains(to), "{err}");
    }
}

#[test]
fn a_remote_address_outside_a_swarm_says_there_is_no_swarm() {
    let err = parse("bob@hive-b", None).unwrap_err();
    assert_eq!(err, UnknownRecipient::NoSwarm("bob@hive-b".into()));
    assert!(err.to_string().contains("not in a swarm"), "{err}");
}
