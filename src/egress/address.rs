//! Which addresses the proxy never dials through a name (issue 44): a
//! pure classification of one IP address, and the check of a name's whole
//! DNS answer.
//!
//! Decisions:
//! - **The address decides, not the name.** An allow-listed name (above
//!   all a `*.domain` wildcard, or a domain whose DNS the agent's attacker
//!   controls) can resolve to the host's loopback, a private network or
//!   the cloud metadata service; the proxy resolves first, checks every
//!   address of the answer here, and dials only what passed. Rejected:
//!   leaving it to the unit's `IPAddressDeny=` (systemd drops it without a
//!   word where cgroup BPF is missing, and it cannot tell the operator's
//!   own grant of `127.0.0.1:PORT` from a DNS trick) and checking the name
//!   (`localhost`, `*.nip.io`, a rebinding domain: any name can point
//!   anywhere).
//! - **Refused: every address that is not globally reachable in IANA's
//!   special-purpose registries**, named in the answer by its kind:
//!   loopback, unspecified ("this network", `0.0.0.0/8`, `::`), private
//!   (RFC 1918, IPv6 ULA `fc00::/7`, the deprecated site-local
//!   `fec0::/10`, NAT64's local-use `64:ff9b:1::/48`), link-local
//!   (`169.254/16`, `fe80::/10`: the metadata service), shared (CGNAT
//!   `100.64/10`: Alibaba's metadata service), multicast, broadcast,
//!   reserved (`240/4`, IETF protocol assignments `192.0.0/24`: Oracle's
//!   old metadata service, `100::/64` discard-only), documentation and
//!   benchmarking ranges.
//! - **IPv6 forms of an IPv4 address are judged as that IPv4 address**:
//!   IPv4-mapped `::ffff:a.b.c.d` (the kernel dials the IPv4 address),
//!   IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` (a translator
//!   dials the IPv4 address) and 6to4 `2002:AABB:CCDD::/48` (a relay
//!   does). Rejected: refusing those prefixes whole, which would also
//!   refuse a public address reached through the host's NAT64.
//! - **One forbidden address refuses the whole answer**, even beside
//!   public ones: an answer the attacker writes must not get its one
//!   forbidden address dialled when the others fail (the dialler tries
//!   them in turn). Rejected: dialling only the public ones, which hides
//!   the attempt and still lets a rebinding answer pick the order.
//! - **The operator's IP literal is the one exception**: a request for the
//!   literal `127.0.0.2:47021` matched by that exact pattern (not by a
//!   wildcard) is dialled, so a host-local service can still be granted,
//!   by its address, never through a name ([`check`]'s `literal_granted`).
//!   Only a loopback or private literal, or a public one: no grant opens a
//!   metadata service (link-local, shared, reserved) or an address that
//!   names no one host ([`Kind::grantable`]); the grant door refuses such a
//!   literal, and the dialler refuses it whatever list it came from.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The kind of address the proxy does not dial through a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Loopback,
    Unspecified,
    Private,
    LinkLocal,
    Shared,
    Multicast,
    Broadcast,
    Reserved,
    Documentation,
    Benchmarking,
}

impl Kind {
    /// Whether an operator's exact IP-literal grant may open an address of
    /// this kind: a host-local or private service, yes; a metadata service
    /// or an address that names no one host, never.
    pub fn grantable(self) -> bool {
        matches!(self, Self::Loopback | Self::Private)
    }

    /// The kind as the refusal says it ("a loopback address").
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Loopback => "a loopback address",
            Self::Unspecified => "an unspecified (this-network) address",
            Self::Private => "a private address",
            Self::LinkLocal => "a link-local address (where cloud metadata services live)",
            Self::Shared => "a shared (carrier-grade NAT) address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Reserved => "a reserved address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
        }
    }
}

/// How an IPv6 address carries the IPv4 address it was judged as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d` (deprecated, still dialled as IPv4 by some stacks).
    Compatible,
    /// `64:ff9b::a.b.c.d` (RFC 6052).
    Nat64,
    /// `2002:AABB:CCDD::/48`.
    SixToFour,
}

impl Embedding {
    fn phrase(self) -> &'static str {
        match self {
            Self::Mapped => "the IPv4-mapped form",
            Self::Compatible => "the IPv4-compatible form",
            Self::Nat64 => "the NAT64 form",
            Self::SixToFour => "a 6to4 form",
        }
    }
}

/// Why one address is not dialled through a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forbidden {
    pub kind: Kind,
    /// Set when an IPv6 address was judged as the IPv4 address it carries.
    pub via: Option<(Embedding, Ipv4Addr)>,
}

impl fmt::Display for Forbidden {
    /// "a loopback address", or "the IPv4-mapped form of 127.0.0.1, a
    /// loopback address".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((how, v4)) = self.via {
            write!(f, "{} of {v4}, ", how.phrase())?;
        }
        f.write_str(self.kind.phrase())
    }
}

/// IPv4 ranges refused, most specific first where they nest
/// (`255.255.255.255` inside `240/4`).
const V4: &[([u8; 4], u8, Kind)] = &[
    ([255, 255, 255, 255], 32, Kind::Broadcast),
    ([0, 0, 0, 0], 8, Kind::Unspecified),
    ([10, 0, 0, 0], 8, Kind::Private),
    ([100, 64, 0, 0], 10, Kind::Shared),
    ([127, 0, 0, 0], 8, Kind::Loopback),
    ([169, 254, 0, 0], 16, Kind::LinkLocal),
    ([172, 16, 0, 0], 12, Kind::Private),
    ([192, 0, 0, 0], 24, Kind::Reserved),
    ([192, 0, 2, 0], 24, Kind::Documentation),
    ([192, 168, 0, 0], 16, Kind::Private),
    ([198, 18, 0, 0], 15, Kind::Benchmarking),
    ([198, 51, 100, 0], 24, Kind::Documentation),
    ([203, 0, 113, 0], 24, Kind::Documentation),
    ([224, 0, 0, 0], 4, Kind::Multicast),
    ([240, 0, 0, 0], 4, Kind::Reserved),
];

/// IPv6 ranges refused outright (the embedding prefixes are handled before
/// these).
const V6: &[(u128, u8, Kind)] = &[
    (0, 128, Kind::Unspecified),
    (1, 128, Kind::Loopback),
    (0x0064_ff9b_0001_u128 << 80, 48, Kind::Private),
    (0x0100_u128 << 112, 64, Kind::Reserved),
    (0x2001_0db8_u128 << 96, 32, Kind::Documentation),
    (0xfc00_u128 << 112, 7, Kind::Private),
    (0xfe80_u128 << 112, 10, Kind::LinkLocal),
    (0xfec0_u128 << 112, 10, Kind::Private),
    (0xff00_u128 << 112, 8, Kind::Multicast),
];

fn in_v4(ip: Ipv4Addr, net: [u8; 4], len: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from_be_bytes(net) & mask
}

fn in_v6(ip: u128, net: u128, len: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    ip & mask == net & mask
}

/// Why `ip` is not dialled through a name, or `None` for an address the
/// proxy dials.
pub fn forbidden(ip: IpAddr) -> Option<Forbidden> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4).map(|kind| Forbidden { kind, via: None }),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<Kind> {
    V4.iter()
        .find(|(net, len, _)| in_v4(ip, *net, *len))
        .map(|&(_, _, kind)| kind)
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<Forbidden> {
    let bits = u128::from(ip);
    if let Some((how, v4)) = embedded_v4(bits) {
        return forbidden_v4(v4).map(|kind| Forbidden {
            kind,
            via: Some((how, v4)),
        });
    }
    V6.iter()
        .find(|(net, len, _)| in_v6(bits, *net, *len))
        .map(|&(_, _, kind)| Forbidden { kind, via: None })
}

/// The IPv4 address an IPv6 address carries, and how (`::` and `::1` are
/// IPv6's own, not IPv4-compatible forms).
fn embedded_v4(bits: u128) -> Option<(Embedding, Ipv4Addr)> {
    let low = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if in_v6(bits, 0xffff_u128 << 32, 96) {
        Some((Embedding::Mapped, low))
    } else if in_v6(bits, 0, 96) && bits > 1 {
        Some((Embedding::Compatible, low))
    } else if in_v6(bits, 0x0064_ff9b_u128 << 96, 96) {
        Some((Embedding::Nat64, low))
    } else if in_v6(bits, 0x2002_u128 << 112, 16) {
        Some((Embedding::SixToFour, Ipv4Addr::from((bits >> 80) as u32)))
    } else {
        None
    }
}

/// Why a name's answer is not dialled: the address refused, why, and the
/// whole answer (to say when it was a mix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The request's host: a name, or the IP literal itself.
    pub host: String,
    pub port: u16,
    /// Every address the name resolved to.
    pub answer: Vec<IpAddr>,
    /// The first refused one and why.
    pub address: IpAddr,
    pub why: Forbidden,
}

impl Refusal {
    /// Whether the answer had addresses the proxy would dial beside the
    /// refused one.
    pub fn mixed(&self) -> bool {
        self.answer.iter().any(|&ip| forbidden(ip).is_none())
    }

    /// What was refused and why, for the journal and the 403: "a.test:443
    /// resolved to 127.0.0.1, a loopback address".
    pub fn what(&self) -> String {
        let Self {
            host,
            port,
            address,
            why,
            ..
        } = self;
        if host.parse::<IpAddr>().is_ok() {
            format!("{host}:{port} is {why}")
        } else if self.mixed() {
            // At most eight named: an attacker's answer may be long.
            let mut all: Vec<String> = self.answer.iter().take(8).map(IpAddr::to_string).collect();
            if self.answer.len() > 8 {
                all.push(format!("{} more", self.answer.len() - 8));
            }
            format!(
                "{host}:{port} resolved to {}, and {address} is {why}; an answer with \
                 any such address is refused whole, so no DNS answer gets one dialled",
                all.join(", ")
            )
        } else {
            format!("{host}:{port} resolved to {address}, {why}")
        }
    }

    /// The 403 body: [`Self::what`], the rule, and what to ask the
    /// operator instead. One line.
    pub fn body(&self) -> String {
        format!(
            "hive-c0re egress: {}. The hive dials no loopback, private, link-local, \
             shared, multicast or reserved address unless the operator granted that IP \
             literal itself, so this connection was refused. To reach a host-local \
             service, ask your operator to grant its IP literal (e.g. \"127.0.0.1:{}\"), \
             never a name.\n",
            self.what(),
            self.port
        )
    }
}

/// Check a name's whole answer: every address must be one the proxy
/// dials, unless `literal_granted` (the request was an IP literal and an
/// exact pattern of the allow-list is that literal). `Ok` is the answer to
/// dial, unchanged and in its order.
pub fn check(
    host: &str,
    port: u16,
    answer: Vec<SocketAddr>,
    literal_granted: bool,
) -> Result<Vec<SocketAddr>, Box<Refusal>> {
    let refused = answer.iter().find_map(|a| {
        forbidden(a.ip())
            .filter(|why| !(literal_granted && why.kind.grantable()))
            .map(|why| (a.ip(), why))
    });
    match refused {
        None => Ok(answer),
        Some((address, why)) => Err(Box::new(Refusal {
            host: host.to_owned(),
            port,
            answer: answer.iter().map(SocketAddr::ip).collect(),
            address,
            why,
        })),
    }
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
