//! What every script function returns, declared once: the fields of each kind of result (read
//! from the Rust types themselves), which fields hold results in turn, and each function's
//! options. The runtime (typed results: an unknown field is an error, see `record.rs`),
//! `fabcheck check` (field and option-key typos) and `fabcheck doc` all read this table.

use super::assertions::METRIC_OPTS;
use super::registry::{PAIR_OPTS, TEST_OPTS};
use super::{cluster, nodes, pair, tools};
use crate::parse;
use crate::primitives::{
    counter_growth as pgrowth, health as phealth, infiniband as pib, nccl as pnccl,
    net_state as pnet, pair as ppair, ping as pping, ping_all as pping_all, profile as pprofile,
    ssh_hop, tools as ptools, version_drift as pdrift,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::OnceLock;

/// The fields of one kind of result, as scripts see it.
pub struct Shape {
    /// What the result is called in messages (`ethtool result`).
    pub name: &'static str,
    /// Every field, sorted. A field that is absent or null reads `()`.
    pub fields: Vec<String>,
    /// Fields that hold results themselves: one (`out_of_place`) or an array (`rows`).
    pub nested: Vec<(&'static str, Nest)>,
}

#[derive(Clone, Copy)]
pub enum Nest {
    One(&'static Shape),
    Many(&'static Shape),
}

impl Shape {
    pub fn has(&self, field: &str) -> bool {
        self.fields.iter().any(|f| f == field)
    }

    /// The result held by `field`, if it holds one (or an array of them).
    pub fn nested(&self, field: &str) -> Option<Nest> {
        self.nested
            .iter()
            .find(|(k, _)| *k == field)
            .map(|(_, n)| *n)
    }
}

/// What a function gives back.
#[derive(Clone, Copy)]
pub enum Returns {
    One(&'static Shape),
    /// An array of results (`n.addresses()`).
    List(&'static Shape),
    /// A map node name -> result (`run_all`).
    ByNode(&'static Shape),
    /// A plain value, described.
    Plain(&'static str),
}

/// One script function: how it is called, its options and what it returns.
pub struct Decl {
    /// As documented: `n.ethtool(iface)`.
    pub call: &'static str,
    /// The names it is registered under (`ib_write_bw`, `ib_read_bw`, ...; `parse::ethtool`).
    pub names: &'static [&'static str],
    /// Called as a method (`n.ethtool(...)`).
    pub method: bool,
    pub opts: &'static [&'static str],
    pub returns: Returns,
    /// What it does, for `fabcheck doc` (options and returned fields are listed from `opts` and
    /// `returns`: the text does not repeat them).
    pub doc: &'static str,
}

impl Decl {
    fn doc(self, doc: &'static str) -> Decl {
        Decl { doc, ..self }
    }
}

/// Every key of `T`'s serialised default value.
fn serialised_keys<T: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => vec![],
    }
}

/// The field names a `Deserialize` struct declares, including those left out when serialised
/// (`skip_serializing_if`): read from what it asks a deserializer for.
pub fn struct_fields<T: DeserializeOwned>() -> Vec<String> {
    use serde::de::{Error, Visitor};
    struct Names<'a>(&'a mut Vec<String>);
    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend(fields.iter().map(|f| f.to_string()));
            Err(Error::custom("names only"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut out = Vec::new();
    let _ = T::deserialize(Names(&mut out));
    out
}

struct Builder(Shape);

/// The shape of Rust type `T` (a primitive's own result type).
fn of<T: Serialize + Default>(name: &'static str) -> Builder {
    Builder(Shape {
        name,
        fields: serialised_keys::<T>(),
        nested: vec![],
    })
}

/// The shape of a parser's type: every declared field, serialised or not.
fn parsed<T: Serialize + Default + DeserializeOwned>(name: &'static str) -> Builder {
    of::<T>(name).with(struct_fields::<T>())
}

impl Builder {
    fn with<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Builder {
        self.0.fields.extend(fields.into_iter().map(Into::into));
        self
    }
    /// A `#[serde(flatten)]`ed shape: its fields and nested results are this one's too.
    fn flat(mut self, inner: &'static Shape) -> Builder {
        self = self.with(inner.fields.iter().cloned());
        self.0.nested.extend(inner.nested.iter().copied());
        self
    }
    fn one(mut self, field: &'static str, s: &'static Shape) -> Builder {
        self.0.nested.push((field, Nest::One(s)));
        self
    }
    fn many(mut self, field: &'static str, s: &'static Shape) -> Builder {
        self.0.nested.push((field, Nest::Many(s)));
        self
    }
    fn done(mut self) -> &'static Shape {
        self.0.fields.sort();
        self.0.fields.dedup();
        Box::leak(Box::new(self.0))
    }
}

fn run_shape() -> &'static Shape {
    Builder(Shape {
        name: "n.run result",
        fields: vec![],
        nested: vec![],
    })
    .with(["stdout", "stderr", "exit_code", "duration_ms"])
    .done()
}

/// The declarations of every function returning a result, and every option list.
pub fn decls() -> &'static [Decl] {
    static DECLS: OnceLock<Vec<Decl>> = OnceLock::new();
    DECLS.get_or_init(build)
}

fn build() -> Vec<Decl> {
    let s = shapes();
    let mut out = node_decls(&s);
    out.extend(other_decls(&s));
    out.extend(parse_decls(&s));
    out.extend(plain_decls());
    out
}

/// The shapes functions return (the nested ones inside them).
struct Shapes {
    run: &'static Shape,
    ethtool: &'static Shape,
    driver: &'static Shape,
    stats: &'static Shape,
    eee: &'static Shape,
    bond: &'static Shape,
    iface: &'static Shape,
    mapping: &'static Shape,
    neigh: &'static Shape,
    route: &'static Shape,
    net_state: &'static Shape,
    net_diff: &'static Shape,
    link: &'static Shape,
    ofed: &'static Shape,
    ping: &'static Shape,
    ping_r: &'static Shape,
    ping_a: &'static Shape,
    file: &'static Shape,
    perftest: &'static Shape,
    perf_r: &'static Shape,
    port: &'static Shape,
    iperf3: &'static Shape,
    nccl: &'static Shape,
    nccl_r: &'static Shape,
    hop: &'static Shape,
    ibdev: &'static Shape,
    counters: &'static Shape,
    growth: &'static Shape,
    drift: &'static Shape,
    rdma_stat: &'static Shape,
    gid: &'static Shape,
    pci: &'static Shape,
    fec: &'static Shape,
    qos: &'static Shape,
    module: &'static Shape,
    ibstat: &'static Shape,
    ibstatus: &'static Shape,
    perfquery: &'static Shape,
    iblink: &'static Shape,
    ibdiagnet: &'static Shape,
    topo: &'static Shape,
    ib_port: &'static Shape,
    ib_check: &'static Shape,
    profile: &'static Shape,
    expect: &'static Shape,
}

fn shapes() -> Shapes {
    use parse::*;
    let slave = parsed::<bonding::Slave>("bond slave").done();
    let addr = parsed::<ip_addr::Address>("address").done();
    let ping = parsed::<ping::Ping>("ping result").done();
    let prow = parsed::<perftest::Row>("perftest row").done();
    let perftest = parsed::<perftest::Perftest>("perftest result")
        .many("rows", prow)
        .done();
    let perf_r = of::<ppair::PerftestResult>("ib_write_bw result")
        .flat(perftest)
        .one("server", perftest)
        .done();
    let rail = of::<ppair::Rail>("rail").one("result", perf_r).done();
    let half = parsed::<nccl::Measurement>("nccl measurement").done();
    let nrow = parsed::<nccl::Row>("nccl row")
        .one("out_of_place", half)
        .one("in_place", half);
    let ndev = parsed::<nccl::Device>("nccl device").done();
    let nccl = parsed::<nccl::Nccl>("nccl result")
        .many("devices", ndev)
        .many("rows", nrow.done());
    let nccl = nccl.done();
    let ibport = parsed::<ibv_devinfo::Port>("ibv_devinfo port").done();
    Shapes {
        profile: parsed::<crate::run::profile::Detected>("profile result").done(),
        expect: of::<pprofile::Expected>("expect result").done(),
        run: run_shape(),
        ethtool: parsed::<ethtool::Ethtool>("ethtool result").done(),
        driver: parsed::<ethtool_driver::EthtoolDriver>("ethtool -i result").done(),
        // `counters` is a map whose keys are the driver's counter names: not a declared shape.
        stats: parsed::<ethtool_stats::EthtoolStats>("ethtool -S result").done(),
        eee: parsed::<eee::Eee>("EEE result").done(),
        bond: parsed::<bonding::Bonding>("bond result")
            .many("slaves", slave)
            .done(),
        iface: parsed::<ip_addr::Interface>("ip addr interface")
            .many("addresses", addr)
            .done(),
        mapping: parsed::<ibdev2netdev::Mapping>("ibdev2netdev entry").done(),
        neigh: parsed::<ip_neigh::Neighbour>("ip neigh entry").done(),
        route: parsed::<ip_route::Route>("ip route entry").done(),
        net_state: parsed::<pnet::NetState>("net_state result")
            .many(
                "interfaces",
                parsed::<pnet::IfState>("net_state interface").done(),
            )
            .done(),
        net_diff: parsed::<pnet::NetDiff>("net_state_diff result").done(),
        link: parsed::<rdma_link::Link>("rdma link entry").done(),
        ofed: parsed::<ofed_info::OfedInfo>("ofed_info result").done(),
        ping,
        ping_r: of::<pping::PingResult>("ping result")
            .flat(ping)
            .with(["stderr"])
            .done(),
        ping_a: of::<pping_all::AddressPing>("ping_all result")
            .flat(ping)
            .with(["stderr", "iface"])
            .done(),
        file: of::<ptools::FileInfo>("file_info result").done(),
        perftest,
        perf_r,
        port: of::<ppair::PortResult>("ib_write_bw_port result")
            .many("rails", rail)
            .done(),
        iperf3: parsed::<iperf3::Iperf3>("iperf3 result").done(),
        nccl,
        nccl_r: of::<pnccl::NcclResult>("all_reduce_perf result")
            .flat(nccl)
            .done(),
        hop: of::<ssh_hop::SshHop>("ssh_hop result").done(),
        ibdev: parsed::<ibv_devinfo::Device>("ibv_devinfo device")
            .many("ports", ibport)
            .done(),
        // `counters` / `table` are maps keyed by counter / item names: not declared shapes.
        counters: parsed::<phealth::CounterSnapshot>("health_counters result")
            .many(
                "ports",
                parsed::<phealth::PortCounters>("port counters").done(),
            )
            .done(),
        growth: parsed::<pgrowth::CounterGrowth>("counter_growth result")
            .many("deltas", parsed::<pgrowth::Delta>("counter delta").done())
            .done(),
        drift: parsed::<pdrift::Drift>("version_drift result").done(),
        // `counters` / `optional_counters` are maps keyed by the kernel's counter names.
        rdma_stat: parsed::<rdma_statistic::PortCounters>("rdma statistic port").done(),
        gid: parsed::<show_gids::Gid>("show_gids entry").done(),
        pci: parsed::<lspci::PciDevice>("lspci device").done(),
        // `statistics` / `per_lane` are maps keyed by ethtool's statistic names.
        fec: parsed::<show_fec::ShowFec>("ethtool --show-fec result").done(),
        // `dscp2prio` is a map keyed by DSCP value.
        module: parsed::<ethtool_module::Module>("ethtool -m result")
            .many(
                "lanes",
                parsed::<ethtool_module::Lane>("ethtool -m lane").done(),
            )
            .one(
                "thresholds",
                parsed::<ethtool_module::Thresholds>("ethtool -m thresholds").done(),
            )
            .done(),
        qos: parsed::<mlnx_qos::MlnxQos>("mlnx_qos result")
            .many(
                "tcs",
                parsed::<mlnx_qos::TrafficClass>("mlnx_qos traffic class").done(),
            )
            .done(),
        ibstat: parsed::<ibstat::Ibstat>("ibstat result")
            .many(
                "cas",
                parsed::<ibstat::Ca>("ibstat CA")
                    .many("ports", parsed::<ibstat::Port>("ibstat port").done())
                    .done(),
            )
            .done(),
        ibstatus: parsed::<ibstatus::Port>("ibstatus port").done(),
        ib_port: parsed::<pib::IbPort>("ib port").done(),
        ib_check: parsed::<pib::PortCheck>("ib port check").done(),
        // `counters` is a map keyed by perfquery's counter names.
        perfquery: parsed::<perfquery::Perfquery>("perfquery result")
            .many(
                "ports",
                parsed::<perfquery::PortCounters>("perfquery port").done(),
            )
            .done(),
        iblink: parsed::<iblinkinfo::Link>("iblinkinfo link").done(),
        ibdiagnet: parsed::<ibdiagnet::Ibdiagnet>("ibdiagnet summary")
            .many(
                "stages",
                parsed::<ibdiagnet::Stage>("ibdiagnet stage").done(),
            )
            .done(),
        // `links` are maps keyed by matrix column (`GPU1`, `NIC0`).
        topo: parsed::<nvidia_smi_topo::Topo>("nvidia-smi topo result")
            .many("gpus", parsed::<nvidia_smi_topo::Gpu>("topo GPU").done())
            .many("nics", parsed::<nvidia_smi_topo::Nic>("topo NIC").done())
            .done(),
    }
}

fn method(call: &'static str, name: &'static [&'static str], returns: Returns) -> Decl {
    Decl {
        call,
        names: name,
        method: true,
        opts: &[],
        returns,
        doc: "",
    }
}

fn function(
    call: &'static str,
    names: &'static [&'static str],
    opts: &'static [&'static str],
    returns: Returns,
) -> Decl {
    Decl {
        call,
        names,
        method: false,
        opts,
        returns,
        doc: "",
    }
}

/// Node methods (and `run_all`).
fn node_decls(s: &Shapes) -> Vec<Decl> {
    use Returns::{ByNode, List, One, Plain};
    let with_opts = |d: Decl, opts| Decl { opts, ..d };
    vec![
        with_opts(
            method("n.run(cmd, opts)", &["run"], One(s.run))
            .doc("run a command; a non-zero exit is data (`exit_code`), not a failure"),
            nodes::RUN_OPTS,
        ),
        with_opts(
            method("n.sh(cmd, opts)", &["sh"], Plain("stdout as a string"))
            .doc("run a command and return its stdout; a non-zero exit fails the test (127, command not found: an error)"),
            nodes::RUN_OPTS,
        ),
        function(
            "run_all(nodes, cmd, opts)",
            &["run_all"],
            nodes::RUN_OPTS,
            ByNode(s.run),
        )
            .doc("n.run on every node concurrently: a map node name -> run result"),
        method("n.ethtool(iface)", &["ethtool"], One(s.ethtool))
            .doc("parsed `ethtool IFACE`"),
        method(
            "n.ethtool_driver(iface)",
            &["ethtool_driver"],
            One(s.driver),
        )
            .doc("parsed `ethtool -i IFACE`"),
        method("n.ethtool_stats(iface)", &["ethtool_stats"], One(s.stats))
            .doc("parsed `ethtool -S IFACE`"),
        method("n.eee(iface)", &["eee"], One(s.eee))
            .doc("parsed `ethtool --show-eee IFACE` (unsupported: supported/enabled/active false)"),
        method("n.bond(name)", &["bond"], One(s.bond))
            .doc("parsed /proc/net/bonding/NAME"),
        method("n.addresses()", &["addresses"], List(s.iface))
            .doc("parsed `ip -j addr`"),
        method("n.neighbour(ip, iface)", &["neighbour"], List(s.neigh))
            .doc("the node's neighbour entry for an address on an interface (`ip -j neigh show ADDR dev IFACE`): `lladdr` is the MAC it answered from (absent while unresolved); an empty list when there is none (an address behind a router: the neighbour is the gateway)"),
        method("n.ibdev2netdev()", &["ibdev2netdev"], List(s.mapping))
            .doc("parsed `ibdev2netdev`"),
        method("n.rdma_links()", &["rdma_links"], List(s.link))
            .doc("parsed `rdma link`"),
        method("n.ofed_version()", &["ofed_version"], One(s.ofed))
            .doc("parsed `ofed_info -s`"),
        method("n.mgmt_address()", &["mgmt_address"], Plain("an address"))
            .doc("the address fabcheck's SSH connection really reached (server side of $SSH_CONNECTION), else the inventory host"),
        with_opts(
            method("n.ping(ip, opts)", &["ping"], One(s.ping_r))
            .doc("ping an address from the node; loss is data (`loss_pct`), not a failure"),
            tools::PING_OPTS,
        ),
        with_opts(
            method("n.ping_all(targets, opts)", &["ping_all"], List(s.ping_a))
            .doc("ping several addresses from the node at once, in one remote command (targets: addresses, or #{ ip, iface, size } to give one its own source interface or size): a ping result per target, in order, with its `ip` and `iface`; loss is data, as with n.ping"),
            tools::PING_OPTS,
        ),
        method("n.file_info(path)", &["file_info"], One(s.file))
            .doc("sha256, owner, group, mode and size of a file (sudo -n when needed)"),
        method("n.read_text(path)", &["read_text"], Plain("the file's text"))
            .doc("a text file's content (`cat -- PATH`): a read-only lookup that a dry run asks too; an unreadable file is an error naming it"),
        method(
            "n.which(program, dirs)",
            &["which"],
            Plain("path as a string; \"\" when not found"),
        )
            .doc("its path on the node (PATH with /usr/sbin and /sbin, else the first of dirs; `~/` is home), \"\" when nowhere; a read-only lookup that a dry run asks too"),
        method("n.needs(programs)", &["needs"], Plain("nothing"))
            .doc("declares the programs a check runs on the node, for --dry-run's preflight (which looks for them even where the listing stops before their commands); nothing outside a dry run"),
        method("n.ibv_devinfo()", &["ibv_devinfo"], List(s.ibdev))
            .doc("`ibv_devinfo` parsed: every RDMA device and port (state, active_mtu, max_mtu, link layer, firmware)"),
        method("n.gids(device)", &["gids"], List(s.gid))
            .doc("`show_gids DEVICE` parsed: every GID with index, RoCE version (v1/v2), IPv4 and netdev"),
        method("n.pcie(iface)", &["pcie"], One(s.pci))
            .doc("the PCIe link of the interface's NIC function (`ethtool -i` bus address, then `lspci -vv -s BDF`): LnkCap and LnkSta speed and width"),
        method("n.optics(iface)", &["optics"], One(s.module))
            .doc("`ethtool -m IFACE` parsed: module identity, temperature, per-lane TX/RX power and the module's own warning/alarm thresholds"),
        method("n.fec(iface)", &["fec"], One(s.fec))
            .doc("`ethtool -I --show-fec IFACE` parsed: configured and active FEC encoding, corrected and uncorrectable blocks where the driver counts them"),
        method("n.package_version(name)", &["package_version"], Plain("the version as a string, () when not installed"))
            .doc("the installed version of a Debian package (`dpkg-query -W -f='${Version}' NAME`), () when it is not installed"),
        method("n.qos(iface)", &["qos"], One(s.qos))
            .doc("`mlnx_qos -i IFACE` parsed (trust, PFC priorities, traffic classes) and the RoCE ECN enables from sysfs"),
        method("n.profile()", &["profile"], One(s.profile))
            .doc("the node's platform profile (`dgx-spark`, `dgx-h100-class`, else `generic` with known: false), detected once per run from the DMI product name, the GPU names (nvidia-smi) and the RDMA adapters' PCIe paths (sysfs), and the reason; every report shows it (docs/profiles.md)"),
        method("n.expect(key, hardware)", &["expect"], One(s.expect))
            .doc("what a check should expect for `key` on the node (`gdr`, `pcie_width`, `pcie_gts`, `rails_per_port`, `shared_limit_gbps`, ...) and where it came from: `--set KEY`, else the inventory's node var, else the platform profile, else `hardware` (the value the check read; () when not given); `n.expect(key)` without it. Every report lists the expectations taken"),
        method("n.link_layer()", &["link_layer"], One(s.expect))
            .doc("the node's fabric, `infiniband` or `ethernet` (key, value, from): `--set link_layer`, else the inventory's node var `link_layer` (an override), else read from sysfs `/sys/class/infiniband/DEV/ports/N/link_layer` of the inventory's rdma_devices (every device when none is listed; an IB port makes the node IB, its Ethernet adapters left to RoCE), else `ethernet`"),
        method("n.ib_ports()", &["ib_ports"], List(s.ib_port))
            .doc("every HCA port of the node from `ibstat`, flat: device, port, state, phys_state, rate (Gb/s), base_lid, sm_lid, link_layer, ca_type, fw_ver"),
        method("n.ib_port_check(rate)", &["ib_port_check"], List(s.ib_check))
            .doc("the InfiniBand port check of every HCA port (`ibstat`): State Active, Physical state LinkUp, rate at least `rate` Gb/s (() or omitted: not judged), a LID and a subnet manager (SM LID not 0); ports whose link layer is not InfiniBand get infiniband: false and no problem (RoCE checks apply)"),
        method("n.ib_counters()", &["ib_counters"], One(s.counters))
            .doc("a health_counters snapshot of the node's InfiniBand ports (`perfquery -x -C DEV -P PORT`): error counters must not grow, PortXmitWait recorded; compare two with counter_growth"),
        method("n.gpu_topology()", &["gpu_topology"], One(s.topo))
            .doc("`nvidia-smi topo -m` parsed: the matrix, and per GPU its nearest NIC relation and the NICs at it (by device name from the NIC legend)"),
        method("n.net_state()", &["net_state"], One(s.net_state))
            .doc("a snapshot of the node's running network: each interface's operstate, MTU and addresses (`ip -j addr`) and the stable routes of the main table (`ip -j route`, `ip -j -6 route`; RA-learned, redirect and expiring routes counted in churn_routes, not listed); compare two with net_state_diff"),
        method("n.health_counters()", &["health_counters"], One(s.counters))
            .doc("a snapshot of the node's error counters: mlx5 physical-layer counters (`ethtool -S`) of every fabric interface and the RDMA hw_counters (`rdma statistic show`) of every RDMA device"),
    ]
}

/// Functions: pair and cluster primitives, metric and the test registrations.
fn other_decls(s: &Shapes) -> Vec<Decl> {
    use Returns::{One, Plain};
    let perf: &[&str] = &["ib_write_bw", "ib_read_bw", "ib_send_bw"];
    let port: &[&str] = &["ib_write_bw_port", "ib_read_bw_port", "ib_send_bw_port"];
    let nothing = Plain("nothing");
    vec![
        function("ib_write_bw(server, client, opts)", perf, pair::PERFTEST_OPTS, One(s.perf_r))
            .doc("server started, readiness awaited, client run against the server's fabric address, both sides parsed, server always stopped"),
        function("ib_write_lat(server, client, opts)", &["ib_write_lat", "ib_send_lat"], pair::PERFTEST_OPTS, One(s.perf_r))
            .doc("latency between two HCAs (ib_write_lat / ib_send_lat, same options as ib_write_bw): t_typical_usec, t_p99_usec, t_max_usec of the largest size; server always stopped"),
        function("latency_outliers(rows, factor)", &["latency_outliers"], &[], Plain("array of messages"))
            .doc("rows #{ pair, usec }: each pair above factor (default 2) x the median of all pairs and at least 1 usec above it, named with its latency and the median; fewer than three pairs: none"),
        function("ib_write_bw_port(server, client, opts)", port, pair::PORT_OPTS, One(s.port))
            .doc("all logical rails of one physical port at once, summed"),
        function("iperf3(server, client, opts)", &["iperf3"], pair::IPERF3_OPTS, One(s.iperf3))
            .doc("iperf3 server started on `server`, `iperf3 -J` run on `client` against its fabric address, parsed; the server always stopped"),
        function("all_reduce_perf(nodes, opts)", &["all_reduce_perf"], cluster::NCCL_OPTS, One(s.nccl_r))
            .doc("nccl-tests all_reduce_perf across the nodes, launched from the first (mpirun, srun or local), parsed, the transport NCCL chose included"),
        function("nccl_test(name, nodes, opts)", &["nccl_test"], cluster::NCCL_OPTS, One(s.nccl_r))
            .doc("any nccl-tests binary by name (`all_gather_perf`, ...), as all_reduce_perf"),
        function("ssh_hop(from, to, opts)", &["ssh_hop"], cluster::HOP_OPTS, One(s.hop))
            .doc("passwordless SSH from one node to an address (BatchMode): who and where it reached, or why not"),
        function("net_state_diff(before, after)", &["net_state_diff"], &[], One(s.net_diff))
            .doc("what changed between two n.net_state() snapshots of a node: `changes` (an interface gone, an address lost or appeared, a link state or MTU changed, a route gone, appeared or changed: dst, type, gateway, device, protocol, metric), each naming the node and the interface or route; `notes` (new interfaces, not compared)"),
        function("counter_growth(before, after, opts)", &["counter_growth"], super::health::GROWTH_OPTS, One(s.growth))
            .doc("compare two health_counters snapshots: an error counter that grew fails (node, port, counter, delta), corrected FEC bits only above max_pre_fec_ber, congestion counters recorded"),
        function("version_drift(rows, fail_items)", &["version_drift"], &[], One(s.drift))
            .doc("one table of versions across nodes: items in fail_items that differ fail, others warn; names the majority value and each odd node"),
        function("counter_class(name)", &["counter_class"], &[], Plain("\"must not grow\", \"pre-FEC bit error rate\", \"host error (warns)\", \"must not grow on the lossless priority\", \"information\" or \"ignored\""))
            .doc("how the one counter policy (mlx5 counters.rst types, src/primitives/counter_policy.rs) judges an ethtool -S / hw_counters name between two reads"),
        function("majority(values)", &["majority"], &[], Plain("the value more than half have, else ()"))
            .doc("the value that more than half of the values have, else ()"),
        function("metric(name, value, unit, opts)", &["metric"], METRIC_OPTS, nothing)
            .doc("record a number for reports and --baseline; past its `threshold` it fails the test"),
        function("localise_rings(nodes, rounds)", &["localise_rings"], &[], Plain("array of [a, b] node names"))
            .doc("the pairs of `rounds` shifted rings over the nodes (each node with the one 1, 2, ... places after it; each pair once): one ring covers every node twice in N tests"),
        function("localise_infer(nodes, trials, confirm)", &["localise_infer"], &[], Plain("#{ retests, good, suspects, nodes, exclude, links, flaky, unresolved, evidence, tests }"))
            .doc("what pair results `[#{ a, b, ok, note }]` prove: nodes that failed against `confirm` nodes proven good (`exclude`: their node set), links that failed twice between good nodes, flaky pairs, and the `retests` still needed (empty: done); see docs/scripts.md, localise"),
        function("subject(opts)", &["subject"], super::diagnosis::SUBJECT_OPTS, nothing)
            .doc("name the part the running test found wrong, for the run's diagnosis: kind (link_down, link_slow, unreachable, bandwidth, latency, rx_errors, flapping, pcie_downtrained, config, other), node (required), port, netdev, rail, peer, cable (an ethtool_module result: vendor, PN, SN); docs/diagnosis.md"),
        function("subject_if(cond, opts)", &["subject_if"], super::diagnosis::SUBJECT_OPTS, nothing)
            .doc("subject(opts) when cond is true (the options are checked either way)"),
        function("test(name, opts, f)", &["test"], TEST_OPTS, nothing)
            .doc("register a test: test(name, f) or test(name, opts, f)"),
        function("test_each(nodes, name, opts, f)", &["test_each"], TEST_OPTS, nothing)
            .doc("one testcase `name [node]` per node, run concurrently: test_each(nodes, name, |n| ...) or with opts before the closure"),
        function("test_pairs(nodes, name, opts, f)", &["test_pairs"], &PAIR_AND_TEST_OPTS, nothing)
            .doc("one testcase `name [a -> b]` per pair of nodes (pattern mesh, ring or bisection, or the given pairs), both directions unless both_directions: false (given pairs: as given), run in rounds (each node in at most one pair per round), or with rounds: false all at once, at most per_node (8) pairs per node as first and as second (pings, ssh hops: checks that do not conflict); a node listed twice counts once; fewer than two nodes is one error testcase. test_pairs(nodes, name, |a, b| ...) or with opts before the closure, as test and test_each (opts after the closure still works, with a deprecation warning)"),
    ]
}

/// Functions that take no options and return no result: assertions, outcomes, the run's
/// settings, node selection, strings.
fn plain_decls() -> Vec<Decl> {
    use Returns::Plain;
    let nothing = Plain("nothing");
    let f = |call, names, returns, doc| function(call, names, &[], returns).doc(doc);
    vec![
        f("assert(cond, msg)", &["assert"], nothing, "fail unless the condition holds"),
        f("assert_eq(actual, expected, msg)", &["assert_eq"], nothing, "fail unless actual == expected (numbers compare by value)"),
        f("assert_ge(actual, min, msg)", &["assert_ge"], nothing, "fail unless actual >= min; a null actual is an error"),
        f("assert_le(actual, max, msg)", &["assert_le"], nothing, "fail unless actual <= max; a null actual is an error"),
        f("assert_within(actual, reference, tolerance_pct, msg)", &["assert_within"], nothing, "fail unless actual is within tolerance_pct % of reference"),
        f("fail(msg)", &["fail"], nothing, "fail the test with a message"),
        f("skip(reason)", &["skip"], nothing, "skip the test with a reason"),
        f("error(msg)", &["error"], nothing, "end the test as an error (the check could not be made)"),
        f("warn(msg)", &["warn"], nothing, "record a warning (does not fail)"),
        f("param(key, default)", &["param"], Plain("the value"), "a --set value: param(key) (missing: the test is skipped) or param(key, default)"),
        f("log(line)", &["log"], nothing, "add a line to the test's output"),
        f("note(line)", &["note"], nothing, "a line the engineer must see: on the console under the test's result, and in the reports"),
        f("trim(s)", &["trim"], Plain("the string"), "trim a string in place and return it"),
        f("trimmed(s)", &["trimmed"], Plain("a string"), "a trimmed copy of a string"),
        f("shell_quote(s)", &["shell_quote"], Plain("a string"), "a string as one word of a POSIX shell or fish command line: unchanged when safe, else single-quoted"),
        f("nodes(selection)", &["nodes"], Plain("an array of nodes"), "nodes of the inventory (as -w selected), or of a node set / @group"),
        f("inventory_nodes()", &["inventory_nodes"], Plain("an array of nodes"), "every node of the inventory, whatever -w selected: the ground truth of checks that judge against the whole cluster"),
        f("node(name)", &["node"], Plain("a node"), "one node by name"),
        f("allow_changes()", &["allow_changes"], Plain("bool"), "true when --allow-changes was given"),
        f("simulated()", &["simulated"], Plain("bool"), "true when the inventory is a simulated cluster"),
        f("nccl_ib_hca(value)", &["nccl_ib_hca"], Plain("#{ raw, exclude, exact, entries: [#{ hca, port }] }"), "NCCL_IB_HCA read as NCCL reads it (`^` exclude list, `=` exact names else prefixes, comma-separated `dev[:port]`)"),
        f("nccl_ib_hca_uses(value, device, port)", &["nccl_ib_hca_uses"], Plain("#{ used, why }"), "does NCCL use that RDMA device port under this NCCL_IB_HCA, and why"),
        f("nccl_recipe_env(text)", &["nccl_recipe_env"], Plain("[#{ name, value, line }]"), "the NCCL_* settings a recipe's text gives NCCL (`export VAR=value` and `VAR=value` lines, launcher flags `-x`/`-e`, YAML/JSON mappings; quotes as the shell reads them; the last setting of a variable wins, with its line)"),
        f("nccl_socket_ifname_uses(value, ifname)", &["nccl_socket_ifname_uses"], Plain("#{ used, why }"), "does NCCL pick that interface under this NCCL_SOCKET_IFNAME (`^` exclude list, `=` exact names else prefixes), and why"),
    ]
}

/// `parse::KIND(text)`, one per parser of `parse::KINDS`.
fn parse_decls(s: &Shapes) -> Vec<Decl> {
    use Returns::{List, One};
    let leak = |t: String| -> &'static str { Box::leak(t.into_boxed_str()) };
    parse::KINDS
        .iter()
        .map(|(_, fname, _)| {
            let returns = match *fname {
                "ethtool" => One(s.ethtool),
                "ethtool_driver" => One(s.driver),
                "ethtool_stats" => One(s.stats),
                "eee" => One(s.eee),
                "bonding" => One(s.bond),
                "perftest" => One(s.perftest),
                "nccl" => One(s.nccl),
                "iperf3" => One(s.iperf3),
                "ip_addr" => List(s.iface),
                "ip_neigh" => List(s.neigh),
                "ip_route" => List(s.route),
                "ibdev2netdev" => List(s.mapping),
                "rdma_link" => List(s.link),
                "ofed_info" => One(s.ofed),
                "ping" => One(s.ping),
                "ibv_devinfo" => List(s.ibdev),
                "rdma_statistic" => List(s.rdma_stat),
                "show_gids" => List(s.gid),
                "lspci" => List(s.pci),
                "show_fec" => One(s.fec),
                "mlnx_qos" => One(s.qos),
                "ethtool_module" => One(s.module),
                "ibstat" => One(s.ibstat),
                "ibstatus" => List(s.ibstatus),
                "perfquery" => One(s.perfquery),
                "iblinkinfo" => List(s.iblink),
                "ibdiagnet" => One(s.ibdiagnet),
                "nvidia_smi_topo" => One(s.topo),
                other => panic!("parse::{other} has no result declaration"),
            };
            let names: &'static [&'static str] =
                Box::leak(vec![leak(format!("parse::{fname}"))].into_boxed_slice());
            function(leak(format!("parse::{fname}(text)")), names, &[], returns)
                .doc("the parser of `fabcheck parse`")
        })
        .collect()
}

/// `test_pairs` options: the test options and the pattern options.
const PAIR_AND_TEST_OPTS: [&str; TEST_OPTS.len() + PAIR_OPTS.len()] = {
    let mut out = [""; TEST_OPTS.len() + PAIR_OPTS.len()];
    let mut i = 0;
    while i < TEST_OPTS.len() {
        out[i] = TEST_OPTS[i];
        i += 1;
    }
    while i < out.len() {
        out[i] = PAIR_OPTS[i - TEST_OPTS.len()];
        i += 1;
    }
    out
};

/// The declaration of a function by the name it is called with (`ethtool`, `parse::nccl`).
pub fn decl(name: &str) -> Option<&'static Decl> {
    decls().iter().find(|d| d.names.contains(&name))
}

/// What function `name` returns; a function registered without a declaration is a bug.
pub fn returns(name: &str) -> Returns {
    match decl(name) {
        Some(d) => d.returns,
        None => panic!("no result declaration for `{name}` in engine/bindings/results.rs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field a result really has is declared, recursively (a field the Rust type gains
    /// and the declaration lacks would be refused at run time).
    fn all_declared(v: &serde_json::Value, s: &Shape, at: &str) {
        let serde_json::Value::Object(m) = v else {
            return;
        };
        for (k, x) in m {
            assert!(s.has(k), "{at}: `{k}` is not declared in {}", s.name);
            match (s.nested(k), x) {
                (Some(Nest::One(n)), x) => all_declared(x, n, &format!("{at}.{k}")),
                (Some(Nest::Many(n)), serde_json::Value::Array(a)) => {
                    for x in a {
                        all_declared(x, n, &format!("{at}.{k}[]"));
                    }
                }
                _ => {}
            }
        }
    }

    fn shape_of(name: &str) -> &'static Shape {
        match returns(name) {
            Returns::One(s) | Returns::List(s) | Returns::ByNode(s) => s,
            Returns::Plain(_) => panic!("{name} returns no result"),
        }
    }

    #[test]
    fn skipped_fields_are_declared_too() {
        // Left out of JSON when empty, still fields: reading them must give (), not an error.
        assert!(struct_fields::<parse::nccl::Nccl>().contains(&"cpu_time".to_string()));
        let nccl = shape_of("all_reduce_perf");
        assert!(nccl.has("cpu_time") && nccl.has("launcher") && nccl.has("rows"));
        let Some(Nest::Many(row)) = nccl.nested("rows") else {
            panic!("rows are nccl rows")
        };
        assert!(row.has("timestamp") && row.has("type") && !row.has("r#type"));
        assert!(shape_of("ping").has("stderr") && !shape_of("parse::ping").has("stderr"));
        assert!(shape_of("ethtool").has("speed_mbps") && !shape_of("ethtool").has("speed_mpbs"));
    }

    #[test]
    fn real_results_have_only_declared_fields() {
        let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut checked = 0;
        for (kind, fname, _) in parse::KINDS {
            let dir = match *kind {
                "ethtool" | "ethtool-driver" | "ethtool-stats" | "eee" | "show-fec" => "ethtool",
                "bonding" => "bonding",
                "perftest" => "perftest",
                "nccl" => "nccl-tests",
                "iperf3" => "iperf3",
                "ip-addr" | "ip-route" => "iproute2",
                "lspci" => "lspci",
                "mlnx-qos" => "mlnx_qos",
                "ethtool-module" => "ethtool-m",
                "perfquery" | "iblinkinfo" | "ibdiagnet" => "ibdiags",
                "nvidia-smi-topo" => "nvidia-smi",
                _ => "rdma",
            };
            for f in std::fs::read_dir(fx.join(dir))
                .into_iter()
                .flatten()
                .flatten()
            {
                let text = std::fs::read_to_string(f.path()).unwrap_or_default();
                let Ok(v) = parse::parse(kind, &text) else {
                    continue;
                };
                let s = shape_of(&format!("parse::{fname}"));
                match &v {
                    serde_json::Value::Array(a) => a.iter().for_each(|x| all_declared(x, s, kind)),
                    v => all_declared(v, s, kind),
                }
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} fixtures parsed");
    }

    #[test]
    fn primitive_results_have_only_declared_fields() {
        let ping = pping::PingResult {
            stderr: Some("ping: sendmsg: Message too long".into()),
            ..Default::default()
        };
        all_declared(
            &serde_json::to_value(ping).unwrap(),
            shape_of("ping"),
            "ping",
        );
        let rail = ppair::Rail {
            result: ppair::PerftestResult {
                server: Some(Default::default()),
                ..Default::default()
            },
            ..Default::default()
        };
        let port = ppair::PortResult {
            rails: vec![rail],
            ..Default::default()
        };
        let v = serde_json::to_value(port).unwrap();
        all_declared(&v, shape_of("ib_write_bw_port"), "port");
        let v = serde_json::to_value(pnccl::NcclResult::default()).unwrap();
        all_declared(&v, shape_of("nccl_test"), "nccl");
        let v = serde_json::to_value(ssh_hop::SshHop::default()).unwrap();
        all_declared(&v, shape_of("ssh_hop"), "hop");
        let v = serde_json::to_value(ptools::FileInfo::default()).unwrap();
        all_declared(&v, shape_of("file_info"), "file_info");
    }

    #[test]
    fn every_parser_and_option_list_is_declared() {
        for (_, fname, _) in parse::KINDS {
            assert!(decl(&format!("parse::{fname}")).is_some(), "parse::{fname}");
        }
        for name in ["ib_read_bw", "ib_send_bw_port", "test_each", "metric"] {
            assert!(!decl(name).expect(name).opts.is_empty(), "{name}");
        }
        assert!(decl("test_pairs").unwrap().opts.contains(&"pattern"));
    }
}
