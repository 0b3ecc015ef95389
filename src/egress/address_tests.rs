//! The address classification, range by range: the first and last address
//! of each refused range, the addresses just outside it, the IPv6 forms of
//! IPv4 addresses, and the check of a whole DNS answer. Before issue 44
//! the proxy dialled whatever a granted name resolved to (127.0.0.1,
//! 0.0.0.0, 169.254.169.254 and `::ffff:169.254.169.254` all answered).

use std::net::{IpAddr, SocketAddr};

use super::*;

fn kind(ip: &str) -> Option<Kind> {
    forbidden(ip.parse::<IpAddr>().unwrap()).map(|f| f.kind)
}

fn assert_kind(addresses: &[&str], expected: Option<Kind>) {
    for ip in addresses {
        assert_eq!(kind(ip), expected, "{ip}");
    }
}

#[test]
fn loopback_is_refused_in_all_of_127_slash_8_and_ipv6s_one_address() {
    assert_kind(
        &[
            "127.0.0.0",
            "127.0.0.1",
            "127.0.0.2",
            "127.255.255.255",
            "::1",
        ],
        Some(Kind::Loopback),
    );
    assert_kind(&["126.255.255.255", "128.0.0.0", "::2:0:0:1"], None);
}

#[test]
fn this_network_is_refused_as_unspecified_in_all_of_0_slash_8_and_ipv6s_any() {
    assert_kind(
        &["0.0.0.0", "0.0.0.1", "0.255.255.255", "::"],
        Some(Kind::Unspecified),
    );
    assert_kind(&["1.0.0.0", "1.1.1.1"], None);
}

#[test]
fn rfc_1918_networks_and_ipv6_ula_and_site_local_are_refused_as_private() {
    assert_kind(
        &[
            "10.0.0.0",
            "10.1.2.3",
            "10.255.255.255",
            "172.16.0.0",
            "172.31.255.255",
            "192.168.0.0",
            "192.168.255.255",
            "fc00::",
            "fd00:ec2::254",
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "fec0::1",
            "feff:ffff::1",
            "64:ff9b:1::1",
        ],
        Some(Kind::Private),
    );
    assert_kind(
        &[
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "fe00::",
            "64:ff9b:2::1",
        ],
        None,
    );
}

#[test]
fn link_local_is_refused_with_the_metadata_service_in_both_families() {
    assert_kind(
        &[
            "169.254.0.0",
            "169.254.169.254",
            "169.254.255.255",
            "fe80::",
            "fe80::1",
            "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
        Some(Kind::LinkLocal),
    );
    assert_kind(&["169.253.255.255", "169.255.0.0", "fe7f::1"], None);
}

#[test]
fn carrier_grade_nat_100_64_slash_10_is_refused_as_shared() {
    assert_kind(
        &["100.64.0.0", "100.100.100.200", "100.127.255.255"],
        Some(Kind::Shared),
    );
    assert_kind(&["100.63.255.255", "100.128.0.0"], None);
}

#[test]
fn multicast_is_refused_in_both_families() {
    assert_kind(
        &[
            "224.0.0.0",
            "224.0.0.251",
            "239.255.255.255",
            "ff00::",
            "ff02::1",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ],
        Some(Kind::Multicast),
    );
    assert_kind(&["223.255.255.255", "fe00::1"], None);
}

#[test]
fn the_broadcast_address_is_named_as_such_and_the_rest_of_240_slash_4_is_reserved() {
    assert_kind(&["255.255.255.255"], Some(Kind::Broadcast));
    assert_kind(
        &["240.0.0.0", "250.1.2.3", "255.255.255.254"],
        Some(Kind::Reserved),
    );
}

#[test]
fn ietf_assignments_discard_only_documentation_and_benchmarking_ranges_are_refused() {
    assert_kind(
        &[
            "192.0.0.0",
            "192.0.0.192",
            "192.0.0.255",
            "100::",
            "100::ffff",
        ],
        Some(Kind::Reserved),
    );
    assert_kind(
        &[
            "192.0.2.0",
            "192.0.2.255",
            "198.51.100.7",
            "203.0.113.255",
            "2001:db8::1",
        ],
        Some(Kind::Documentation),
    );
    assert_kind(&["198.18.0.0", "198.19.255.255"], Some(Kind::Benchmarking));
    assert_kind(
        &[
            "192.0.1.0",
            "192.0.3.0",
            "198.17.255.255",
            "198.20.0.0",
            "203.0.112.255",
            "203.0.114.0",
            "100:0:0:1::",
            "2001:db9::1",
        ],
        None,
    );
}

#[test]
fn public_addresses_of_both_families_are_dialled() {
    assert_kind(
        &[
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "160.79.104.10",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::1",
        ],
        None,
    );
}

#[test]
fn ipv4_mapped_forms_are_judged_as_the_ipv4_address_they_carry() {
    for (ip, expected) in [
        ("::ffff:127.0.0.1", Some(Kind::Loopback)),
        ("::ffff:169.254.169.254", Some(Kind::LinkLocal)),
        ("::ffff:0.0.0.0", Some(Kind::Unspecified)),
        ("::ffff:10.1.2.3", Some(Kind::Private)),
        ("::ffff:100.64.0.1", Some(Kind::Shared)),
        ("::ffff:255.255.255.255", Some(Kind::Broadcast)),
        ("::ffff:93.184.216.34", None),
    ] {
        assert_eq!(kind(ip), expected, "{ip}");
    }
    let why = forbidden("::ffff:169.254.169.254".parse().unwrap()).unwrap();
    assert_eq!(
        why.via,
        Some((Embedding::Mapped, "169.254.169.254".parse().unwrap()))
    );
    assert_eq!(
        why.to_string(),
        "the IPv4-mapped form of 169.254.169.254, a link-local address \
         (where cloud metadata services live)"
    );
}

#[test]
fn ipv4_compatible_nat64_and_6to4_forms_are_judged_as_their_ipv4_address() {
    for (ip, expected, how) in [
        ("::127.0.0.1", Some(Kind::Loopback), Embedding::Compatible),
        (
            "::169.254.169.254",
            Some(Kind::LinkLocal),
            Embedding::Compatible,
        ),
        ("64:ff9b::127.0.0.1", Some(Kind::Loopback), Embedding::Nat64),
        (
            "64:ff9b::a9fe:a9fe",
            Some(Kind::LinkLocal),
            Embedding::Nat64,
        ),
        ("64:ff9b::10.0.0.1", Some(Kind::Private), Embedding::Nat64),
        ("2002:7f00:1::1", Some(Kind::Loopback), Embedding::SixToFour),
        (
            "2002:a9fe:a9fe::",
            Some(Kind::LinkLocal),
            Embedding::SixToFour,
        ),
    ] {
        let why = forbidden(ip.parse().unwrap());
        assert_eq!(why.map(|f| f.kind), expected, "{ip}");
        assert_eq!(why.and_then(|f| f.via).map(|(h, _)| h), Some(how), "{ip}");
    }
    // The same prefixes carrying a public address are dialled (a host
    // behind NAT64 reaches the internet that way).
    assert_kind(
        &[
            "::93.184.216.34",
            "64:ff9b::93.184.216.34",
            "2002:5db8:d822::1",
        ],
        None,
    );
}

fn addrs(list: &[&str]) -> Vec<SocketAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

#[test]
fn an_answer_of_public_addresses_is_dialled_as_it_came() {
    let answer = addrs(&["93.184.216.34:443", "[2606:4700::1111]:443"]);
    assert_eq!(check("example.org", 443, answer.clone(), false), Ok(answer));
}

#[test]
fn a_name_resolving_to_loopback_is_refused_naming_the_address_and_the_ip_literal_to_ask_for() {
    let refusal = check("api.evil.test", 443, addrs(&["127.0.0.1:443"]), false).unwrap_err();
    assert_eq!(refusal.address, "127.0.0.1".parse::<IpAddr>().unwrap());
    assert_eq!(refusal.why.kind, Kind::Loopback);
    let body = refusal.body();
    assert!(
        body.starts_with(
            "hive-c0re egress: api.evil.test:443 resolved to 127.0.0.1, a loopback address. \
             The hive dials no loopback, private, link-local"
        ),
        "{body}"
    );
    assert!(
        body.contains("grant its IP literal (e.g. \"127.0.0.1:443\")"),
        "{body}"
    );
    assert_eq!(body.matches('\n').count(), 1, "one line: {body}");
}

#[test]
fn one_forbidden_address_among_public_ones_refuses_the_whole_answer_and_says_so() {
    let answer = addrs(&["93.184.216.34:80", "[::ffff:169.254.169.254]:80"]);
    let refusal = check("mix.evil.test", 80, answer, false).unwrap_err();
    assert!(refusal.mixed());
    let body = refusal.body();
    assert!(
        body.contains(
            "mix.evil.test:80 resolved to 93.184.216.34, ::ffff:169.254.169.254, and \
             ::ffff:169.254.169.254 is the IPv4-mapped form of 169.254.169.254, a link-local"
        ),
        "{body}"
    );
    assert!(body.contains("refused whole"), "{body}");
}

#[test]
fn an_ip_literal_the_operator_granted_exactly_is_dialled_even_on_loopback() {
    let answer = addrs(&["127.0.0.2:47021"]);
    assert_eq!(
        check("127.0.0.2", 47021, answer.clone(), true),
        Ok(answer.clone())
    );
    // Not granted as itself (matched by a wildcard, say): refused, in
    // words that do not speak of resolving.
    let refusal = check("127.0.0.2", 47021, answer, false).unwrap_err();
    assert!(
        refusal
            .body()
            .starts_with("hive-c0re egress: 127.0.0.2:47021 is a loopback address."),
        "{}",
        refusal.body()
    );
}

/// Used to be: a grant of `169.254.169.254:80` was accepted and dialled,
/// opening the cloud metadata service (and the host's credentials) to
/// the agent.
#[test]
fn no_grant_opens_a_metadata_service_or_an_address_of_no_one_host() {
    for literal in [
        "169.254.169.254:80",
        "100.100.100.200:80",
        "192.0.0.192:80",
        "0.0.0.0:80",
        "224.0.0.1:80",
        "255.255.255.255:80",
    ] {
        let answer = addrs(&[literal]);
        let (host, port) = literal.rsplit_once(':').unwrap();
        let refused = check(host, port.parse().unwrap(), answer, true);
        assert!(refused.is_err(), "{literal} was dialled");
    }
    let private = addrs(&["10.1.2.3:5432"]);
    assert_eq!(check("10.1.2.3", 5432, private.clone(), true), Ok(private));
}
