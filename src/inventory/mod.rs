//! Inventory (TOML, SPEC §2): nodes, their fabric interfaces and addresses, groups, SSH settings.

pub(crate) mod diff;
pub(crate) mod discovered;
pub(crate) mod needs;
pub(crate) mod nodeset;
pub(crate) mod slurm;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A bad inventory: where (file:line:col) and what is wrong. Exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {message}")]
pub struct InventoryError {
    pub location: String,
    pub message: String,
}

/// One physical port with its logical interfaces/RDMA devices (a DGX Spark QSFP port shows up
/// as two of each that share the port's bandwidth).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    pub name: String,
    #[serde(default)]
    pub interfaces: Vec<String>,
    #[serde(default)]
    pub rdma_devices: Vec<String>,
    /// The speed the port should negotiate (Mb/s, e.g. 200000); absent: the node var
    /// `speed_mbps`, else the highest supported link mode ethtool lists.
    #[serde(default)]
    pub speed_mbps: Option<u64>,
}

/// Fields allowed in `[defaults]` and in each `[[node]]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    name: Option<toml::Spanned<String>>,
    host: Option<String>,
    port: Option<u16>,
    user: Option<String>,
    connect_timeout: Option<String>,
    command_timeout: Option<String>,
    fanout: Option<usize>,
    known_hosts: Option<String>,
    ssh_config: Option<String>,
    interfaces: Option<Vec<String>>,
    fabric_ips: Option<Vec<String>>,
    rdma_devices: Option<Vec<String>>,
    ports: Option<Vec<PortSpec>>,
    vars: Option<toml::Table>,
    transport: Option<String>,
    replay_dir: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Set for simulated clusters: every report says the run was simulated, and why.
    simulation: Option<String>,
    #[serde(default)]
    defaults: Fields,
    #[serde(default)]
    node: Vec<toml::Spanned<Fields>>,
    #[serde(default)]
    groups: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnownHosts {
    /// Not set in the inventory: whatever the ssh config says for the host (`ssh -G`), which
    /// is strict unless it says otherwise (ssh's `ask` is strict without a terminal).
    SshConfig,
    Strict,
    AcceptNew,
    Off,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Ssh,
    Local,
    Replay,
}

/// A fully resolved node.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub name: String,
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    #[serde(with = "humantime_serde_secs")]
    pub connect_timeout: Duration,
    #[serde(with = "humantime_serde_secs")]
    pub command_timeout: Duration,
    pub known_hosts: KnownHosts,
    pub ssh_config: Option<PathBuf>,
    pub interfaces: Vec<String>,
    pub fabric_ips: Vec<String>,
    pub rdma_devices: Vec<String>,
    pub ports: Vec<PortSpec>,
    pub vars: serde_json::Value,
    pub transport: TransportKind,
    pub replay_dir: Option<PathBuf>,
}

mod humantime_serde_secs {
    pub(super) fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }
}

/// The resolved inventory.
#[derive(Debug, Clone, Serialize)]
pub struct Inventory {
    pub source: Option<PathBuf>,
    pub simulation: Option<String>,
    pub nodes: Vec<Node>,
    /// Nodes of the inventory that `-w` left out of the selection: not run on, but still the
    /// ground truth of checks that judge against the whole cluster (`inventory_nodes()`).
    pub unselected: Vec<Node>,
    pub groups: BTreeMap<String, String>,
    pub fanout: usize,
}

pub(crate) const DEFAULT_FANOUT: usize = 64;

/// Durations as inventories and options write them: the one parser, `util::duration`.
pub(crate) use crate::util::duration::parse_duration;

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
    (line, col)
}

/// Validate a name that will reach a remote shell or a file name (node, interface, device):
/// the one validator, `util::names`.
pub(crate) use crate::util::names::valid_name;

impl Inventory {
    /// Nodes named on the command line without an inventory: hosts are the names.
    /// The names are host names here, so they pass the same check as an inventory's `host`
    /// (`-w=-Efoo` must never reach ssh as an option).
    pub fn from_nodeset(expr: &str) -> Result<Inventory, InventoryError> {
        let names = nodeset::expand(expr, &BTreeMap::new()).map_err(|e| InventoryError {
            location: "-w".into(),
            message: e.to_string(),
        })?;
        if let Some(bad) = names.iter().find(|n| !valid_name(n)) {
            return Err(InventoryError {
                location: "-w".into(),
                message: format!("`{bad}` is not a valid host name (from node set `{expr}`)"),
            });
        }
        // `-w localhost` is this machine, as without -i/-w: the local transport, not ssh.
        let nodes = names
            .into_iter()
            .map(|n| {
                let mut node = Node::bare(&n);
                if n == "localhost" {
                    node.transport = TransportKind::Local;
                }
                node
            })
            .collect();
        Ok(Inventory {
            source: None,
            simulation: None,
            nodes,
            unselected: vec![],
            groups: BTreeMap::new(),
            fanout: DEFAULT_FANOUT,
        })
    }

    /// One node `localhost` on the local transport (scripts run without any inventory).
    pub fn local() -> Inventory {
        let mut n = Node::bare("localhost");
        n.transport = TransportKind::Local;
        Inventory {
            source: None,
            simulation: None,
            nodes: vec![n],
            unselected: vec![],
            groups: BTreeMap::new(),
            fanout: DEFAULT_FANOUT,
        }
    }

    /// The nodes `names` (from `from`: a command line's node set), each with the settings a
    /// defaults file gives it as for `-i slurm:FILE` (its `[defaults]`, and its `[[node]]` of
    /// that name if any; `[[node]]`s of other names are ignored), or the built-in defaults and
    /// its name as host without one. `fabcheck discover` reaches its hosts so.
    pub fn for_names(
        from: &str,
        names: &[String],
        defaults: Option<&Path>,
    ) -> Result<Inventory, InventoryError> {
        if let Some(bad) = names.iter().find(|n| !valid_name(n)) {
            return Err(InventoryError {
                location: from.to_string(),
                message: format!("`{bad}` is not a valid host name"),
            });
        }
        match defaults {
            Some(path) => {
                let text =
                    crate::util::fs::read_capped(path, crate::util::fs::INVENTORY_CAP, "inventory")
                        .map_err(|e| InventoryError {
                            location: path.display().to_string(),
                            message: format!("cannot read the defaults file: {e}"),
                        })?;
                Self::build(&text, path, Some((from, names)))
            }
            None => Ok(Inventory {
                source: None,
                simulation: None,
                nodes: names.iter().map(|n| Node::bare(n)).collect(),
                unselected: vec![],
                groups: BTreeMap::new(),
                fanout: DEFAULT_FANOUT,
            }),
        }
    }

    /// Load `-i SOURCE`: an inventory file, or `slurm` / `slurm:DEFAULTS.toml` for the nodes of
    /// the Slurm allocation fabcheck runs in (see [`slurm`]; `./slurm` is a file named slurm).
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        if let Some(spec) = slurm::Spec::from_source(path) {
            return slurm::load(&spec);
        }
        Self::load_file(path)
    }

    /// Load an inventory file.
    pub fn load_file(path: &Path) -> Result<Inventory, InventoryError> {
        let text = crate::util::fs::read_capped(path, crate::util::fs::INVENTORY_CAP, "inventory")
            .map_err(|e| InventoryError {
                location: path.display().to_string(),
                message: format!("cannot read the inventory: {e}"),
            })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Inventory, InventoryError> {
        Self::build(text, path, None)
    }

    /// Build an inventory from TOML text. With `allocation` (Slurm), the nodes are exactly
    /// those names, in that order: a `[[node]]` naming one of them gives its settings, the
    /// others get `[defaults]` only; `[[node]]`s and group members outside the allocation are
    /// left out. Without it, the nodes are the file's `[[node]]`s.
    fn build(
        text: &str,
        path: &Path,
        allocation: Option<(&str, &[String])>,
    ) -> Result<Inventory, InventoryError> {
        let src = Source { text, path };
        let file: File = toml::from_str(text).map_err(|e| {
            let off = e.span().map(|s| s.start).unwrap_or(0);
            let message = crate::util::fmt::toml_message(&e);
            src.at(
                off,
                format!("{message} (docs/inventory.md lists every field)"),
            )
        })?;
        let wanted: Option<HashSet<&str>> =
            allocation.map(|(_, names)| names.iter().map(String::as_str).collect());
        let mut declared = declared_nodes(&src, &file, wanted.as_ref())?;
        let nodes = match allocation {
            None => std::mem::take(&mut declared.nodes),
            Some(alloc) => {
                let allocated = std::mem::take(&mut declared.allocated);
                allocated_nodes(&src, &file, alloc, allocated)?
            }
        };
        if nodes.is_empty() {
            return Err(InventoryError {
                location: path.display().to_string(),
                message: "the inventory declares no node; add a [[node]] table with a name".into(),
            });
        }
        unique_addresses(&src, &file, &declared, &nodes)?;
        let groups = checked_groups(path, &file, wanted.as_ref(), &declared.first_seen)?;
        let fanout = file.defaults.fanout.unwrap_or(DEFAULT_FANOUT).max(1);
        Ok(Inventory {
            source: Some(path.to_path_buf()),
            simulation: file.simulation,
            nodes,
            unselected: vec![],
            groups,
            fanout,
        })
    }

    /// Nodes selected by a node set (names and `@group`s of this inventory), in inventory order
    /// for groups and in the given order otherwise.
    pub fn select(&self, expr: &str) -> Result<Vec<&Node>, SelectError> {
        let names = nodeset::expand(expr, &self.groups)?;
        let by_name: HashMap<&str, &Node> =
            self.nodes.iter().map(|x| (x.name.as_str(), x)).collect();
        names
            .iter()
            .map(|n| {
                by_name.get(n.as_str()).copied().ok_or_else(|| {
                    let all: Vec<String> = self.nodes.iter().map(|x| x.name.clone()).collect();
                    SelectError::Unknown {
                        node: n.clone(),
                        nodes: nodeset::fold(&all),
                    }
                })
            })
            .collect()
    }

    /// Keep only the nodes a node set selects (`-i FILE -w SET`), in inventory order; linear in
    /// the number of nodes.
    pub fn restrict(&mut self, expr: &str) -> Result<(), SelectError> {
        let keep: HashSet<String> = self
            .select(expr)?
            .into_iter()
            .map(|n| n.name.clone())
            .collect();
        let (kept, left): (Vec<Node>, Vec<Node>) = std::mem::take(&mut self.nodes)
            .into_iter()
            .partition(|n| keep.contains(&n.name));
        self.nodes = kept;
        self.unselected.extend(left);
        Ok(())
    }

    /// Every node of the inventory, the selected ones first, whatever `-w` selected.
    pub fn all_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().chain(self.unselected.iter())
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

impl Node {
    pub fn bare(name: &str) -> Node {
        Node {
            name: name.to_string(),
            host: name.to_string(),
            port: None,
            user: None,
            connect_timeout: Duration::from_secs(10),
            command_timeout: Duration::from_secs(120),
            known_hosts: KnownHosts::SshConfig,
            ssh_config: None,
            interfaces: vec![],
            fabric_ips: vec![],
            rdma_devices: vec![],
            ports: vec![],
            vars: serde_json::json!({}),
            transport: TransportKind::Ssh,
            replay_dir: None,
        }
    }

    fn resolve(
        name: &str,
        host: String,
        f: &Fields,
        d: &Fields,
        base: &Path,
    ) -> Result<Node, FieldError> {
        macro_rules! pick {
            ($field:ident) => {
                f.$field.clone().or_else(|| d.$field.clone())
            };
        }
        let dur = |v: Option<String>, def: u64, field: &'static str| match v {
            None => Ok(Duration::from_secs(def)),
            Some(s) => parse_duration(&s).map_err(|e| FieldError::Duration { field, error: e }),
        };
        let known_hosts = known_hosts_policy(pick!(known_hosts).as_deref())?;
        let transport = transport_kind(pick!(transport).as_deref())?;
        let expand_path = |p: String| -> PathBuf {
            let p = if let Some(rest) = p.strip_prefix("~/") {
                std::env::var("HOME")
                    .map(|h| format!("{h}/{rest}"))
                    .unwrap_or(p)
            } else {
                p
            };
            let pb = PathBuf::from(p);
            if pb.is_relative() {
                base.join(pb)
            } else {
                pb
            }
        };
        let replay_dir = pick!(replay_dir).map(expand_path);
        if transport == TransportKind::Replay && replay_dir.is_none() {
            return Err(FieldError::ReplayWithoutDir);
        }
        let interfaces = pick!(interfaces).unwrap_or_default();
        let rdma_devices = pick!(rdma_devices).unwrap_or_default();
        for i in interfaces.iter().chain(rdma_devices.iter()) {
            if !valid_name(i) {
                return Err(FieldError::Interface(i.clone()));
            }
        }
        let fabric_ips = pick!(fabric_ips).unwrap_or_default();
        for ip in &fabric_ips {
            if ip.parse::<std::net::IpAddr>().is_err() {
                return Err(FieldError::FabricIp(ip.clone()));
            }
        }
        if !valid_name(&host) {
            return Err(FieldError::Host(host));
        }
        let user = pick!(user);
        if let Some(u) = &user {
            if !valid_name(u) {
                return Err(FieldError::User(u.clone()));
            }
        }
        let vars = match pick!(vars) {
            Some(t) => serde_json::to_value(t).map_err(FieldError::Vars)?,
            None => serde_json::json!({}),
        };
        Ok(Node {
            name: name.to_string(),
            host,
            port: pick!(port),
            user,
            connect_timeout: dur(pick!(connect_timeout), 10, "connect_timeout")?,
            command_timeout: dur(pick!(command_timeout), 120, "command_timeout")?,
            known_hosts,
            ssh_config: pick!(ssh_config).map(expand_path),
            interfaces,
            fabric_ips,
            rdma_devices,
            ports: pick!(ports).unwrap_or_default(),
            vars,
            transport,
            replay_dir,
        })
    }
}

/// `known_hosts = "..."` (none: the SSH configuration decides).
fn known_hosts_policy(v: Option<&str>) -> Result<KnownHosts, FieldError> {
    Ok(match v {
        None => KnownHosts::SshConfig,
        Some("strict") => KnownHosts::Strict,
        Some("accept-new") => KnownHosts::AcceptNew,
        Some("off") => KnownHosts::Off,
        Some(o) => return Err(FieldError::KnownHosts(o.to_string())),
    })
}

/// `transport = "..."` (none: ssh).
fn transport_kind(v: Option<&str>) -> Result<TransportKind, FieldError> {
    Ok(match v {
        None | Some("ssh") => TransportKind::Ssh,
        Some("local") => TransportKind::Local,
        Some("replay") => TransportKind::Replay,
        Some(o) => return Err(FieldError::Transport(o.to_string())),
    })
}

/// Why a node set does not select nodes of the inventory.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Nodeset(#[from] nodeset::NodesetError),
    #[error("node `{node}` is not in the inventory (it has {nodes})")]
    Unknown { node: String, nodes: String },
}

/// A node's setting (its own or from `[defaults]`) that fabcheck cannot use.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FieldError {
    #[error("{field}: {error}")]
    Duration {
        field: &'static str,
        error: crate::util::duration::DurationError,
    },
    #[error("known_hosts = \"{0}\" is not one of strict, accept-new, off")]
    KnownHosts(String),
    #[error("transport = \"{0}\" is not one of ssh, local, replay")]
    Transport(String),
    #[error("transport = \"replay\" needs replay_dir = \"DIR\" (a --record transcript directory)")]
    ReplayWithoutDir,
    #[error("`{0}` is not a valid interface or device name")]
    Interface(String),
    #[error("fabric_ips: `{0}` is not an IP address")]
    FabricIp(String),
    #[error("host `{0}` is not a valid host name or address")]
    Host(String),
    #[error("user `{0}` is not a valid user name")]
    User(String),
    #[error("{0}")]
    Vars(serde_json::Error),
}

/// The inventory text and its file: where an offset is, for errors.
struct Source<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Source<'_> {
    fn at(&self, offset: usize, message: String) -> InventoryError {
        let (l, c) = line_col(self.text, offset);
        InventoryError {
            location: format!("{}:{l}:{c}", self.path.display()),
            message,
        }
    }
}

/// The file's `[[node]]`s, expanded and checked.
struct Declared {
    /// Without an allocation: every node, resolved, in file order.
    nodes: Vec<Node>,
    /// With one: allocated name -> (its `[[node]]`'s index, host), resolved in allocation order.
    allocated: HashMap<String, (usize, String)>,
    /// name -> offset of its first declaration (the line is only worked out for an error:
    /// counting lines for every node made loading quadratic).
    first_seen: HashMap<String, usize>,
    /// name -> index of its `[[node]]` (to point an error at the value inside that table).
    table: HashMap<String, usize>,
}

/// Every `[[node]]` expanded to its names and hosts, names checked (valid, declared once);
/// resolved when there is no allocation, else kept for [`allocated_nodes`] when allocated.
fn declared_nodes(
    src: &Source,
    file: &File,
    wanted: Option<&HashSet<&str>>,
) -> Result<Declared, InventoryError> {
    let base = src.path.parent().unwrap_or(Path::new("."));
    let mut out = Declared {
        nodes: Vec::new(),
        allocated: HashMap::new(),
        first_seen: HashMap::new(),
        table: HashMap::new(),
    };
    for (idx, spanned) in file.node.iter().enumerate() {
        let start = spanned.span().start;
        let f = spanned.get_ref();
        let Some(name) = &f.name else {
            return Err(src.at(start, "a [[node]] has no `name`; add name = \"spark-01\" (or a node set like \"spark-[01-06]\")".into()));
        };
        let name_at = name.span().start;
        let (names, hosts) = names_and_hosts(src, name, f.host.as_deref())?;
        for (n, host) in names.iter().zip(hosts) {
            if let Some(&first) = out.first_seen.get(n) {
                let line = line_col(src.text, first).0;
                return Err(src.at(name_at, format!("node `{n}` is declared twice (first at line {line}); node names must be unique")));
            }
            if !valid_name(n) {
                return Err(src.at(name_at, format!("`{n}` is not a valid node name")));
            }
            out.first_seen.insert(n.clone(), name_at);
            out.table.insert(n.clone(), idx);
            match wanted {
                None => {
                    let node = Node::resolve(n, host, f, &file.defaults, base)
                        .map_err(|m| src.at(start, format!("node `{n}`: {m}")))?;
                    out.nodes.push(node);
                }
                Some(w) if w.contains(n.as_str()) => {
                    out.allocated.insert(n.clone(), (idx, host));
                }
                Some(_) => {}
            }
        }
    }
    Ok(out)
}

/// A `[[node]]`'s names (its node set expanded) and their hosts (the names, or `host`: one
/// host per name).
fn names_and_hosts(
    src: &Source,
    name: &toml::Spanned<String>,
    host: Option<&str>,
) -> Result<(Vec<String>, Vec<String>), InventoryError> {
    let name_at = name.span().start;
    let names = nodeset::expand(name.get_ref(), &BTreeMap::new())
        .map_err(|e| src.at(name_at, e.to_string()))?;
    let hosts = match host {
        None => names.clone(),
        Some(h) if names.len() == 1 => vec![h.to_string()],
        Some(h) => {
            let hs =
                nodeset::expand(h, &BTreeMap::new()).map_err(|e| src.at(name_at, e.to_string()))?;
            if hs.len() != names.len() {
                return Err(src.at(
                    name_at,
                    format!(
                        "`{}` names {} nodes but host `{h}` names {}; give one host per node",
                        name.get_ref(),
                        names.len(),
                        hs.len()
                    ),
                ));
            }
            hs
        }
    };
    Ok((names, hosts))
}

/// Each address belongs to exactly one node: a fabric address (compared as an address, so
/// `fe80::1` and `fe80:0::1` are one) or an SSH destination (host and port, ssh transport
/// only: local and replayed nodes have no destination) owned by two nodes is an error naming
/// both, located at the second one's value. Linear in the number of addresses.
fn unique_addresses(
    src: &Source,
    file: &File,
    declared: &Declared,
    nodes: &[Node],
) -> Result<(), InventoryError> {
    let mut ips: HashMap<std::net::IpAddr, &str> = HashMap::new();
    let mut hosts: HashMap<(&str, Option<u16>), &str> = HashMap::new();
    for n in nodes {
        for ip in &n.fabric_ips {
            let Ok(addr) = ip.parse::<std::net::IpAddr>() else {
                continue;
            };
            if let Some(first) = ips.insert(addr, &n.name) {
                let what = format!("fabric address {ip}");
                return Err(owned_twice(src, file, declared, &n.name, first, ip, &what));
            }
        }
        if n.transport == TransportKind::Ssh {
            if let Some(first) = hosts.insert((&n.host, n.port), &n.name) {
                let what = match n.port {
                    Some(p) => format!("SSH destination {}:{p}", n.host),
                    None => format!("SSH destination {}", n.host),
                };
                return Err(owned_twice(
                    src, file, declared, &n.name, first, &n.host, &what,
                ));
            }
        }
    }
    Ok(())
}

/// The error for `value` (`what`) of node `second` that node `first` also has.
fn owned_twice(
    src: &Source,
    file: &File,
    declared: &Declared,
    second: &str,
    first: &str,
    value: &str,
    what: &str,
) -> InventoryError {
    let line_of = |n: &str| {
        declared
            .first_seen
            .get(n)
            .map(|&o| format!(" (line {})", line_col(src.text, o).0))
            .unwrap_or_default()
    };
    let message = format!(
        "node `{second}` has {what}, which node `{first}`{} also has; each address belongs to \
         exactly one node: correct the inventory (or run fabcheck discover to see what each \
         node owns)",
        line_of(first)
    );
    // At the value inside the second node's table, else at its name.
    let at = declared.table.get(second).and_then(|&idx| {
        let span = file.node[idx].span();
        let quoted = format!("\"{value}\"");
        src.text
            .get(span.clone())
            .and_then(|t| t.find(&quoted))
            .map(|o| span.start + o + 1)
    });
    match at.or_else(|| declared.first_seen.get(second).copied()) {
        Some(off) => src.at(off, message),
        None => InventoryError {
            location: src.path.display().to_string(),
            message,
        },
    }
}

/// Slurm: the allocated nodes in allocation order, each with its `[[node]]` when the file has
/// one, else with `[defaults]` only.
fn allocated_nodes(
    src: &Source,
    file: &File,
    (from, names): (&str, &[String]),
    mut declared: HashMap<String, (usize, String)>,
) -> Result<Vec<Node>, InventoryError> {
    let base = src.path.parent().unwrap_or(Path::new("."));
    let d = &file.defaults;
    let bare = Fields::default();
    let mut nodes = Vec::new();
    for n in names {
        let node = match declared.remove(n) {
            Some((idx, host)) => {
                let spanned = &file.node[idx];
                Node::resolve(n, host, spanned.get_ref(), d, base)
                    .map_err(|m| src.at(spanned.span().start, format!("node `{n}`: {m}")))?
            }
            None => Node::resolve(n, n.clone(), &bare, d, base).map_err(|m| InventoryError {
                location: format!("{from} with defaults from {}", src.path.display()),
                message: format!("node `{n}`: {m}"),
            })?,
        };
        nodes.push(node);
    }
    Ok(nodes)
}

/// `[groups]`, every member a node of the inventory; with an allocation, each group cut to
/// its allocated members (a site-wide defaults file names the whole cluster), empty ones left
/// out.
fn checked_groups(
    path: &Path,
    file: &File,
    wanted: Option<&HashSet<&str>>,
    first_seen: &HashMap<String, usize>,
) -> Result<BTreeMap<String, String>, InventoryError> {
    let mut groups = file.groups.clone();
    for (g, def) in &file.groups {
        let members = nodeset::expand(def, &file.groups).map_err(|e| InventoryError {
            location: format!("{} [groups] {g}", path.display()),
            message: e.to_string(),
        })?;
        if let Some(w) = wanted {
            let inside: Vec<String> = members
                .into_iter()
                .filter(|m| w.contains(m.as_str()))
                .collect();
            if inside.is_empty() {
                groups.remove(g);
            } else {
                groups.insert(g.clone(), inside.join(","));
            }
            continue;
        }
        if let Some(unknown) = members.iter().find(|m| !first_seen.contains_key(*m)) {
            return Err(InventoryError {
                location: format!("{} [groups] {g}", path.display()),
                message: format!(
                    "group `{g}` names `{unknown}`, which is not a [[node]] of this inventory"
                ),
            });
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::duration::MAX_DURATION;

    fn parse(s: &str) -> Result<Inventory, InventoryError> {
        Inventory::parse(s, Path::new("inv.toml"))
    }

    #[test]
    fn nodesets_defaults_and_groups() {
        let inv = parse(
            r#"
[defaults]
user = "nvidia"
command_timeout = "30s"
[[node]]
name = "spark-01"
host = "10.0.0.11"
interfaces = ["enp1s0f1np1"]
[[node]]
name = "spark-[02-03]"
[groups]
fabric = "spark-[01-03]"
"#,
        )
        .unwrap();
        assert_eq!(inv.nodes.len(), 3);
        assert_eq!(inv.nodes[0].host, "10.0.0.11");
        assert_eq!(inv.nodes[2].host, "spark-03");
        assert_eq!(inv.nodes[1].user.as_deref(), Some("nvidia"));
        assert_eq!(inv.nodes[1].command_timeout, Duration::from_secs(30));
        assert_eq!(inv.select("@fabric").unwrap().len(), 3);
        assert!(inv
            .select("spark-09")
            .unwrap_err()
            .to_string()
            .contains("not in the inventory"));
    }

    #[test]
    fn durations_past_30_days_are_errors_not_panics() {
        for bad in [
            "1e300",
            "18446744073709551615",
            "2592001",
            "31days",
            "1e20s",
            "NaN",
            "-1",
            "inf",
        ] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{bad}: {e}");
        }
        assert!(parse_duration("1e300")
            .unwrap_err()
            .to_string()
            .contains("30days"));
        assert_eq!(parse_duration("2592000").unwrap(), MAX_DURATION);
        assert_eq!(parse_duration("30days").unwrap(), MAX_DURATION);
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        let e =
            parse("[defaults]\ncommand_timeout = \"1e300\"\n[[node]]\nname = \"a\"\n").unwrap_err();
        assert!(
            e.message.contains("command_timeout") && e.message.contains("30days"),
            "{e}"
        );
    }

    #[test]
    fn node_names_from_w_and_the_inventory_are_host_checked() {
        for bad in ["-Efoo", "-oProxyCommand", "a,-b", "-[1-2]x"] {
            let e = Inventory::from_nodeset(bad).unwrap_err();
            assert!(e.message.contains("not a valid host name"), "{bad}: {e}");
        }
        assert_eq!(Inventory::from_nodeset("a[1-2],b").unwrap().nodes.len(), 3);
        let e = parse("[[node]]\nname = \"-x\"\nhost = \"10.0.0.1\"\n").unwrap_err();
        assert!(e.message.contains("not a valid node name"), "{e}");
    }

    #[test]
    fn many_nodes_select_and_restrict() {
        let mut text = String::from("[defaults]\nuser = \"u\"\n");
        for i in 0..20_000 {
            text.push_str(&format!("[[node]]\nname = \"n{i:05}\"\nhost = \"h{i}\"\n"));
        }
        text.push_str("[[node]]\nname = \"n00007\"\n[groups]\nall = \"n[00000-19999]\"\n");
        // the duplicate is found and located at its line, the first declaration's line named
        let e = parse(&text).unwrap_err();
        assert!(e.location.starts_with("inv.toml:60004:"), "{e}");
        assert!(e.message.contains("first at line 25"), "{e}");
        let text = text.replace("[[node]]\nname = \"n00007\"\n[groups]", "[groups]");
        let mut inv = parse(&text).unwrap();
        assert_eq!(inv.nodes.len(), 20_000);
        assert_eq!(inv.nodes[19_999].host, "h19999");
        assert_eq!(inv.select("@all").unwrap().len(), 20_000);
        assert_eq!(inv.select("n[00010-00012]").unwrap()[2].name, "n00012");
        inv.restrict("n[00100-00199],n00005").unwrap();
        assert_eq!(inv.nodes.len(), 101);
        assert_eq!(inv.nodes[0].name, "n00005");
    }

    #[test]
    fn an_address_owned_by_two_nodes_names_both_and_the_value() {
        // spark-02 was given spark-01's second rail address (a copied netplan)
        let e = parse(
            "[[node]]\nname = \"spark-01\"\nfabric_ips = [\"192.168.100.10\", \"192.168.200.10\"]\n\
             [[node]]\nname = \"spark-02\"\nfabric_ips = [\"192.168.100.11\", \"192.168.200.10\"]\n",
        )
        .unwrap_err();
        assert_eq!(e.location, "inv.toml:6:34", "{e}");
        assert!(
            e.message.contains("`spark-02`")
                && e.message.contains("`spark-01` (line 2)")
                && e.message.contains("192.168.200.10"),
            "{e}"
        );
        // one address written two ways is one address
        let e = parse("[[node]]\nname = \"a\"\nfabric_ips = [\"fd00::1\"]\n[[node]]\nname = \"b\"\nfabric_ips = [\"fd00:0::1\"]\n").unwrap_err();
        assert!(
            e.message.contains("`b` has fabric address fd00:0::1"),
            "{e}"
        );
        // a node set sharing one list of addresses: every node would own them
        let e = parse("[[node]]\nname = \"n[1-2]\"\nfabric_ips = [\"10.0.0.1\"]\n").unwrap_err();
        assert!(
            e.message.contains("`n2`") && e.message.contains("`n1`"),
            "{e}"
        );
        // two nodes behind one SSH destination are one machine; another port is another one
        let e = parse("[[node]]\nname = \"a\"\nhost = \"10.0.0.11\"\n[[node]]\nname = \"b\"\nhost = \"10.0.0.11\"\n").unwrap_err();
        assert_eq!(e.location, "inv.toml:6:9", "{e}");
        assert!(e.message.contains("SSH destination 10.0.0.11"), "{e}");
        parse("[[node]]\nname = \"a\"\nhost = \"h\"\nport = 2201\n[[node]]\nname = \"b\"\nhost = \"h\"\nport = 2202\n").unwrap();
        // local and replayed nodes have no SSH destination; distinct addresses are fine
        parse("[defaults]\ntransport = \"local\"\n[[node]]\nname = \"a\"\nhost = \"x\"\nfabric_ips = [\"10.0.0.1\"]\n[[node]]\nname = \"b\"\nhost = \"x\"\nfabric_ips = [\"10.0.0.2\"]\n").unwrap();
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("[defaults]\nuser = \"a\"\n[[node]]\nname = \"x\"\nspeed = 3\n").unwrap_err();
        assert!(e.location.starts_with("inv.toml:5:"), "{e}");
        assert!(e.message.contains("speed"), "{e}");
        let e = parse("[[node]]\nname = \"a\"\n[[node]]\nname = \"a\"\n").unwrap_err();
        assert!(e.location.starts_with("inv.toml:4:"), "{e}");
        assert!(e.message.contains("declared twice"), "{e}");
        let e = parse("[[node]]\nname = \"a\"\n[groups]\ng = \"b\"\n").unwrap_err();
        assert!(e.message.contains("`b`"), "{e}");
        let e =
            parse("[[node]]\nname = \"a\"\ninterfaces = [\"eth0; touch /tmp/x\"]\n").unwrap_err();
        assert!(e.message.contains("not a valid interface"), "{e}");
        assert!(parse("[[node]\n")
            .unwrap_err()
            .location
            .starts_with("inv.toml:1:"));
    }
}
