//! Slow flows across the spine that share a link. Each slow flow of `rdma: across the spine`
//! names its path (ibtracert: the switch ports it leaves by, the subject's `links`). Two slow
//! flows through one leaf uplink or one spine downlink point at that cable, or, on a fabric
//! routed statically, at the routing that put both on it; either way the part to look at is
//! the link they share, once, not one path per red. Flows that share no link with another are
//! left to the check's own words (`named_part`).

use super::Ctx;
use crate::run::model::{Diagnosis, Finding};

/// One slow flow: its red, its words (`node HCA: RATE to peer HCA`) and its path's links.
struct Flow {
    red: usize,
    name: String,
    links: Vec<String>,
}

/// The slow flows of the unclaimed reds that name their path.
fn flows(ctx: &Ctx) -> Vec<Flow> {
    let mut v = vec![];
    for (i, r) in ctx.reds.iter().enumerate() {
        if ctx.claimed[i] {
            continue;
        }
        for s in &r.t.subjects {
            if s.kind != Finding::SpinePath || s.links.is_empty() {
                continue;
            }
            let from = s.rail.as_deref().unwrap_or("?");
            let to = s.found.as_deref().or(s.peer.as_deref()).unwrap_or("?");
            v.push(Flow {
                red: i,
                name: format!("{} {from}: {to}", s.node),
                links: s.links.clone(),
            });
        }
    }
    v
}

/// The flows (indices into `all`, among `left`) through the link most of them take, if two or
/// more take one.
fn busiest(all: &[Flow], left: &[usize]) -> Option<Vec<usize>> {
    let through = |l: &String| -> Vec<usize> {
        left.iter()
            .copied()
            .filter(|&g| all[g].links.contains(l))
            .collect()
    };
    left.iter()
        .flat_map(|&f| all[f].links.iter().map(through))
        .filter(|on| on.len() >= 2)
        .fold(None, |best: Option<Vec<usize>>, on| match best {
            Some(b) if b.len() >= on.len() => Some(b),
            _ => Some(on),
        })
}

/// The links every flow of `group` takes, in the first flow's path order.
fn common(group: &[&Flow]) -> Vec<String> {
    group[0]
        .links
        .iter()
        .filter(|l| group.iter().all(|f| f.links.contains(l)))
        .cloned()
        .collect()
}

/// Groups of slow flows sharing links, most flows first: each gives one diagnosis naming the
/// links its flows share, and claims the reds whose every slow flow is in it or an earlier group.
pub(crate) fn spine_links(ctx: &mut Ctx) {
    let all = flows(ctx);
    let mut left: Vec<usize> = (0..all.len()).collect();
    let mut covered = vec![false; all.len()];
    while let Some(group) = busiest(&all, &left) {
        left.retain(|f| !group.contains(f));
        for &g in &group {
            covered[g] = true;
        }
        let mut evidence = vec![];
        for red in group.iter().map(|&g| all[g].red) {
            let whole = (0..all.len()).all(|f| all[f].red != red || covered[f]);
            if !ctx.claimed[red] && whole {
                ctx.claimed[red] = true;
                evidence.push(ctx.reds[red].t.name.clone());
            }
        }
        let flows: Vec<&Flow> = group.iter().map(|&g| &all[g]).collect();
        ctx.out.push(diagnosis(&flows, evidence));
    }
}

/// The diagnosis of one group of slow flows sharing links.
fn diagnosis(group: &[&Flow], evidence: Vec<String>) -> Diagnosis {
    let shared = common(group);
    let names: Vec<&str> = group.iter().map(|f| f.name.as_str()).collect();
    let one = shared.len() == 1;
    Diagnosis {
        rule: "spine_link".into(),
        metric: None,
        cause: format!(
            "{} slow flows across the spine ({}) share {} of their paths: the part their evidence has in common is {}",
            group.len(),
            names.join("; "),
            if one { "one link" } else { "these links" },
            if one { "that cable" } else { "one of these cables" },
        ),
        part: if one {
            format!("the link {}: its cable (the error counters at both ends, its rate), or, on a fabric routed statically (no adaptive routing), the routing that put these flows on it", shared[0])
        } else {
            format!("one of the links {}: its cable (the error counters at both ends, its rate), or, on a fabric routed statically (no adaptive routing), the routing that put these flows on it", shared.join(", "))
        },
        evidence,
        next: vec![
            "`health: ib fabric links` and `health: ib subnet errors` for these switch ports: the rate and the error counters at both ends".into(),
            "each flow alone (ib_write_bw between the two HCAs, nothing else running): full rate alone means the flows shared the link by routing (see ibdiagnet's adaptive routing summary), not a bad cable".into(),
        ],
    }
}
