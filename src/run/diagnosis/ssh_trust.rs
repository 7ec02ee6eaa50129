//! SSH between nodes refused for trust, not for the fabric: a host key no node trusts, a host
//! key that changed, a login key refused. ssh says which in its own words; the pairs that
//! failed the same way share one part — the peer all of them reach, or the node all of them
//! start from — and that part is the diagnosis, once, not one unexplained red per pair.

use super::rules::on;
use super::{Ctx, Topology};
use crate::run::model::{Diagnosis, Finding};

/// Why ssh refused (the subject's `found`, from `ssh_hop`'s `refused`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Trust {
    /// `REMOTE HOST IDENTIFICATION HAS CHANGED` / `Host key for X has changed`.
    KeyChanged,
    /// `Host key verification failed` / `No ED25519 host key is known for`.
    KeyUnknown,
    /// `Permission denied (publickey…)`.
    LoginRefused,
}

impl Trust {
    fn of(found: &str) -> Option<Trust> {
        match found.split_whitespace().next()? {
            "host_key_changed" => Some(Trust::KeyChanged),
            "host_key_unknown" => Some(Trust::KeyUnknown),
            "login_refused" => Some(Trust::LoginRefused),
            _ => None,
        }
    }
}

/// One failed hop: red index, from, to, the address it went to (`found`'s `at ADDRESS`).
struct Hop {
    red: usize,
    from: String,
    to: String,
    addr: Option<String>,
}

/// The hops of `kind`: each unclaimed red's `ssh_trust` subjects (node = from, peer = to).
fn hops(ctx: &Ctx, kind: Trust) -> Vec<Hop> {
    let mut v = vec![];
    for (i, r) in ctx.reds.iter().enumerate() {
        for s in r.t.subjects.iter().filter(|s| s.kind == Finding::SshTrust) {
            let found = s.found.as_deref().unwrap_or("");
            let (Some(to), false) = (&s.peer, ctx.claimed[i]) else {
                continue;
            };
            if Trust::of(found) == Some(kind) {
                v.push(Hop {
                    red: i,
                    from: s.node.clone(),
                    to: to.clone(),
                    addr: found.split(" at ").nth(1).map(str::to_string),
                });
            }
        }
    }
    v
}

/// Which end of the failed hops a diagnosis names.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    /// The node they all reach.
    Peer,
    /// The node they all start from.
    Source,
    /// One hop alone: both ends, as nothing says which one is wrong.
    Pair,
}

/// The part most failed hops share: (node, side). A peer shared by as many starting nodes as
/// a starting node has peers wins, as a host key or an authorized_keys belongs to the node
/// reached; a hop that shares its ends with no other is a pair.
fn widest(hops: &[Hop]) -> (String, Side) {
    let distinct = |v: Vec<&str>| {
        let mut v = v;
        v.sort();
        v.dedup();
        v.len()
    };
    let sources_of = |n: &str| {
        distinct(
            hops.iter()
                .filter(|h| h.to == n)
                .map(|h| &*h.from)
                .collect(),
        )
    };
    let peers_of = |n: &str| {
        distinct(
            hops.iter()
                .filter(|h| h.from == n)
                .map(|h| &*h.to)
                .collect(),
        )
    };
    let peer = hops
        .iter()
        .map(|h| (sources_of(&h.to), &h.to))
        .rev()
        .max_by_key(|p| p.0);
    let source = hops
        .iter()
        .map(|h| (peers_of(&h.from), &h.from))
        .rev()
        .max_by_key(|p| p.0);
    match (peer, source) {
        (Some(p), Some(s)) if p.0 <= 1 && s.0 <= 1 => (s.1.clone(), Side::Pair),
        (Some(p), Some(s)) if s.0 > p.0 => (s.1.clone(), Side::Source),
        (Some(p), _) => (p.1.clone(), Side::Peer),
        _ => (String::new(), Side::Pair),
    }
}

fn list(mut v: Vec<String>) -> String {
    v.sort();
    v.dedup();
    v.join(", ")
}

fn words(kind: Trust, node: &str, side: Side, others: &str) -> (String, String) {
    let is_peer = match side {
        Side::Peer => true,
        Side::Source => false,
        Side::Pair => return pair_words(kind, node, others),
    };
    match (kind, is_peer) {
        (Trust::KeyChanged, true) => (
            format!("{node}'s SSH host key is not the one {others} have on record: ssh refuses it (the node reinstalled or its host keys regenerated, or another machine answers at its address)"),
            format!("{node}'s host key, and the known_hosts entries for it on {others}"),
        ),
        (Trust::KeyChanged, false) => (
            format!("{node} has another host key on record for {others} than they present: ssh from {node} refuses them"),
            format!("{node}'s known_hosts (the entries for {others})"),
        ),
        (Trust::KeyUnknown, true) => (
            format!("no node trusts {node}'s SSH host key ({others} have no known_hosts entry for it; BatchMode cannot ask): mpirun from them stops there, not the fabric"),
            format!("{node}'s host key in the known_hosts of {others} (a new or reinstalled node missing from the site's known_hosts)"),
        ),
        (Trust::KeyUnknown, false) => (
            format!("{node} trusts none of its peers' SSH host keys ({others}; BatchMode cannot ask): mpirun from {node} stops there, not the fabric"),
            format!("{node}'s known_hosts (of the user the hop runs as)"),
        ),
        (Trust::LoginRefused, true) => (
            format!("{node} refuses the login keys of {others}: passwordless SSH into {node} is not set up"),
            format!("{node}'s ~/.ssh/authorized_keys for the user (or its permissions, or sshd's AuthorizedKeysFile)"),
        ),
        (Trust::LoginRefused, false) => (
            format!("{node}'s login key is refused by {others}: {node} has no key, or its public key is not in their authorized_keys"),
            format!("{node}'s SSH key (~/.ssh/id_*) and the peers' authorized_keys"),
        ),
    }
}

fn pair_words(kind: Trust, from: &str, to: &str) -> (String, String) {
    match kind {
        Trust::KeyChanged => (
            format!("{to}'s SSH host key is not the one {from} has on record: ssh from {from} refuses it (the node reinstalled or its keys regenerated, or another machine answers at its address)"),
            format!("{from}'s known_hosts entry for {to}, or {to}'s host key"),
        ),
        Trust::KeyUnknown => (
            format!("{from} does not trust {to}'s SSH host key (no known_hosts entry; BatchMode cannot ask): mpirun from {from} stops there, not the fabric"),
            format!("{from}'s known_hosts entry for {to}"),
        ),
        Trust::LoginRefused => (
            format!("{to} refuses {from}'s login key: passwordless SSH from {from} to {to} is not set up"),
            format!("{to}'s ~/.ssh/authorized_keys for the user, or {from}'s SSH key (~/.ssh/id_*)"),
        ),
    }
}

fn next_steps(topo: &Topology, kind: Trust, hops: &[Hop]) -> Vec<String> {
    let mut v = vec![];
    for h in hops.iter().take(2) {
        let addr = h.addr.clone().unwrap_or_else(|| h.to.clone());
        let step = match kind {
            Trust::KeyChanged => on(
                topo,
                &h.from,
                &format!("ssh-keygen -R {addr}"),
                "then accept the new key once it is verified",
            ),
            Trust::KeyUnknown => on(
                topo,
                &h.from,
                &format!("ssh-keyscan -t ed25519 {addr}"),
                "compare with the peer's fingerprint, then add it to known_hosts",
            ),
            Trust::LoginRefused => on(
                topo,
                &h.from,
                &format!("ssh -v -o BatchMode=yes {addr} true"),
                "which keys it offers and why they are refused",
            ),
        };
        if !v.contains(&step) {
            v.push(step);
        }
    }
    if kind != Trust::LoginRefused {
        let peer = &hops[0].to;
        v.push(on(
            topo,
            peer,
            "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub",
            "the key's fingerprint, to compare",
        ));
    }
    v
}

/// One diagnosis per shared part, for each way ssh refused.
pub(crate) fn ssh_trust(ctx: &mut Ctx) {
    for kind in [Trust::KeyChanged, Trust::KeyUnknown, Trust::LoginRefused] {
        let mut left = hops(ctx, kind);
        while !left.is_empty() {
            // A pair's node is the one its hops start from: every hop from it goes to that peer.
            let (node, side) = widest(&left);
            let (mine, rest): (Vec<Hop>, Vec<Hop>) = left.into_iter().partition(|h| match side {
                Side::Peer => h.to == node,
                Side::Source | Side::Pair => h.from == node,
            });
            left = rest;
            let d = diagnosis(ctx, kind, &node, side, &mine);
            ctx.out.push(d);
        }
    }
}

/// The diagnosis of the hops `mine`, which share `node` on `side`; claims their reds.
fn diagnosis(ctx: &mut Ctx, kind: Trust, node: &str, side: Side, mine: &[Hop]) -> Diagnosis {
    let others = list(
        mine.iter()
            .map(|h| match side {
                Side::Peer => h.from.clone(),
                _ => h.to.clone(),
            })
            .collect(),
    );
    let (cause, part) = words(kind, node, side, &others);
    let mut evidence = vec![];
    for h in mine {
        ctx.claimed[h.red] = true;
        let name = ctx.reds[h.red].t.name.clone();
        if !evidence.contains(&name) {
            evidence.push(name);
        }
    }
    Diagnosis {
        rule: "ssh_trust".into(),
        metric: None,
        cause,
        part,
        evidence,
        next: next_steps(ctx.topo, kind, mine),
    }
}
