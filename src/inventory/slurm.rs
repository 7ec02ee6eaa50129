//! Inventory from a Slurm allocation: `-i slurm` builds the nodes from `SLURM_JOB_NODELIST`
//! (Slurm's hostlist syntax: `gpu-[01-03,07],login1`, `rack[1-2]-n[01-04]`), with settings
//! from an optional defaults file (`-i slurm:FILE`, or `FABCHECK_SLURM_DEFAULTS=FILE` with
//! `-i slurm`). The defaults file is an inventory (SPEC §2) whose `[defaults]` apply to every
//! allocated node; its `[[node]]` tables, if any, give per-node settings (host, interfaces,
//! fabric_ips...) to the allocated nodes they name and are ignored for the others; `[groups]`
//! keep their allocated members. Without a defaults file every node gets the built-in
//! defaults and its name as host, as with `-w`.
//!
//! `-i slurm` is never implied: inside an allocation, fabcheck without `-i`/`-w` still runs
//! on this machine only, so a script tried out in an `salloc` shell does not fan out to every
//! allocated node by surprise.

use super::{nodeset, valid_name, Inventory, InventoryError, Node, DEFAULT_FANOUT};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Environment variables holding the allocation's node list, in the order they are read:
/// `SLURM_JOB_NODELIST` (salloc, sbatch, srun) and the older `SLURM_NODELIST`.
pub(crate) const NODELIST_VARS: [&str; 2] = ["SLURM_JOB_NODELIST", "SLURM_NODELIST"];

/// Defaults file for `-i slurm` when none is given after `slurm:`.
pub(crate) const DEFAULTS_VAR: &str = "FABCHECK_SLURM_DEFAULTS";

/// What `-i slurm[:FILE]` asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub defaults: Option<PathBuf>,
}

impl Spec {
    /// `slurm` or `slurm:FILE` (anything else is an inventory file; `./slurm` is a file).
    pub(crate) fn from_source(source: &Path) -> Option<Spec> {
        let s = source.to_str()?;
        if s == "slurm" {
            let defaults = std::env::var_os(DEFAULTS_VAR)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from);
            return Some(Spec { defaults });
        }
        s.strip_prefix("slurm:").map(|f| Spec {
            defaults: Some(PathBuf::from(f)),
        })
    }
}

/// The allocation's node list from the environment: (variable, value).
pub(crate) fn nodelist_from_env() -> Result<(&'static str, String), InventoryError> {
    for var in NODELIST_VARS {
        if let Ok(v) = std::env::var(var) {
            if !v.trim().is_empty() {
                return Ok((var, v));
            }
        }
    }
    Err(InventoryError {
        location: "-i slurm".into(),
        message: "SLURM_JOB_NODELIST is not set: run fabcheck inside a Slurm allocation \
                  (salloc, sbatch) or give -i INVENTORY.toml / -w NODESET"
            .into(),
    })
}

/// The Slurm allocation fabcheck runs in (`SLURM_JOB_ID` in its environment: inside `salloc`,
/// `sbatch`, `srun --pty`): the srun launcher runs the ranks as a step of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub job_id: String,
    /// The allocation's owner when Slurm says it (`SLURM_JOB_USER`: set in batch jobs and
    /// steps; `salloc` leaves it out, and then the allocation is this process's user's).
    pub user: Option<String>,
}

impl Allocation {
    /// From this process's environment; None outside an allocation.
    pub fn from_env() -> Option<Allocation> {
        let get = |k: &str| std::env::var(k).ok().map(|v| v.trim().to_string());
        Self::from_vars(get("SLURM_JOB_ID"), get("SLURM_JOB_USER"))
    }

    /// From the values of `SLURM_JOB_ID` and `SLURM_JOB_USER`. A job id that is not a number
    /// is no allocation (nothing to pass to srun on a command line).
    pub fn from_vars(job_id: Option<String>, user: Option<String>) -> Option<Allocation> {
        let job_id = job_id.filter(|j| !j.is_empty() && j.bytes().all(|b| b.is_ascii_digit()))?;
        let user = user.filter(|u| valid_name(u));
        Some(Allocation { job_id, user })
    }
}

/// `-i slurm[:FILE]` from this process's environment.
pub(crate) fn load(spec: &Spec) -> Result<Inventory, InventoryError> {
    let (var, list) = nodelist_from_env()?;
    from_nodelist(var, &list, spec.defaults.as_deref())
}

/// The inventory of an allocation whose node list (`from` names where it came from, for
/// messages) is `nodelist`, with settings from an optional defaults file.
pub(crate) fn from_nodelist(
    from: &str,
    nodelist: &str,
    defaults: Option<&Path>,
) -> Result<Inventory, InventoryError> {
    let names = nodeset::expand(nodelist, &BTreeMap::new()).map_err(|e| InventoryError {
        location: from.to_string(),
        message: e.to_string(),
    })?;
    if let Some(bad) = names.iter().find(|n| !valid_name(n)) {
        return Err(InventoryError {
            location: from.to_string(),
            message: format!("`{bad}` is not a valid host name"),
        });
    }
    let label = format!("slurm:{from}={nodelist}");
    let mut inv = match defaults {
        Some(path) => {
            let text =
                crate::util::fs::read_capped(path, crate::util::fs::INVENTORY_CAP, "inventory")
                    .map_err(|e| InventoryError {
                        location: path.display().to_string(),
                        message: format!("cannot read the Slurm defaults file: {e}"),
                    })?;
            let mut inv = Inventory::build(&text, path, Some((from, &names)))?;
            inv.source = Some(PathBuf::from(format!(
                "{label} defaults={}",
                path.display()
            )));
            inv
        }
        None => Inventory {
            source: None,
            simulation: None,
            nodes: names.iter().map(|n| Node::bare(n)).collect(),
            unselected: vec![],
            groups: BTreeMap::new(),
            fanout: DEFAULT_FANOUT,
        },
    };
    if inv.source.is_none() {
        inv.source = Some(PathBuf::from(label));
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults_file(tag: &str, text: &str) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("fabcheck-slurm-{tag}-{}.toml", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    fn names(inv: &Inventory) -> Vec<&str> {
        inv.nodes.iter().map(|n| n.name.as_str()).collect()
    }

    #[test]
    fn slurm_hostlists_expand_in_slurm_order() {
        let inv = from_nodelist("SLURM_JOB_NODELIST", "gpu-[01-03,07],login1", None).unwrap();
        assert_eq!(
            names(&inv),
            ["gpu-01", "gpu-02", "gpu-03", "gpu-07", "login1"]
        );
        assert_eq!(inv.nodes[3].host, "gpu-07");
        let inv = from_nodelist("SLURM_JOB_NODELIST", "a[1-2]-b[3-4]", None).unwrap();
        assert_eq!(names(&inv), ["a1-b3", "a1-b4", "a2-b3", "a2-b4"]);
        let e = from_nodelist("SLURM_JOB_NODELIST", "gpu[1-", None).unwrap_err();
        assert_eq!(e.location, "SLURM_JOB_NODELIST");
        let e = from_nodelist("SLURM_JOB_NODELIST", "-oProxyCommand", None).unwrap_err();
        assert!(e.message.contains("not a valid host name"), "{e}");
    }

    #[test]
    fn defaults_file_gives_settings_to_allocated_nodes_only() {
        let p = defaults_file(
            "d",
            r#"
[defaults]
user = "nvidia"
command_timeout = "30s"
interfaces = ["ib0"]
[[node]]
name = "gpu-[01-04]"
host = "10.0.0.[1-4]"
rdma_devices = ["mlx5_0"]
[[node]]
name = "gpu-99"
port = 2222
[groups]
rack1 = "gpu-[01-02],gpu-99"
rack9 = "gpu-99"
"#,
        );
        let inv = from_nodelist("SLURM_JOB_NODELIST", "gpu-[02-03,07]", Some(&p)).unwrap();
        let _ = std::fs::remove_file(&p);
        assert_eq!(names(&inv), ["gpu-02", "gpu-03", "gpu-07"]);
        assert_eq!(inv.nodes[0].host, "10.0.0.2");
        assert_eq!(inv.nodes[0].rdma_devices, ["mlx5_0"]);
        // not declared: defaults only, host = name
        assert_eq!(inv.nodes[2].host, "gpu-07");
        assert!(inv.nodes[2].rdma_devices.is_empty());
        assert_eq!(inv.nodes[2].user.as_deref(), Some("nvidia"));
        assert_eq!(inv.nodes[2].interfaces, ["ib0"]);
        assert_eq!(inv.nodes[2].command_timeout.as_secs(), 30);
        // groups keep their allocated members; a group with none is gone
        assert_eq!(inv.select("@rack1").unwrap().len(), 1);
        assert!(!inv.groups.contains_key("rack9"));
        let label = inv.source.unwrap().display().to_string();
        assert!(
            label.starts_with("slurm:SLURM_JOB_NODELIST=gpu-[02-03,07]"),
            "{label}"
        );
    }

    #[test]
    fn defaults_file_errors_name_the_file_and_line() {
        let p = defaults_file("bad", "[defaults]\nuser = \"a\"\nspeed = 3\n");
        let e = from_nodelist("SLURM_JOB_NODELIST", "n[1-2]", Some(&p)).unwrap_err();
        assert!(e.location.ends_with(":3:1"), "{e}");
        let p2 = defaults_file("bad2", "[defaults]\ncommand_timeout = \"1e300\"\n");
        let e = from_nodelist("SLURM_JOB_NODELIST", "n[1-2]", Some(&p2)).unwrap_err();
        assert!(
            e.message.contains("n1") && e.message.contains("30days"),
            "{e}"
        );
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_file(&p2);
        let e = from_nodelist("X", "n1", Some(Path::new("/nonexistent/d.toml"))).unwrap_err();
        assert!(
            e.message.contains("cannot read the Slurm defaults file"),
            "{e}"
        );
    }

    #[test]
    fn allocation_from_slurm_variables() {
        let a =
            |j: &str, u: Option<&str>| Allocation::from_vars(Some(j.into()), u.map(String::from));
        assert_eq!(
            a("8", Some("fclab")),
            Some(Allocation {
                job_id: "8".into(),
                user: Some("fclab".into())
            })
        );
        assert_eq!(a("8", None).unwrap().user, None);
        // Not a job id srun could be given: no allocation.
        assert_eq!(a("", None), None);
        assert_eq!(a("8;reboot", None), None);
        assert_eq!(Allocation::from_vars(None, Some("x".into())), None);
    }

    #[test]
    fn sources_that_mean_slurm() {
        assert_eq!(
            Spec::from_source(Path::new("slurm:/etc/fc.toml")),
            Some(Spec {
                defaults: Some("/etc/fc.toml".into())
            })
        );
        assert_eq!(Spec::from_source(Path::new("./slurm")), None);
        assert_eq!(Spec::from_source(Path::new("slurm.toml")), None);
    }
}
