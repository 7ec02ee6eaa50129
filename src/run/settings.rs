//! Every `--set` key fabcheck knows, declared once (issue 48 item 2).
//!
//! One row per key, the way ripgrep declares its flags (`crates/core/flags/defs.rs`: one
//! declaration per flag carrying its name, type, default and doc, read by the parser, `--help`
//! and the man page alike): its name, type, unit, default, an example value, who reads it (a
//! shipped script, a stdlib module, or the run's own Rust code), where the value comes from when
//! `--set` does not give it, and one line of doc. Read by:
//! - `engine::params` — a `--set` key no row applies to (and no user script reads) is refused,
//!   with "did you mean"; a value of the wrong type too;
//! - `fabcheck doc` (`cli/doc.rs`) and the generated table of docs/scripts.md;
//! - the tests: a key a shipped script or stdlib module reads without a row here fails
//!   `engine::params`' unit tests, and so does a row whose readers do not read it.
//!
//! A user's own script keeps its own keys: `param("k", …)` in the running script (or a module
//! beside it) is accepted without a row (`engine::params` reads the script's text).
//!
//! To add a key: add a row (keep the list sorted by name), name every reader, and run
//! `FABCHECK_BLESS=1 cargo test --test it cli_output` to regenerate `fabcheck doc`'s golden
//! file and the docs' tables.

/// The type a `--set` value must have (values that parse as numbers or `true`/`false` are typed
/// by the command line: a `Text` key takes any value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Number,
    Bool,
    Text,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Number => "number",
            Kind::Bool => "bool",
            Kind::Text => "text",
        }
    }
}

/// Who reads a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A shipped script, `scripts/NAME` (file name with `.rhai`).
    Script(&'static str),
    /// A stdlib module, `stdlib/NAME.rhai`: embedded in every run, so its keys are accepted
    /// whatever script runs.
    Stdlib(&'static str),
    /// The run's own Rust code (`src/…` file): read whatever script runs.
    Run(&'static str),
}

impl Reader {
    /// As the docs show it: `five_step_acceptance.rhai`, `stdlib nccl`, `every run (src/…)`.
    pub(crate) fn shown(self) -> String {
        match self {
            Reader::Script(s) => s.to_string(),
            Reader::Stdlib(m) => format!("stdlib {m}"),
            Reader::Run(f) => format!("every run ({f})"),
        }
    }
}

/// Where the value comes from when `--set` does not give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `--set`, else the default.
    Set,
    /// `--set`, else the node var of the same name (of the node the script reads it on, the
    /// first node where one value serves all), else the default.
    NodeVar,
    /// An expectation (`n.expect(KEY)`, `primitives::profile::expect`): `--set`, else the node
    /// var, else the platform profile, else what the hardware shows.
    Expect,
    /// `--set`, else the inventory (the node var, or the port's own field), else what is read
    /// from the node.
    Read,
}

impl Source {
    pub(crate) fn shown(self) -> &'static str {
        match self {
            Source::Set => "`--set` > default",
            Source::NodeVar => "`--set` > node var > default",
            Source::Expect => "`--set` > node var > profile > hardware",
            Source::Read => "`--set` > inventory > read from the node",
        }
    }
}

/// One `--set` key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting {
    pub name: &'static str,
    pub kind: Kind,
    /// Empty where the value has none.
    pub unit: &'static str,
    /// What is used without `--set`, in words (after `source`'s chain).
    pub default: &'static str,
    /// A value of the right type the docs show and the docs test passes to a dry run.
    pub example: &'static str,
    pub readers: &'static [Reader],
    pub source: Source,
    pub doc: &'static str,
}

impl Setting {
    /// Is the key read in a run of these scripts (file names)? A stdlib module or the run's
    /// Rust code reads it in every run; a shipped script only where it runs.
    pub(crate) fn read_in(&self, scripts: &[&str]) -> bool {
        self.readers.iter().any(|r| match r {
            Reader::Script(s) => scripts.contains(s),
            Reader::Stdlib(_) | Reader::Run(_) => true,
        })
    }

    /// The shipped scripts that read it (empty: every run).
    pub(crate) fn scripts(&self) -> Vec<&'static str> {
        if self.read_in(&[]) {
            return Vec::new();
        }
        self.readers
            .iter()
            .filter_map(|r| match r {
                Reader::Script(s) => Some(*s),
                _ => None,
            })
            .collect()
    }
}

const BASELINE: Reader = Reader::Script("fabric_baseline.rhai");
const HEALTH: Reader = Reader::Script("fabric_health.rhai");
const NODE_HEALTH: Reader = Reader::Script("node_health.rhai");
const HEALTH_CMD: Reader = Reader::Run("src/cli/health.rs");
const FIVE_STEP: Reader = Reader::Script("five_step_acceptance.rhai");
const LOCALISE: Reader = Reader::Script("localise.rhai");
const SECOND_CABLE: Reader = Reader::Script("second_cable_checklist.rhai");
const PEERS: Reader = Reader::Run("src/run/peers.rs");
const FLEET: Reader = Reader::Run("src/run/fleet.rs");

/// Shorthand for a row (the table below stays one line of facts per key).
#[allow(clippy::too_many_arguments)]
const fn row(
    name: &'static str,
    kind: Kind,
    unit: &'static str,
    default: &'static str,
    example: &'static str,
    readers: &'static [Reader],
    source: Source,
    doc: &'static str,
) -> Setting {
    Setting {
        name,
        kind,
        unit,
        default,
        example,
        readers,
        source,
        doc,
    }
}

use Kind::{Bool, Number, Text};
use Source::{Expect, NodeVar, Read, Set};

/// Every `--set` key, sorted by name.
#[rustfmt::skip]
pub(crate) const SETTINGS: &[Setting] = &[
    row("at_limit_pct", Number, "%", "90", "90", &[SECOND_CABLE], Set,
        "one cable at this share of the limit both ports share: a second cable adds nothing"),
    row("backup_dir", Text, "", "/var/tmp", "/var/tmp", &[FIVE_STEP], Set,
        "the directory in which step 5 makes its backup directory (owned by root, not writable by others, or sticky)"),
    row("batch_size", Number, "", "unanswered (no)", "32", &[SECOND_CABLE], NodeVar,
        "question 1: the batch size (> 24 is yes)"),
    row("bond", Text, "", "bond0", "bond0", &[SECOND_CABLE], Set,
        "the bond the pitfall checks read"),
    row("bond_hash_policy", Text, "", "layer3+4", "layer3+4", &[SECOND_CABLE], Set,
        "the bond's expected transmit hash policy (\"\" = any)"),
    row("bond_ip", Text, "", "none", "192.168.50.10", &[SECOND_CABLE], NodeVar,
        "the bond's address on the first node, the iperf3 -P 16 server"),
    row("both_directions", Bool, "", "true", "false", &[BASELINE, FIVE_STEP], Set,
        "`false`: RDMA write one way only ([a -> b], not also [b -> a])"),
    row("confirm", Number, "measurements", "1 (localise: 3)", "2",
        &[BASELINE, FIVE_STEP, LOCALISE, NODE_HEALTH, SECOND_CABLE], Set,
        "re-measurements of a bandwidth failure before it is one (one that does not reproduce is FLAKY); localise: good nodes a suspect must fail against"),
    row("drift_fail", Text, "", "firmware,driver,nccl", "firmware,driver,nccl,kernel", &[HEALTH], Set,
        "version items whose differences fail (firmware, driver, ofed, kernel, nccl, perftest); the others warn"),
    row("driver", Text, "", "none: only drift is judged", "5.8-1.1.4", &[BASELINE, HEALTH, Reader::Stdlib("health")], NodeVar,
        "the NIC driver version every fabric port must run"),
    row("duration", Number, "s", "2", "2", &[LOCALISE], Set,
        "iperf3 seconds per direction of each pair test"),
    row("evidence", Bool, "", "true", "false", &[SECOND_CABLE], Set,
        "`false` leaves out the RDMA evidence measurement"),
    row("firmware", Text, "", "none: only drift is judged", "28.45.4028", &[BASELINE, HEALTH, Reader::Stdlib("health")], NodeVar,
        "the NIC firmware every fabric port must run (matched on the version word)"),
    row("fleet", Bool, "", "true", "false", &[FLEET], Set,
        "`false` turns the fleet view off (a node or HCA in every slow pair, docs/diagnosis.md)"),
    row("fleet_mad_factor", Number, "MADs", "4", "4", &[FLEET], Set,
        "the fleet view: least drop below the reference, in median absolute deviations of the results without the part"),
    row("fleet_min_drop", Number, "fraction", "0.05", "0.1", &[FLEET], Set,
        "the fleet view: least drop below the median of the results without the part, as a fraction of it (0.05 = 5 %)"),
    row("gdr", Bool, "", "true", "false", &[Reader::Stdlib("nccl"), Reader::Stdlib("rdma"), HEALTH, NODE_HEALTH], Expect,
        "GPUDirect RDMA expected: required in NCCL's log, and nvidia_peermem loaded"),
    row("gdr_pct", Number, "%", "90", "80", &[BASELINE], Set,
        "the floor of RDMA write from GPU memory, a share of the same rail's write from host memory"),
    row("gid_index", Number, "", "3", "3", &[Reader::Stdlib("rdma"), BASELINE, FIVE_STEP, HEALTH, NODE_HEALTH, SECOND_CABLE], Set,
        "the RoCE GID index (ib_write_bw -x, NCCL_IB_GID_INDEX, the GID check)"),
    row("gpu_memory", Bool, "", "true", "false", &[BASELINE], Set,
        "the InfiniBand rails' RDMA write from GPU memory (ib_write_bw --use_cuda) against host memory; false leaves it out"),
    row("gpu_pcie_error_growth", Number, "errors", "8", "0", &[BASELINE], Set,
        "how much a PCIe device's correctable AER count (per device: a GPU, an HCA or RoCE RDMA device such as a DGX Spark rail's ConnectX-7 function, the port above each) and a GPU's PCIe replay counter may grow between the baseline's reads before and after the load; uncorrectable (non-fatal, fatal) AER errors and replay rollovers are never tolerated"),
    row("gpus_per_node", Number, "ranks", "the GPUs the node shows", "1",
        &[Reader::Run("src/primitives/nccl.rs")], Expect,
        "NCCL ranks per node in a full-node collective, one per GPU"),
    row("health_window", Number, "s", "5 (replayed transcripts: 0)", "10", &[HEALTH_CMD], Set,
        "fabcheck health --context healthcheck: seconds between the two reads of the error counters"),
    row("ib_adaptive_routing", Text, "", "consistent", "on", &[Reader::Stdlib("infiniband")], Set,
        "adaptive routing as the site runs it, judged from ibdiagnet's summary: consistent (on every switch or on none; none warns), on (every switch), off (none: static routing by choice) or any"),
    row("ib_cabling_plan", Text, "", "none: cables are not compared with a plan", "/etc/fabcheck/cabling-plan.txt", &[Reader::Stdlib("infiniband")], Set,
        "the site's cabling plan (lines `SWITCH:PORT <-> SWITCH:PORT` or `SWITCH:PORT <-> HOST:HCA`, docs/infiniband.md), or an `ibnetdiscover` output saved when the fabric was accepted (the whole fabric: a cable it does not list fails too), read on the node iblinkinfo runs on; every planned cable is compared with where it lands"),
    row("ib_mtu", Number, "bytes", "4096", "4096", &[Reader::Stdlib("infiniband")], Set,
        "the IB MTU every active InfiniBand port must run (ibv_devinfo active_mtu)"),
    row("ib_pkey", Text, "", "0x7fff (the default partition)", "0x8001", &[Reader::Stdlib("infiniband")], Set,
        "the compute partition's P_Key: every IB port must be a full member of it"),
    row("ib_rate_gbps", Number, "Gb/s", "the node's fastest IB port", "400", &[Reader::Stdlib("infiniband"), NODE_HEALTH], Expect,
        "the rate every InfiniBand port and fabric link must run at (or faster)"),
    row("ib_sharp", Text, "", "any: logged", "on", &[Reader::Stdlib("infiniband")], Set,
        "SHARP as the site runs it, judged from ibdiagnet's summary: on (an aggregation node on every switch) or any"),
    row("ib_sm", Text, "", "none: any one master seen alike from every node", "0xb8cef60300aa0001", &[Reader::Stdlib("infiniband")], Set,
        "the port GUID of the site's master subnet manager (sminfo from every node must name it)"),
    row("ib_sm_standby", Text, "", "none: no standby required", "0xb8cef60300aa0002", &[Reader::Stdlib("infiniband")], Set,
        "the port GUID of the site's standby subnet manager (sminfo -G GUID must answer SMINFO_STANDBY)"),
    row("ib_uplink_rate_gbps", Number, "Gb/s", "the rate the nodes' HCAs are held to (ib_rate_gbps)", "400", &[Reader::Stdlib("infiniband")], Set,
        "the rate every switch-to-switch cable (leaf to spine) must run at (or faster)"),
    row("ibdiagnet", Bool, "", "false", "true", &[HEALTH], Set,
        "run ibdiagnet's subnet sweep from the first IB node (heavy)"),
    row("ibdiagnet_fail", Text, "", "Links Check,Speed / Width,Subnet Manager,Partition Keys", "Links Check,Port Counters", &[Reader::Stdlib("infiniband")], Set,
        "the ibdiagnet stages whose warnings fail (comma-separated stage names or their beginnings; `none`: warnings are only logged)"),
    row("ibdiagnet_timeout", Text, "duration", "15m", "15m", &[HEALTH], Set,
        "how long ibdiagnet may take"),
    row("iommu_mode", Text, "", "passthrough (identity, or no IOMMU)", "translated", &[Reader::Stdlib("infiniband")], Set,
        "the IOMMU mode the GPUs and HCAs must be in for GPUDirect RDMA: passthrough, or translated where the site runs it so on purpose"),
    row("iperf3_args", Text, "", "none", "-b 2G", &[LOCALISE], Set,
        "extra iperf3 client arguments (e.g. `-b 2G` paces the sender)"),
    row("iperf3_min_gbps", Number, "Gbit/s", "75 % of the port's expected speed", "130", &[SECOND_CABLE], Expect,
        "the floor of iperf3 -P 16 over the bond"),
    row("lacp_days_ok", Bool, "", "unanswered (no)", "true", &[SECOND_CABLE], NodeVar,
        "question 4: ready to spend two days on LACP?"),
    row("lacp_rate", Text, "", "any", "fast", &[SECOND_CABLE], Set,
        "the bond's expected LACP rate (fast or slow)"),
    row("link_layer", Text, "", "ethernet (RoCE)", "ethernet",
        &[Reader::Stdlib("infiniband"), Reader::Stdlib("common"), Reader::Run("src/primitives/profile.rs")], Read,
        "the node's fabric, infiniband or ethernet: which checks apply (sysfs link_layer of its RDMA ports)"),
    row("link_utilization_pct", Number, "%", "unanswered (no), or measure_utilization", "85", &[SECOND_CABLE], NodeVar,
        "question 3: single-link utilisation (> 80 is yes)"),
    row("max_pre_fec_ber", Number, "", "1e-6", "1e-6", &[BASELINE, FIVE_STEP, HEALTH, NODE_HEALTH], Set,
        "highest pre-FEC bit error rate: between the two counter reads (RoCE FEC), and the raw BER mlxlink shows on IB"),
    row("measure_utilization", Bool, "", "false", "true", &[SECOND_CABLE], Set,
        "measure question 3 from the first port's RDMA counters instead of link_utilization_pct"),
    row("mgmt_ssh_from_peer", Bool, "", "true", "false", &[FIVE_STEP], Set,
        "step 5 also opens a fresh SSH connection from the other node"),
    row("min_fraction", Number, "of the median", "0.7", "0.7", &[LOCALISE], Set,
        "a pair passes at this fraction of the ring's median rate (without min_gbps)"),
    row("min_gbps", Number, "Gbit/s", "0: min_fraction of the median", "50", &[LOCALISE], Set,
        "a fixed pass line for each pair"),
    row("model_params_b", Number, "billion parameters", "unanswered (no)", "70", &[SECOND_CABLE], NodeVar,
        "question 2: the size of the models trained (70 and more is yes)"),
    row("mtu", Number, "bytes", "the MTU most fabric interfaces have", "9000", &[Reader::Stdlib("link")], Expect,
        "the MTU every fabric interface must have"),
    row("nccl", Bool, "", "true", "false", &[BASELINE, FIVE_STEP], Set,
        "`false` leaves out the NCCL tests (reported as skipped)"),
    row("nccl_args", Text, "", "-b 8 -e 1G -f 2 -g 1", "-b 8 -e 1G -f 2 -g 1", &[Reader::Stdlib("nccl")], Set,
        "all_reduce_perf's arguments"),
    row("nccl_binary", Text, "", "all_reduce_perf", "all_reduce_perf", &[BASELINE, FIVE_STEP], Set,
        "the nccl-tests program (a name on PATH, /usr/local/bin, ~/nccl-tests/build, or a path)"),
    row("nccl_collective_args", Text, "", "-b 1M -e 8G -f 2 -g 1", "-b 1M -e 8G -f 2 -g 1", &[Reader::Stdlib("nccl")], Set,
        "the arguments of the other collectives' nccl-tests runs (alltoall_perf, ...)"),
    row("nccl_collective_min_gbs", Number, "GB/s", "all_gather, reduce_scatter: 60 % of the node's rails together; alltoall, sendrecv: 50 % of one port", "25", &[Reader::Stdlib("nccl")], Set,
        "one busbw line for the other collectives"),
    row("nccl_collectives", Text, "", "on InfiniBand alltoall,all_gather,reduce_scatter,sendrecv; else none", "alltoall,sendrecv", &[BASELINE], Set,
        "the collectives the baseline runs on all nodes besides all_reduce (none: only all_reduce)"),
    row("nccl_ib_hca", Text, "", "the first node's rdma_devices joined by ,", "rocep1s0f1,roceP2p1s0f1",
        &[Reader::Stdlib("nccl"), Reader::Stdlib("acceptance"), SECOND_CABLE], Set,
        "NCCL_IB_HCA of the NCCL tests (wins over a recipe's); the second-cable check: it must select every device"),
    row("nccl_midsize_min_gbs", Number, "GB/s", "none", "10", &[Reader::Stdlib("nccl")], Set,
        "a busbw floor for every message size from 64 MiB to 256 MiB"),
    row("nccl_min_busbw_gbs", Number, "GB/s", "80 % of the first port's expected speed (one rank per GPU: nccl_node_busbw_gbs)", "20",
        &[BASELINE, FIVE_STEP], Set,
        "the best busbw's floor; 0 records only"),
    row("nccl_node_busbw_gbs", Number, "GB/s", "70 % of the node's rails together", "280", &[Reader::Stdlib("nccl")], Expect,
        "the busbw floor of a full-node collective (one rank per GPU)"),
    row("nccl_transport", Text, "", "IB", "IB", &[Reader::Stdlib("nccl"), BASELINE, FIVE_STEP], Set,
        "the NCCL transport expected (IB covers RoCE; Socket is a silent fallback)"),
    row("netplan_generate", Bool, "", "true", "false", &[FIVE_STEP], Set,
        "step 5 runs `netplan generate` on the restored files in a scratch root"),
    row("netplan_glob", Text, "", "/etc/netplan/*.yaml", "/etc/netplan/*.yaml", &[FIVE_STEP], Set,
        "the files step 5 backs up and restores"),
    row("nodes", Text, "", "@fabric, else every node", "spark-01,spark-02", &[Reader::Stdlib("common"), HEALTH], Set,
        "the nodes to check (a node set)"),
    row("odd_mad_factor", Number, "MADs", "3", "3", &[PEERS], Set,
        "the odd one out: least drop below the median, in median absolute deviations"),
    row("odd_min_drop", Number, "fraction", "0.1", "0.2", &[PEERS], Set,
        "the odd one out: least drop below the median, as a fraction of it (0.1 = 10 %)"),
    row("odd_min_peers", Number, "results", "4", "4", &[PEERS], Set,
        "the odd one out: fewest comparable results before any is compared"),
    row("odd_one_out", Bool, "", "true", "false", &[PEERS], Set,
        "`false` turns the diagnosis's comparison of each result with its peers off"),
    row("ofed_min", Text, "", "none", "5.8-1.1.4", &[SECOND_CABLE], Set,
        "the lowest OFED/DOCA version the pitfall checks accept"),
    row("pcie_gts", Number, "GT/s", "the NIC's LnkCap speed", "32", &[Reader::Stdlib("health")], Expect,
        "the PCIe link speed every fabric NIC must run at (LnkSta)"),
    row("pcie_width", Number, "lanes", "the NIC's LnkCap width", "16", &[Reader::Stdlib("health")], Expect,
        "the PCIe link width every fabric NIC must run at (LnkSta)"),
    row("peermem", Bool, "", "gdr of the node", "true", &[HEALTH, NODE_HEALTH], Set,
        "check that nvidia_peermem is loaded (`false` where GPUDirect goes through DMA-BUF)"),
    row("ping_count", Number, "pings", "5", "5", &[FIVE_STEP], Set,
        "pings per fabric address"),
    row("rails_per_port", Number, "rails", "1", "2", &[Reader::Stdlib("rdma"), Reader::Stdlib("second_cable")], Expect,
        "the logical rails a physical port carries (a DGX Spark QSFP port is 2)"),
    row("rdma_duration", Number, "s", "5", "5", &[BASELINE, FIVE_STEP, SECOND_CABLE], Set,
        "seconds per ib_write_bw run (-D)"),
    row("rdma_lat_max_usec", Number, "us", "none: judged against the peers only", "3", &[BASELINE], Set,
        "a fixed line for the RDMA latency of every rail"),
    row("rdma_pct", Number, "%", "90 (node_health's loopback: 80)", "80", &[BASELINE, FIVE_STEP, NODE_HEALTH, SECOND_CABLE], Set,
        "the RDMA write floor, a share of the port's expected speed (rails summed)"),
    row("recipe", Text, "", "none: step 4 is skipped", "/home/nvidia/recipe/hostfile", &[Reader::Stdlib("acceptance")], NodeVar,
        "the serving recipe (hostfile, config or env file) step 4 checks and step 3's NCCL runs with"),
    row("recipe_node", Text, "", "the first node", "spark-01", &[Reader::Stdlib("acceptance")], Set,
        "the node the recipe is read on"),
    row("roce_prio", Number, "", "3", "3", &[HEALTH], NodeVar,
        "the priority RoCE traffic is marked with: PFC and ECN must be on for it"),
    row("roce_tc", Number, "", "none: not checked", "106", &[HEALTH], NodeVar,
        "the traffic class NCCL_IB_TC and perftest --tclass use: with trust dscp its DSCP must map to roce_prio"),
    row("rounds", Number, "", "1", "2", &[LOCALISE], Set,
        "rings of pair tests (2 adds the ring shifted by two, and so on)"),
    row("second_cable", Bool, "", "two ports in the inventory", "true", &[SECOND_CABLE], Set,
        "run the second-cable pitfall checks (or not)"),
    row("shared_limit_gbps", Number, "Gbit/s", "one port's expected speed", "200", &[SECOND_CABLE], Expect,
        "the limit both ports of a node share"),
    row("speed_mbps", Number, "Mbit/s", "the highest supported link mode (0: the same)", "200000",
        &[BASELINE, FIVE_STEP, NODE_HEALTH, SECOND_CABLE, Reader::Stdlib("link")], Read,
        "the speed every fabric port must have negotiated (the inventory's port or node speed_mbps)"),
    row("spine", Bool, "", "true", "false", &[BASELINE], Set,
        "the InfiniBand traffic across the spine (cross-rail, every HCA at once, each node against one of another group of leaves); false leaves it out"),
    row("spine_pairs", Text, "", "topology: from iblinkinfo (nodes sharing leaves are a group, each node paired with one of another group), else the inventory's order", "inventory", &[BASELINE], Set,
        "how the cross-spine test pairs nodes: topology, or inventory (the first half of the inventory's nodes against the second, as before the topology was read)"),
    row("spine_pct", Number, "%", "rdma_pct (90): a non-blocking fat tree gives every flow its port's rate", "45", &[BASELINE], Set,
        "the floor of each cross-spine RDMA flow, a share of its HCA's expected rate (a site that oversubscribes its spines gives the share)"),
    row("spine_rail_shift", Number, "rails", "1", "4", &[BASELINE], Set,
        "the cross-spine test pairs the client's rail k with the server's rail k+shift"),
    row("strict_host_key", Bool, "", "false", "true", &[FIVE_STEP], Set,
        "step 2 also requires the peers' host keys to be known already"),
    row("switch", Bool, "", "true", "false", &[HEALTH], NodeVar,
        "`false`: back-to-back cables, lossless-config differences are warnings"),
    row("undrain_after", Number, "runs", "2", "3", &[HEALTH_CMD], Set,
        "fabcheck health --slurm: healthy runs in a row before a node fabcheck drained is resumed"),
    row("utilization_window_s", Number, "s", "30", "30", &[SECOND_CABLE], Set,
        "how long measure_utilization reads the counters"),
    row("workload", Text, "", "none", "echo metric tokens_per_s 1", &[BASELINE], Set,
        "a command run on the first node; its `metric NAME VALUE [UNIT]` lines become metrics"),
];

/// Is `file` (a script's file name) one of the shipped scripts the table names?
pub(crate) fn shipped(file: &str) -> bool {
    SETTINGS
        .iter()
        .flat_map(|s| s.readers)
        .any(|r| matches!(r, Reader::Script(n) if *n == file))
}

/// Number keys that take a whole number in a range (`--set` refuses anything else before the
/// run, and the test option of the same name too): `(key, lowest, highest)`.
pub(crate) const WHOLE_RANGES: &[(&str, i64, i64)] = &[("confirm", 0, 10)];

/// The range of a whole-number key of [`WHOLE_RANGES`].
pub(crate) fn whole_range(key: &str) -> Option<(i64, i64)> {
    WHOLE_RANGES
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, lo, hi)| (*lo, *hi))
}

/// The row of `name`.
pub(crate) fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_key_sorted_with_readers_and_doc() {
        assert!(SETTINGS.len() > 60, "{}", SETTINGS.len());
        for w in SETTINGS.windows(2) {
            assert!(w[0].name < w[1].name, "{} then {}", w[0].name, w[1].name);
        }
        for s in SETTINGS {
            assert!(
                !s.readers.is_empty() && !s.doc.is_empty() && !s.example.is_empty(),
                "{}",
                s.name
            );
        }
    }

    /// Every row's example has the row's type, as `--set` types it.
    #[test]
    fn examples_have_the_rows_type() {
        for s in SETTINGS {
            let number = s.example.parse::<f64>().is_ok();
            let boolean = matches!(s.example, "true" | "false");
            let ok = match s.kind {
                Kind::Number => number,
                Kind::Bool => boolean,
                Kind::Text => !boolean,
            };
            assert!(
                ok,
                "{}: example {} is not a {}",
                s.name,
                s.example,
                s.kind.name()
            );
        }
    }

    /// The odd-one-out defaults the table documents are the policy's own.
    #[test]
    fn odd_one_out_defaults_are_the_policys() {
        let d = super::super::peers::PeerPolicy::default();
        let num = |k: &str| find(k).unwrap().default.parse::<f64>().unwrap();
        assert_eq!(num("odd_min_peers") as usize, d.min_peers);
        assert_eq!(num("odd_min_drop"), d.min_drop);
        assert_eq!(num("odd_mad_factor"), d.mad_factor);
        let off = serde_json::json!({"odd_one_out": false});
        assert!(super::super::peers::PeerPolicy::from_params(off.as_object().unwrap()).is_none());
        let f = super::super::fleet::FleetPolicy::default();
        assert_eq!(num("fleet_min_drop"), f.min_drop);
        assert_eq!(num("fleet_mad_factor"), f.mad_factor);
    }

    /// Every key a platform profile sets is an expectation row (read through `n.expect`).
    #[test]
    fn every_profile_expectation_is_an_expectation_row() {
        use super::super::profile::{expectations, PROFILES};
        for p in PROFILES {
            for (k, v, _) in expectations(p) {
                let s = find(k).unwrap_or_else(|| panic!("profile {p} sets {k}: add a row"));
                assert_eq!(s.source, Source::Expect, "{k}");
                let kind = if v.is_boolean() {
                    Kind::Bool
                } else {
                    Kind::Number
                };
                assert_eq!(s.kind, kind, "{k}");
            }
        }
    }

    #[test]
    fn a_shipped_scripts_key_is_read_only_where_that_script_runs() {
        let ib = find("ibdiagnet").unwrap();
        assert!(ib.read_in(&["fabric_health.rhai"]));
        assert!(!ib.read_in(&["five_step_acceptance.rhai", "my.rhai"]));
        assert_eq!(ib.scripts(), ["fabric_health.rhai"]);
        let odd = find("odd_min_peers").unwrap();
        assert!(odd.read_in(&[]) && odd.scripts().is_empty());
        assert!(find("nodes").unwrap().read_in(&["my.rhai"]));
    }
}
