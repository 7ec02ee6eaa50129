//! A site's InfiniBand cabling plan (docs/infiniband.md, "The cabling plan"): one cable per
//! line, `END <-> END`, where an END is `SWITCH:PORT` (a switch by its GUID, `0x…`, or its node
//! description as iblinkinfo prints it, and a port number) or `HOST:HCA` (a host's HCA, as its
//! node description `HOST HCA` says, port 1). `#` starts a comment; blank lines are skipped.
//! The last `:` of an end separates the port (switch node descriptions may hold `:`, as
//! `MF0;SB7700:MSB7700/U1`): a number is a switch port, anything else an HCA.
//!
//! Not a tool's output: a file the site writes, so a line that does not fit is an error naming
//! the file, line and column.

use serde::Serialize;

/// One end of a planned cable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) enum End {
    /// A switch (GUID `0x…` or node description) and its port.
    Switch { switch: String, port: u32 },
    /// A host's HCA (node description `HOST HCA`), port 1.
    Host { host: String, hca: String },
}

impl End {
    /// As a site writes it: `SWITCH:PORT` or `HOST:HCA`.
    pub(crate) fn shown(&self) -> String {
        match self {
            End::Switch { switch, port } => format!("{switch}:{port}"),
            End::Host { host, hca } => format!("{host}:{hca}"),
        }
    }
}

/// One planned cable and the line it was written on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Cable {
    pub a: End,
    pub b: End,
    pub line: usize,
}

/// A plan that cannot be read: `SOURCE:LINE:COL: what; what to do`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct PlanError(pub String);

fn end(text: &str) -> Result<End, PlanError> {
    let t = text.trim();
    let Some((name, port)) = t.rsplit_once(':') else {
        return Err(PlanError(format!(
            "`{t}` is not SWITCH:PORT or HOST:HCA (no `:`)"
        )));
    };
    let (name, port) = (name.trim(), port.trim());
    if name.is_empty() || port.is_empty() {
        return Err(PlanError(format!("`{t}`: a switch (GUID or node description) or host before `:`, a port number or HCA after it")));
    }
    Ok(match port.parse::<u32>() {
        Ok(p) => End::Switch {
            switch: name.to_string(),
            port: p,
        },
        Err(_) => End::Host {
            host: name.to_string(),
            hca: port.to_string(),
        },
    })
}

/// The plan's cables; `source` names the file in errors (`SOURCE:LINE:COL: what; what to do`).
pub(crate) fn parse(text: &str, source: &str) -> Result<Vec<Cable>, PlanError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("");
        if line.trim().is_empty() {
            continue;
        }
        let col = raw.len() - raw.trim_start().len() + 1;
        let Some((a, b)) = line.split_once("<->") else {
            return Err(PlanError(format!(
                "{source}:{}:{col}: expected `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA`, got `{}` (one cable per line, ends joined by `<->`)",
                i + 1,
                line.trim()
            )));
        };
        let at = |e: PlanError, c: usize| PlanError(format!("{source}:{}:{c}: {}", i + 1, e.0));
        let a = end(a).map_err(|e| at(e, col))?;
        let b_col = line.find("<->").unwrap_or(0) + 3 + (b.len() - b.trim_start().len()) + 1;
        let b = end(b).map_err(|e| at(e, b_col))?;
        if matches!((&a, &b), (End::Host { .. }, End::Host { .. })) {
            return Err(at(
                PlanError("a cable between two hosts: one end must be a switch port".into()),
                col,
            ));
        }
        out.push(Cable { a, b, line: i + 1 });
    }
    if out.is_empty() {
        return Err(PlanError(format!(
            "{source}: no cable in the plan (lines `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA`)"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_switch_ports_or_host_hcas() {
        let p = parse(
            "# rack 1\n0xfc6a1c0300e40100:33 <-> spine-1:4\nMF0;SB7700:MSB7700/U1:17 <-> n02:mlx5_0  # node\n",
            "plan.txt",
        )
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0].b,
            End::Switch {
                switch: "spine-1".into(),
                port: 4
            }
        );
        // the last `:` splits: a switch description holding `:` keeps it
        assert_eq!(
            p[1].a,
            End::Switch {
                switch: "MF0;SB7700:MSB7700/U1".into(),
                port: 17
            }
        );
        assert_eq!(
            p[1].b,
            End::Host {
                host: "n02".into(),
                hca: "mlx5_0".into()
            }
        );
        assert_eq!(p[1].line, 3);
    }

    #[test]
    fn bad_lines_name_file_line_and_column() {
        let e = parse(
            "leaf-1:1 <-> h1:mlx5_0\n  leaf-1:2 -> h2:mlx5_0\n",
            "plan.txt",
        )
        .unwrap_err();
        assert!(
            e.0.starts_with("plan.txt:2:3: expected `SWITCH:PORT <->"),
            "{e}"
        );
        let e = parse("leaf-1:1 <-> h1\n", "plan.txt").unwrap_err();
        assert!(
            e.0.starts_with("plan.txt:1:14: `h1` is not SWITCH:PORT"),
            "{e}"
        );
        let e = parse("h1:mlx5_0 <-> h2:mlx5_0\n", "p").unwrap_err();
        assert!(e.0.contains("between two hosts"), "{e}");
        assert!(parse("# nothing\n", "p")
            .unwrap_err()
            .0
            .contains("no cable"));
    }
}
