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

/// The link most of `flows` take (at least two), if any, with the flows through it.
fn busiest<'a>(flows: &[&'a Flow]) -> Option<(String, Vec<&'a Flow>)> {
    let mut best: Option<(String, Vec<&Flow>)> = None;
    for f in flows {
        for l in &f.links {
            let on: Vec<&Flow> = flows
                .iter()
                .copied()
                .filter(|g| g.links.contains(l))
                .collect();
            if on.len() >= 2 && best.as_ref().is_none_or(|b| on.len() > b.1.len()) {
                best = Some((l.clone(), on));
            }
        }
    }
    best
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
    let mut left: Vec<&Flow> = all.iter().collect();
    let mut covered: Vec<*const Flow> = vec![];
    while let Some((_, group)) = busiest(&left) {
        left.retain(|f| !group.iter().any(|g| std::ptr::eq(*g, *f)));
        covered.extend(group.iter().map(|g| *g as *const Flow));
        let whole = |i: usize| {
            all.iter()
                .filter(|f| f.red == i)
                .all(|f| covered.contains(&(f as *const Flow)))
        };
        let mut evidence = vec![];
        for i in group.iter().map(|f| f.red) {
            if !ctx.claimed[i] && whole(i) {
                ctx.claimed[i] = true;
                evidence.push(ctx.reds[i].t.name.clone());
            }
        }
        ctx.out.push(diagnosis(&group, evidence));
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
