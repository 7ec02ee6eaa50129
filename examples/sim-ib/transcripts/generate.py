# Generates the transcripts of the SIMULATED InfiniBand cluster (examples/sim-ib): four DGX
# H100-class nodes, eight ConnectX-7 NDR HCAs each (one rail per GPU), a subnet manager. Run from
# examples/sim-ib/:   python3 transcripts/generate.py
# Every answer is SYNTHESISED in the format of a real capture in tests/fixtures (named at each
# function); SOURCES.md says which. The fault scenarios are written at the end.
import json, os, shutil, sys
sys.path.insert(0, "../sim/transcripts")
from formats import lat_scaled  # the Spark simulation's latency scaling, one source
from formats import ping_text, ping_all_cmd, ping_all_out, sysfs_command, gpu_command, ip_route_json
from formats import lspci_text, aer_cmd_of, aer_text_of  # the AER statistics' answers

# FCSIM_NODES=8 FCSIM_OUT=transcripts-rack8 writes the 8-node rack (examples/sim-ib/rack8.toml):
# the same answers for eight nodes, and only the `rack-` scenarios.
N = int(os.environ.get("FCSIM_NODES", "4"))
OUT = os.environ.get("FCSIM_OUT", "transcripts")
NODES = [f"h100-{k:02d}" for k in range(1, N + 1)]
# The HCA names of the real 8x H100 ibv_devinfo capture
# (tests/fixtures/rdma/ibv_devinfo-8xcx7-ndr-ib-dell-psid-noncontiguous-names.txt).
HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]

# The IPoIB netdev of each HCA and the PCI bus it sits on, from the public DGX H100/H200 User
# Guide's network port table (ibp24s0 = mlx5_0 ... ibp220s0 = mlx5_11, GPU i on rail i).
IPOIB = ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"]
# The GPUs' PCI functions (synthesised: one per PCIe switch, next to its rail's HCA)
GPU_BDF = ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0", "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
MGMT = "enp170s0f1np1"
# IPoIB in datagram mode on an IB MTU of 4096: netdev MTU 4092 (4096 minus the 4-byte IPoIB header)
IPOIB_MTU = 4092

def q(s):
    return json.dumps(s)

def fabric_ip(node, i):
    """One IPv4 subnet per rail (rail i: 192.168.(10+i).0/24), the node's number as host part."""
    return f"192.168.{10 + i}.{NODES.index(node) + 1}"

def guid(node, i):
    k = NODES.index(node)
    return f"a088:c203:00{k:02x}:{i:02x}{0xb8 + i:02x}"

def ipoib_hw(node, i):
    """An IPoIB link-layer address: 4 bytes of flags and QP number, then the port GID
    (fe80::/64 prefix and the port GUID), as `ip addr` prints link/infiniband."""
    g = guid(node, i).replace(":", "")
    gid = "fe80000000000000" + g
    return ":".join(["00", "00", "10", f"{0x87 + i:02x}"] + [gid[j:j + 2] for j in range(0, 32, 2)])

def ip_addr_doc(node, mtu=IPOIB_MTU, down=()):
    """`ip -j addr` in the format of the real captures in tests/fixtures/lab (key order of
    iproute2 6.1): lo, the management NIC with the inventory host, eight IPoIB netdevs
    (link_type infiniband, 20-byte address, the IPoIB broadcast address), one /24 per rail."""
    k = NODES.index(node)
    doc = [{"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "qdisc": "noqueue",
            "operstate": "UNKNOWN", "group": "default", "txqlen": 1000, "link_type": "loopback",
            "address": "00:00:00:00:00:00", "broadcast": "00:00:00:00:00:00",
            "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host", "label": "lo",
                           "valid_life_time": 4294967295, "preferred_life_time": 4294967295}]},
           {"ifindex": 2, "ifname": MGMT, "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
            "qdisc": "mq", "operstate": "UP", "group": "default", "txqlen": 1000, "link_type": "ether",
            "address": f"b8:3f:d2:4e:1{k}:21", "broadcast": "ff:ff:ff:ff:ff:ff",
            "addr_info": [{"family": "inet", "local": HOSTS[node], "prefixlen": 24, "broadcast": "10.1.0.255",
                           "scope": "global", "dynamic": True, "noprefixroute": True, "label": MGMT,
                           "valid_life_time": 85913, "preferred_life_time": 85913}]}]
    for i, nd in enumerate(IPOIB):
        up = nd not in down
        doc.append({"ifindex": 3 + i, "ifname": nd,
                    "flags": ["BROADCAST", "MULTICAST", "UP"] + (["LOWER_UP"] if up else []), "mtu": mtu,
                    "qdisc": "mq", "operstate": "UP" if up else "DOWN", "group": "default", "txqlen": 256,
                    "link_type": "infiniband", "address": ipoib_hw(node, i),
                    "broadcast": "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff",
                    "addr_info": [{"family": "inet", "local": fabric_ip(node, i), "prefixlen": 24,
                                   "broadcast": f"192.168.{10 + i}.255", "scope": "global", "label": nd,
                                   "valid_life_time": 4294967295, "preferred_life_time": 4294967295}]})
    return doc

def sysfs_ib(node, dmi="DGXH100", gpus=GPU_BDF):
    """fabcheck discover's sysfs listing (format: src/parse/sysfs_net.rs) of a DGX H100-class node:
    the management NIC, eight IPoIB netdevs on their HCAs' PCI functions (mlx5_core, carrier 1,
    speed 400000), eight HCAs with link layer InfiniBand, the DMI product name, eight GPUs."""
    out = ["net lo pci= driver= kind= master= carrier=1 speed= port_name=",
           f"net {MGMT} pci=0000:aa:00.1 driver=mlx5_core kind= master= carrier=1 speed=1000 port_name=p1"]
    for i, nd in enumerate(IPOIB):
        bus = int(nd[3:-2])
        out.append(f"net {nd} pci=0000:{bus:02x}:00.0 driver=mlx5_core kind= master= carrier=1 speed=400000 port_name=")
    for i, ca in enumerate(HCAS):
        bus = int(IPOIB[i][3:-2])
        g = guid(node, i)
        out.append(f"rdma {ca} pci=0000:{bus:02x}:00.0 sys_image_guid={g} node_guid={g} netdevs={IPOIB[i]}, link_layer=InfiniBand,")
    out += [f"dmi product_name={dmi}"] + [f"gpu {g}" for g in gpus] + [""]
    return "\n".join(out)

def ipoib_answers(out, node):
    """What the five-step's steps 1 and 2 send over IPoIB: pings (one, and all of a peer's rails at
    once with n.ping_all), don't-fragment pings of the IPoIB MTU, neighbour entries, SSH hops to
    every fabric address and the peers' management address, the node's own addresses, routes,
    host name (synthesised in the formats of the Spark simulation's answers, real formats)."""
    me = ip_addr_doc(node)
    cmd(out, "ip -j addr", json.dumps(me, separators=(",", ":")) + "\n", ms=12,
        note="ip -j addr: the management NIC and eight IPoIB netdevs (format of the real lab captures)")
    cmd(out, "ip -j route", ip_route_json(me, "10.1.0.254"), ms=4)
    cmd(out, "ip -j -6 route", "[]\n", ms=4)
    cmd(out, "hostname", f"{node}\n", ms=3)
    cmd(out, sysfs_command(), sysfs_ib(node), ms=30,
        note="the sysfs listing (platform detection, discover): SYNTHESISED DGX H100 values; the DMI product name DGXH100 is assumed")
    cmd(out, gpu_command(), "NVIDIA H100 80GB HBM3\n" * 8, ms=40,
        note="nvidia-smi --query-gpu=name: the H100 SXM's name as nvidia-smi prints it")
    size = IPOIB_MTU - 28
    for peer in NODES:
        if peer == node:
            continue
        pm = {a["local"]: i["address"] for i in ip_addr_doc(peer) for a in i["addr_info"]}
        ips = [fabric_ip(peer, i) for i in range(len(IPOIB))]
        for cnt in [5, 3, 2]:
            pings = [f"ping -n -c {cnt} -W 2 -I {IPOIB[i]} {ip}" for i, ip in enumerate(ips)]
            cmd(out, ping_all_cmd(pings), ping_all_out([(0, ping_text(ip, cnt, 56), "") for ip in ips]), ms=1000 * cnt)
        mtu = [f"ping -n -c 3 -W 2 -M do -I {IPOIB[i]} -s {size} {ip}" for i, ip in enumerate(ips)]
        cmd(out, ping_all_cmd(mtu), ping_all_out([(0, ping_text(ip, 3, size), "") for ip in ips]), ms=2000,
            note=f"IPoIB MTU {IPOIB_MTU} end to end: {size}-byte don't-fragment pings on every rail")
        for cnt in [5, 3, 2]:
            pings = [f"ping -n -c {cnt} -W 2 -I {IPOIB[i]} {ip}" for i, ip in enumerate(ips)]
            parts = [(0, ping_text(ip, cnt, 56), "") for ip in ips] + [(0, ping_text(ip, 3, size), "") for ip in ips]
            cmd(out, ping_all_cmd(pings + mtu), ping_all_out(parts), ms=max(1000 * cnt, 2000),
                note="five-step step 1: the pings and the jumbo don't-fragment pings (both above) in one command")
        for i, ip in enumerate(ips):
            cmd(out, f"ip -j neigh show {ip} dev {IPOIB[i]}",
                json.dumps([{"dst": ip, "lladdr": pm[ip], "state": ["REACHABLE"]}], separators=(",", ":")) + "\n", ms=4)
        for ip in ips + [HOSTS[peer]]:
            cmd(out, f"ssh -o BatchMode=yes -o ConnectTimeout=10 -o NumberOfPasswordPrompts=0 {ip} 'echo fabcheck-hop $(id -un) $(hostname)'",
                f"fabcheck-hop nvidia {peer}\n", ms=180)
    for i, nd in enumerate(IPOIB):
        cmd(out, f"cat /sys/class/net/{nd}/mtu", f"{IPOIB_MTU}\n", ms=3)

SWITCH_PORTS = 64  # a Quantum-2 QM9700/QM9790: 32 OSFP cages, 64 NDR ports
FIRST_UPLINK = 33  # leaf ports 1-32 face the nodes, 33-64 the spines
SPINES = 2
# The subnet manager: a UFM appliance's HCA (LID 1, outside the inventory) is master, a second
# one (LID 2) standby
SM_GUID, SM_STANDBY = "0xb8cef60300aa0001", "0xb8cef60300aa0002"
def sminfo(lid=1, g=SM_GUID, prio=15, state=3, name="SMINFO_MASTER", act=1804467):
    """sminfo in the format of the real captures tests/fixtures/ibdiags/sminfo-*.txt (the GUID
    printed as sminfo's PRIx64 does: no leading zeros)."""
    return f"sminfo: sm lid {lid} sm guid {hex(int(g, 16))}, activity count {act} priority {prio} state {state} {name}\n"
PLAN = "/etc/fabcheck/cabling-plan.txt"  # where the simulated site keeps its cabling plan

def leaf_guid(leaf):
    return f"0xfc6a1c0300e4{leaf:02x}00"

def spine_guid(s):
    return f"0xfc6a1c0300e5{s:02x}00"

def uplinks(leaves, spines=SPINES, place_up=None):
    """The leaf-spine cables of a non-blocking two-tier fat tree: each leaf has as many uplinks
    as it has node-facing cables (ports 33.. in order), alternating over the spines; the spine
    port counts up per spine in leaf order. {(leaf, leaf port): (spine, spine port)};
    `place_up`: (leaf, leaf port, (spine, spine port)) -> where that cable lands instead (None:
    nowhere, the port Down at both ends)."""
    out, used = {}, [0] * spines
    if spines == 0:
        return out
    for leaf, down in sorted(leaves.items()):
        for j in range(len(down)):
            s = j % spines
            used[s] += 1
            lp = FIRST_UPLINK + j
            to = (s, used[s])
            out[(leaf, lp)] = place_up(leaf, lp, to) if place_up else to
    return {k: v for k, v in out.items() if v is not None}

def iblinkinfo(over=None, place=None, spines=SPINES, up_over=None, place_up=None, extra_up=None):
    """`iblinkinfo` of the fabric in the format of the real capture
    tests/fixtures/ibdiags/iblinkinfo-hdr-quantum-21ca-sharp-aggregation-node-down-polling.txt:
    a CA section per HCA (node description "NODE HCA", rdma-ndd's default "%h %d"), its port
    GUID, LID and port to its rail's leaf switch (rail-optimised: rail i on leaf i, node k on
    port k+1), then each leaf's switch section and each spine's, every one of the 64 ports
    listed (an unused one `Down/ Polling`, as in the capture); NDR lanes print 106.25 Gbps.
    Leaves (LID 200+i) reach `spines` spine switches (LID 300+s) by as many uplinks as they
    have node cables (uplinks()). `over`: {(node, hca): (width, lane, state, phys)} for a
    cable that trained otherwise; `place`: (node index, rail index) -> (leaf index, port) where
    the cable lands (default (i, k+1)); `up_over`: {(leaf, leaf port): (width, lane, state,
    phys)} for an uplink that trained otherwise; `place_up`: see uplinks(); `extra_up`:
    {(leaf, leaf port): (spine, spine port)} cables beyond the tree's."""
    over = over or {}
    up_over = up_over or {}
    place = place or (lambda k, i: (i, k + 1))
    def cell(width, lane, state, phys):
        return f"==( {width:>2s} {lane:>13s} Gbps {state}/  {phys})==>"
    down = '==(                Down/ Polling)==>             [  ] "" ( )'
    sw = '"MQM9790 Mellanox Technologies" ( )'
    out = []
    ports = {}
    for k, node in enumerate(NODES):
        for i, ca in enumerate(HCAS):
            g = "0x" + guid(node, i).replace(":", "")
            w = over.get((node, ca), ("4X", "106.25", "Active", "LinkUp"))
            leaf, port = place(k, i)
            ports.setdefault(leaf, []).append((port, k, i))
            out += [f"CA: {node} {ca}:",
                    f"      {g}     {10 + 8 * k + i:2d}    1[  ] {cell(*w)}     {200 + leaf:3d}   {port:2d}[  ] {sw}"]
    ups = {**uplinks(ports, spines, place_up), **(extra_up or {})}
    ok = ("4X", "106.25", "Active", "LinkUp")
    for leaf in sorted(ports):
        out.append(f"Switch: {leaf_guid(leaf)} MQM9790 Mellanox Technologies:")
        lines = {}
        for port, k, i in ports[leaf]:
            node = NODES[k]
            w = over.get((node, HCAS[i]), ok)
            lines[port] = f"{cell(*w)}      {10 + 8 * k + i:2d}    1[  ] \"{node} {HCAS[i]}\" ( )"
        for (lf, lp), (s, sp) in ups.items():
            if lf == leaf:
                lines[lp] = f"{cell(*up_over.get((lf, lp), ok))}     {300 + s:3d}   {sp:2d}[  ] {sw}"
        for p in range(1, SWITCH_PORTS + 1):
            out.append(f"         {200 + leaf:3d}   {p:2d}[  ] {lines.get(p, down)}")
    for s in range(spines):
        out.append(f"Switch: {spine_guid(s)} MQM9790 Mellanox Technologies:")
        lines = {sp: f"{cell(*up_over.get((lf, lp), ok))}     {200 + lf:3d}   {lp:2d}[  ] {sw}"
                 for (lf, lp), (t, sp) in ups.items() if t == s}
        for p in range(1, SWITCH_PORTS + 1):
            out.append(f"         {300 + s:3d}   {p:2d}[  ] {lines.get(p, down)}")
    return "\n".join(out) + "\n"

def cabling_plan(spines=SPINES):
    """The site's cabling plan of this fabric (docs/infiniband.md, "The cabling plan"): one
    `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA` line per cable, switches by GUID (their node
    descriptions are all the factory default here), as a site would write it from its design."""
    out = [f"# Cabling plan of the SIMULATED IB fabric ({len(NODES)} nodes, {len(HCAS)} rail leaves, {spines} spines; examples/sim-ib)",
           "# Written by examples/sim-ib/transcripts/generate.py. Leaf i (LID 200+i) carries rail i+1;",
           "# spine s is LID 300+s. Node-facing cables first, then the leaf-spine cables."]
    ports = {}
    for k, node in enumerate(NODES):
        out.append(f"# {node}")
        for i, ca in enumerate(HCAS):
            ports.setdefault(i, []).append(k)
            out.append(f"{leaf_guid(i)}:{k + 1} <-> {node}:{ca}")
    out.append("# uplinks")
    for (lf, lp), (s, sp) in uplinks(ports, spines).items():
        out.append(f"{leaf_guid(lf)}:{lp} <-> {spine_guid(s)}:{sp}")
    return "\n".join(out) + "\n"

TOPO = "/etc/fabcheck/fabric.topo"  # where the simulated site keeps its saved ibnetdiscover
def ibnetdiscover_text(place=None, spines=SPINES, place_up=None):
    """`ibnetdiscover` of the fabric iblinkinfo() describes (same `place`, `spines`,
    `place_up`), SYNTHESISED in the format of the real capture
    tests/fixtures/ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt and
    infiniband-diags' ibnetdiscover.c (switch sections, then CA sections: a CA's port line
    names its own port GUID and LID first): what a site saves on the day the fabric is accepted
    (`ibnetdiscover > fabric.topo`) and gives as its cabling plan."""
    place = place or (lambda k, i: (i, k + 1))
    sw = "MQM9790 Mellanox Technologies"
    ports, cas = {}, []
    for k, node in enumerate(NODES):
        for i, ca in enumerate(HCAS):
            leaf, port = place(k, i)
            ports.setdefault(leaf, []).append((port, k, i))
            cas.append((node, ca, guid(node, i).replace(":", ""), 10 + 8 * k + i, leaf, port))
    ups = uplinks(ports, spines, place_up)
    out = ["#", "# Topology file: SYNTHESISED by examples/sim-ib/transcripts/generate.py (the healthy simulated fabric;",
           "# not a capture: the format of tests/fixtures/ibdiags/ibnetdiscover-edr-switchib-*.txt)", "#",
           f"# Initiated from node {cas[0][2]} port {cas[0][2]}", ""]
    def switch_head(g, lid):
        h = g[2:]
        return ["vendid=0x2c9", "devid=0xd2f2", f"sysimgguid={g}", f"switchguid={g}({h})",
                f'Switch\t{SWITCH_PORTS} "S-{h}"\t\t# "{sw}" enhanced port 0 lid {lid} lmc 0']
    for leaf in sorted(ports):
        out += switch_head(leaf_guid(leaf), 200 + leaf)
        lines = {}
        for node, ca, g, lid, lf, port in cas:
            if lf == leaf:
                lines[port] = f'[{port}]\t"H-{g}"[1]({g.lstrip("0")}) \t\t# "{node} {ca}" lid {lid} 4xNDR'
        for (lf, lp), (s, sp) in ups.items():
            if lf == leaf:
                lines[lp] = f'[{lp}]\t"S-{spine_guid(s)[2:]}"[{sp}]\t\t# "{sw}" lid {300 + s} 4xNDR'
        out += [lines[p] for p in sorted(lines)] + [""]
    for s in range(spines):
        out += switch_head(spine_guid(s), 300 + s)
        lines = {sp: f'[{sp}]\t"S-{leaf_guid(lf)[2:]}"[{lp}]\t\t# "{sw}" lid {200 + lf} 4xNDR'
                 for (lf, lp), (t, sp) in ups.items() if t == s}
        out += [lines[p] for p in sorted(lines)] + [""]
    for node, ca, g, lid, leaf, port in cas:
        out += ["vendid=0x2c9", "devid=0x1021", f"sysimgguid=0x{g}", f"caguid=0x{g}",
                f'Ca\t1 "H-{g}"\t\t# "{node} {ca}"',
                f'[1]({g.lstrip("0")}) \t"S-{leaf_guid(leaf)[2:]}"[{port}]\t\t# lid {lid} lmc 0 "{sw}" lid {200 + leaf} 4xNDR', ""]
    return "\n".join(out)

def ibdiagnet_text(stages=(("Discovery", 0, 0), ("Virtualization", 0, 0), ("Routing", 0, 0)), ar=None, ans=0):
    """ibdiagnet's closing summary in the format of the real capture
    tests/fixtures/ibdiags/ibdiagnet-routing-ar-dump-fabric-summary-15-nodes-stage-table-discovery-3-warnings.txt
    (its stages, its "Adaptive Routing is enabled on N switches" line), for this fabric: N x 8
    HCAs, 8 leaf switches and the spines, adaptive routing on `ar` switches (default every one;
    0: the line left out), `ans` SHARP aggregation nodes."""
    sw = len(HCAS) + SPINES
    ar = sw if ar is None else ar
    rows = "".join(f"-I- {n:<25s} {w:<10d} {e}\n" for n, w, e in stages)
    return ("---------------------------------------------\nFabric Summary\n\n"
            f"Total Nodes             : {len(NODES) * len(HCAS) + sw + ans}\nIB Switches             : {sw}\n"
            f"IB Channel Adapters     : {len(NODES) * len(HCAS)}\nIB Aggregation Nodes    : {ans}\nIB Routers              : 0\n\n"
            + (f"Adaptive Routing is enabled on {ar} switches\n\n" if ar else "")
            + "---------------------------------------------\nSummary\n-I- Stage                     Warnings   Errors     Comment\n" + rows)

def ibqueryerrors_text(errors=()):
    """`ibqueryerrors` of this fabric in the format of the real captures
    tests/fixtures/ibdiags/ibqueryerrors-*.txt: a section per switch with counters beyond
    threshold (`errors`: (leaf or spine LID, port, {counter: value})), then the summary
    (every CA port and switch port checked; synthesised)."""
    out, bad = [], 0
    for lid, port, counters in errors:
        g = leaf_guid(lid - 200) if lid < 300 else spine_guid(lid - 300)
        cs = " ".join(f"[{k} == {v}]" for k, v in counters.items())
        out += [f'Errors for {g} "MQM9790 Mellanox Technologies"', f"   GUID {g} port ALL: {cs}", f"   GUID {g} port {port}: {cs}"]
        bad += 1
    sw = len(HCAS) + SPINES
    out += ["", f"## Summary: {len(NODES) * len(HCAS) + sw} nodes checked, {bad} bad nodes found",
            f"##          {len(NODES) * len(HCAS) + sw * (SWITCH_PORTS + 1)} ports checked, {bad} ports have errors beyond threshold",
            "## Thresholds: ", "## Suppressed:"]
    return "\n".join(out) + "\n"

KERNEL = "5.15.0-1063-nvidia"
def ethtool_i_ipoib(i):
    """`ethtool -i` of an IPoIB netdev, in the format of the Spark simulation's ethtool -i answer
    (itself the format of a real capture), with what the kernel's ipoib_get_drvinfo() reports
    (drivers/infiniband/ulp/ipoib/ipoib_ethtool.c): driver ib_ipoib, the HCA's firmware, the
    HCA's PCI function as bus-info; version: the kernel release (ethtool's default for a driver
    that sets none). Synthesised."""
    bus = int(IPOIB[i][3:-2])
    return (f"driver: ib_ipoib\nversion: {KERNEL}\nfirmware-version: 28.39.1002\nexpansion-rom-version: \n"
            f"bus-info: 0000:{bus:02x}:00.0\nsupports-statistics: yes\nsupports-test: no\n"
            "supports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: no\n")

ACS_OFF = "SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-"
ACS_ON = "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"  # the real capture's line
def pcie_paths():
    """The sysfs device paths (readlink -f) of the eight GPUs and eight HCAs: rail i's GPU and
    HCA below one PCIe switch (synthesised numbering: root port R:01.0, switch upstream port
    R+1:00.0, downstream ports R+2:00.0 to the HCA at bus R+3 and R+2:01.0 to the GPU at R+6)."""
    gpu, hca, bridges = [], [], []
    for i, nd in enumerate(IPOIB):
        h = int(nd[3:-2])
        r = h - 3
        up, dn_h, dn_g = f"0000:{r + 1:02x}:00.0", f"0000:{r + 2:02x}:00.0", f"0000:{r + 2:02x}:01.0"
        base = f"/sys/devices/pci0000:{r:02x}/0000:{r:02x}:01.0/{up}"
        hca.append(f"{base}/{dn_h}/0000:{h:02x}:00.0")
        gpu.append(f"{base}/{dn_g}/{GPU_BDF[i]}")
        bridges += [up, dn_h, dn_g]
    return gpu, hca, sorted(bridges)
def bridge_text(bdf, acs):
    """`lspci -vvv -s BDF` of a PCIe switch port in the format of the real capture
    tests/fixtures/lspci/lspci-vvv-s-amd-matisse-gpp-bridge-acsctl-reqredir-cmpltredir-on.txt,
    its address, name and link (Gen5 x16) replaced and ACSCtl `acs` (synthesised)."""
    t = open(FX + "lspci/lspci-vvv-s-amd-matisse-gpp-bridge-acsctl-reqredir-cmpltredir-on.txt").read().replace("03:02.0 PCI bridge: Advanced Micro Devices, Inc. [AMD] Matisse PCIe GPP Bridge", f"{bdf[5:]} PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)")
    t = t.replace("Speed 16GT/s, Width x4, ASPM L1", "Speed 32GT/s, Width x16, ASPM L1").replace("Speed 8GT/s (downgraded), Width x4 (ok)", "Speed 32GT/s, Width x16")
    return t.replace(f"ACSCtl:\t{ACS_ON}", f"ACSCtl:\t{acs}")
def acs_answers(out, on=()):
    """The ACS check's answers: the device paths, then lspci -vvv of every switch port (ACS off,
    as on a bare-metal DGX; `on`: bridges with ACS redirecting peer-to-peer)."""
    gpu, hca, bridges = pcie_paths()
    paths = " ".join([f"/sys/bus/pci/devices/{g}" for g in GPU_BDF] + [f"/sys/class/infiniband/{ca}/device" for ca in HCAS])
    cmd(out, f'for p in  {paths}; do readlink -f "$p"; done', "".join(p + "\n" for p in gpu + hca), ms=5,
        note="the GPUs' and HCAs' sysfs device paths (synthesised PCIe numbering, one switch per rail)")
    cmd(out, "; ".join(f"lspci -vvv -s {b}" for b in bridges), "\n".join(bridge_text(b, ACS_ON if b in on else ACS_OFF) for b in bridges), ms=200,
        note="lspci -vvv of the switch ports above the GPUs and HCAs: ACS off (synthesised in the format of a real capture)")

# The kernel command line of a DGX OS node (synthesised in the format of the real capture
# tests/fixtures/iommu/proc-cmdline-fdio-csit-denverton-intel_iommu-on-iommu-pt.txt; DGX OS
# boots with the IOMMU in passthrough)
CMDLINE = f"BOOT_IMAGE=/boot/vmlinuz-{KERNEL} root=UUID=5b8a3d0e-4c1f-4a57-9d62-0c7e1f2a9b44 ro iommu=pt quiet splash vt.handoff=7"
def iommu_answers(out, cmdline=CMDLINE, group="identity"):
    """The IOMMU check's answer: the command line, then each GPU's and HCA's iommu_group type
    (format of tests/fixtures/iommu/*; `group`: the type of every device, "none": no IOMMU)."""
    paths = [f"/sys/bus/pci/devices/{g}" for g in GPU_BDF] + [f"/sys/class/infiniband/{ca}/device" for ca in HCAS]
    c = "cat /proc/cmdline; for p in " + " ".join(paths) + """; do printf '%s ' "$p"; cat "$p/iommu_group/type" 2>/dev/null || echo none; done"""
    cmd(out, c, cmdline + "\n" + "".join(f"{p} {group}\n" for p in paths), ms=5,
        note=f"the IOMMU mode: the kernel command line, every GPU's and HCA's iommu_group type ({group}; synthesised)")

def gpu_lspci_answers(out, sta=None):
    """`lspci -vv -s BDF` of the eight GPUs in one command (the GPU link check): the real
    ConnectX-7 capture's layout (lspci_text) renamed to the H100 SXM's 3D controller, LnkCap Gen5
    x16 and LnkSta at the idle speed, 2.5GT/s (downgraded), x16 (an idle NVIDIA GPU lowers its
    link speed; synthesised). `sta`: {bdf: LnkSta} replacing it."""
    texts = []
    for b in GPU_BDF:
        t = lspci_text(b, sta=(sta or {}).get(b, "Speed 2.5GT/s (downgraded), Width x16"))
        texts.append(t.replace("Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]", "3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)", 1))
    cmd(out, "; ".join(f"lspci -vv -s {b}" for b in GPU_BDF), "\n".join(texts), ms=120,
        note="lspci -vv of the GPUs: Gen5 x16 capable, idle at 2.5GT/s x16 (synthesised in the format of a real capture)")

# The kernel's AER statistics (sysfs aer_dev_*): formats.py's aer_cmd_of / aer_text_of, the
# Spark simulation's (the format of the real files tests/fixtures/aer/aer_dev_*-node-exporter-*).
def aer_dirs():
    """The device directories the GPU PCIe error check reads, in its order: each GPU and the
    port above it, then each HCA and the port above it (pcie_paths' numbering)."""
    gpu, hca, _ = pcie_paths()
    return [d for p in gpu + hca for d in (p, p.rsplit("/", 1)[0])]
def aer_text(over=None):
    """Every directory's three aer_dev_* files: every count 0 (synthesised), `over` replacing some."""
    return aer_text_of(aer_dirs(), over)
def aer_cmd():
    return aer_cmd_of(aer_dirs())
def aer_answers(out, over=None, after=None, note=None):
    cmd(out, aer_cmd(), aer_text(over), ms=20, after=after,
        note=note or "the AER statistics of every GPU, HCA and the switch port above each: all 0 (synthesised in the format of the real sysfs files)")
# nvidia-smi -q, abbreviated to what the check reads: per GPU its `GPU` line, Product Name and
# the PCI section of the real H100 capture tests/fixtures/nvidia-smi/q-1xH100-*.txt (other
# lines of each GPU's section left out; synthesised: the GPUs' addresses, replay counters)
def smi_q_text(replays=None):
    """`replays`: {GPU address: (replays, rollovers)} (else 0, 0)."""
    SMI_Q = open(FX + "nvidia-smi/q-1xH100-pcie-gen5-x16-replays-0-firecracker-580.txt").read()
    SMI_PCI = SMI_Q[SMI_Q.index("    PCI\n"):SMI_Q.index("    Fan Speed")]
    head = SMI_Q[:SMI_Q.index("Attached GPUs")] + "Attached GPUs                                          : 8\n"
    blocks = []
    for b in GPU_BDF:
        bus, dev = b[5:7].upper(), b[8:10].upper()
        r, ro = (replays or {}).get(b, (0, 0))
        t = SMI_PCI.replace("00000000:00:06.0", f"00000000:{bus}:{dev}.0")
        t = t.replace("Bus                                            : 0x00", f"Bus                                            : 0x{bus}")
        t = t.replace("Device                                         : 0x06", f"Device                                         : 0x{dev}")
        t = t.replace("Replays Since Reset                            : 0", f"Replays Since Reset                            : {r}")
        t = t.replace("Replay Number Rollovers                        : 0", f"Replay Number Rollovers                        : {ro}")
        blocks.append(f"GPU 00000000:{bus}:{dev}.0\n    Product Name                                       : NVIDIA H100 80GB HBM3\n" + t)
    return head + "".join(blocks)
def smi_q_answers(out, replays=None, after=None, note=None):
    cmd(out, "nvidia-smi -q", smi_q_text(replays), ms=400, after=after,
        note=note or "nvidia-smi -q (abbreviated: each GPU's name and PCI section, the real H100 capture's format): replay counters 0")

def health_answers(out, node):
    """fabric_health's PCIe, GPUDirect and version answers: ethtool -i per IPoIB netdev, lspci -vv
    of each HCA (the real ConnectX-7 capture at the HCA's address, an InfiniBand controller at
    Gen5 x16, its full capability), the kernel release, the GPUs, nvidia_peermem, OFED, packages."""
    for i, nd in enumerate(IPOIB):
        cmd(out, f"ethtool -i {nd}", ethtool_i_ipoib(i), ms=10)
        bdf = f"0000:{int(nd[3:-2]):02x}:00.0"
        t = lspci_text(bdf, sta="Speed 32GT/s, Width x16").replace(f"{bdf[5:]} Ethernet controller", f"{bdf[5:]} Infiniband controller", 1)
        cmd(out, f"lspci -vv -s {bdf}", t, ms=40)
    cmd(out, "uname -r", KERNEL + "\n", ms=3, note="synthesised: a DGX OS 6 kernel release")
    cmd(out, "ls /proc/driver/nvidia/gpus", "".join(g + "\n" for g in GPU_BDF), ms=3)
    cmd(out, "test -d /sys/module/nvidia_peermem", "", ms=3, note="synthesised: nvidia_peermem loaded (GPUDirect RDMA)")
    acs_answers(out)
    iommu_answers(out)
    gpu_lspci_answers(out)
    aer_answers(out)
    smi_q_answers(out)
    cmd(out, "ofed_info -s", "MLNX_OFED_LINUX-23.10-1.1.9.0:\n", ms=200)
    cmd(out, "dpkg-query -W -f='${Version}' libnccl2", "2.21.5-1+cuda12.4", ms=30)
    cmd(out, "dpkg-query -W -f='${Version}' perftest", "23.10.0-0.29.2310119", ms=30)

def ibstat(node, over=None):
    """ibstat in the format of tests/fixtures/rdma/ibstat-12ca-h100-roce-cx7-cx6dx-down-polling-disabled-tabs.txt
    (tab indentation, lexical CA order), InfiniBand NDR ports with LIDs and SM lid 1."""
    over = over or {}
    k = NODES.index(node)
    out = []
    for i, ca in sorted(enumerate(HCAS), key=lambda x: x[1]):
        guid = f"0xa088c20300{k:02x}{i:02x}{0xb8 + i:02x}"
        p = dict(state="Active", phys="LinkUp", rate="400", lid=str(10 + 8 * k + i), sm="1")
        p.update(over.get(ca, {}))
        out += [f"CA '{ca}'", "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.39.1002",
                "\tHardware version: 0", f"\tNode GUID: {guid}", f"\tSystem image GUID: {guid}", "\tPort 1:",
                f"\t\tState: {p['state']}", f"\t\tPhysical state: {p['phys']}", f"\t\tRate: {p['rate']}",
                f"\t\tBase lid: {p['lid']}", "\t\tLMC: 0", f"\t\tSM lid: {p['sm']}",
                f"\t\tCapability mask: {p.get('cap', '0xa651e848')}", f"\t\tPort GUID: {guid}", "\t\tLink layer: InfiniBand"]
    return "\n".join(out) + "\n"

def ibv_devinfo(node, mtu=4096):
    """ibv_devinfo in the format of the real 8x ConnectX-7 NDR capture
    tests/fixtures/rdma/ibv_devinfo-8xcx7-ndr-ib-dell-psid-noncontiguous-names.txt (tab layout,
    one port per HCA), with this node's GUIDs, LIDs, SM LID 1 and IB MTU `mtu` (4096: code 5)."""
    k = NODES.index(node)
    code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
    out = []
    for i, ca in enumerate(HCAS):
        g = guid(node, i)
        out += [f"hca_id:\t{ca}", "\ttransport:\t\t\tInfiniBand (0)", "\tfw_ver:\t\t\t\t28.39.1002",
                f"\tnode_guid:\t\t\t{g}", f"\tsys_image_guid:\t\t\t{g}", "\tvendor_id:\t\t\t0x02c9",
                "\tvendor_part_id:\t\t\t4129", "\thw_ver:\t\t\t\t0x0", "\tboard_id:\t\t\tMT_0000000838",
                "\tphys_port_cnt:\t\t\t1", "\t\tport:\t1", "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
                "\t\t\tmax_mtu:\t\t4096 (5)", f"\t\t\tactive_mtu:\t\t{mtu} ({code[mtu]})", "\t\t\tsm_lid:\t\t\t1",
                f"\t\t\tport_lid:\t\t{10 + 8 * k + i}", "\t\t\tport_lmc:\t\t0x00", "\t\t\tlink_layer:\t\tInfiniBand", ""]
    return "\n".join(out)

PKEYS_CMD = """for f in /sys/class/infiniband/*/ports/*/pkeys/*; do v=$(cat "$f" 2>/dev/null); [ -n "$v" ] && [ "$v" != 0x0000 ] && printf 'cat %s\\n%s\\n' "$f" "$v"; done; true"""
def pkeys(over=None):
    """The non-zero P_Keys of the node's HCA ports as the check prints them: `cat PATH` and the
    value, the format of the real Azure capture
    tests/fixtures/rdma/sysfs-pkeys-azure-hpc-tenant-0x800b-default-limited-0x7fff.txt; every
    port a full member of the default partition (0xffff at index 0). `over`: {hca: value}."""
    over = over or {}
    return "".join(f"cat /sys/class/infiniband/{ca}/ports/1/pkeys/0\n{over.get(ca, '0xffff')}\n" for ca in sorted(HCAS))

def perfquery(node, ca, symbol=0, wait=0):
    """perfquery -x -C CA -P 1 in the format of
    tests/fixtures/ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt."""
    k, i = NODES.index(node), HCAS.index(ca)
    lid = 10 + 8 * k + i
    data = 91_000_000_000 + 7919 * i + 104729 * k
    rows = [("PortSelect", "1"), ("CounterSelect", "0x0000"), ("PortXmitData", data), ("PortRcvData", data - 4099),
            ("PortXmitPkts", data // 1024), ("PortRcvPkts", data // 1024 - 3), ("PortUnicastXmitPkts", data // 1024),
            ("PortUnicastRcvPkts", data // 1024 - 3), ("PortMulticastXmitPkts", 0), ("PortMulticastRcvPkts", 0),
            ("CounterSelect2", "0x00000000"), ("SymbolErrorCounter", symbol), ("LinkErrorRecoveryCounter", 0),
            ("LinkDownedCounter", 0), ("PortRcvErrors", 0), ("PortRcvRemotePhysicalErrors", 0),
            ("PortRcvSwitchRelayErrors", 0), ("PortXmitDiscards", 0), ("PortXmitConstraintErrors", 0),
            ("PortRcvConstraintErrors", 0), ("LocalLinkIntegrityErrors", 0), ("ExcessiveBufferOverrunErrors", 0),
            ("VL15Dropped", 0), ("PortXmitWait", 1_204_117 + wait), ("QP1Dropped", 0)]
    out = [f"# Port extended counters: Lid {lid} port 1 (CapMask: 0x5300 CapMask2: 0x0000002)"]
    out += [f"{n}:{'.' * (33 - len(n) - 1)}{v}" for n, v in rows]
    return "\n".join(out) + "\n"

def perfquery_switch(lid, port, symbol=0):
    """perfquery -x LID PORT of a leaf switch port (the switch end of an HCA cable), in the
    format of the real capture tests/fixtures/ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt
    (itself a switch's ports, LID 1719): error counters 0 but SymbolErrorCounter `symbol`."""
    data = 88_000_000_000 + 7919 * port + 104729 * lid
    rows = [("PortSelect", str(port)), ("CounterSelect", "0x0000"), ("PortXmitData", data), ("PortRcvData", data - 2111),
            ("PortXmitPkts", data // 1024), ("PortRcvPkts", data // 1024 - 2), ("PortUnicastXmitPkts", data // 1024),
            ("PortUnicastRcvPkts", data // 1024 - 2), ("PortMulticastXmitPkts", 0), ("PortMulticastRcvPkts", 0),
            ("CounterSelect2", "0x00000000"), ("SymbolErrorCounter", symbol), ("LinkErrorRecoveryCounter", 0),
            ("LinkDownedCounter", 0), ("PortRcvErrors", 0), ("PortRcvRemotePhysicalErrors", 0),
            ("PortRcvSwitchRelayErrors", 0), ("PortXmitDiscards", 0), ("PortXmitConstraintErrors", 0),
            ("PortRcvConstraintErrors", 0), ("LocalLinkIntegrityErrors", 0), ("ExcessiveBufferOverrunErrors", 0),
            ("VL15Dropped", 0), ("PortXmitWait", 904_117), ("QP1Dropped", 0)]
    out = [f"# Port extended counters: Lid {lid} port {port} (CapMask: 0x5A00 CapMask2: 0x0000002)"]
    out += [f"{n}:{'.' * (33 - len(n) - 1)}{v}" for n, v in rows]
    return "\n".join(out) + "\n"

# The module each HCA's cable plugs into, as mlxlink -m prints it (MFT's `value [low..high]`
# form of the real captures ibdiags/mlxlink-show-module-cx7-ndr-osfp-passive-dac-*.txt and
# ibdiags/mlxlink-m-grep-dbm-rx-tx-power-*.txt; values and thresholds SYNTHESISED). "optical":
# an NVIDIA OSFP NDR transceiver (part number MMA4Z00-NS400), the module's alarm range for rx
# power -9.508..6.999 dBm; "dac": a passive copper OSFP with diagnostics (every reading
# `0,0,0,0 [0..0]`, as the real MFT 4.35 capture); "dac-na": one without (N/A, as the real
# BlueField-3 capture).
RX_RANGE, TX_RANGE = "[-9.508..6.999]", "[-8.508..6.999]"
def module_rows(node, ca, kind="optical", rx="1.9,2.0,1.8,2.1"):
    k, i = NODES.index(node), HCAS.index(ca)
    if kind == "dac-na":
        return [("Temperature [C]", "N/A"), ("Rx Power Current [dBm]", "N/A"), ("Tx Power Current [dBm]", "N/A"), ("Identifier", "OSFP"),
                ("Cable Technology", "Copper cable, passive, unequalized"), ("Vendor Name", "NVIDIA"), ("Vendor Part Number", "MCP4Y10-N001"),
                ("Vendor Serial Number", f"MT24{k:02d}VS{i:05d}"), ("FW Version", "N/A")]
    if kind == "dac":
        return [("Temperature [C]", "0 [0..0]"), ("Rx Power Current [dBm]", "0,0,0,0 [0..0]"), ("Tx Power Current [dBm]", "0,0,0,0 [0..0]"),
                ("Identifier", "OSFP"), ("Cable Technology", "Copper cable, passive, unequalized"), ("Vendor Name", "NVIDIA"),
                ("Vendor Part Number", "MCP4Y10-N001"), ("Vendor Serial Number", f"MT24{k:02d}VS{i:05d}"), ("FW Version", "N/A")]
    return [("Temperature [C]", "47 [-5..75]"), ("Rx Power Current [dBm]", f"{rx} {RX_RANGE}"), ("Tx Power Current [dBm]", f"1.4,1.6,1.5,1.1 {TX_RANGE}"),
            ("Identifier", "OSFP"), ("Cable Technology", "850 nm VCSEL"), ("Vendor Name", "NVIDIA"), ("Vendor Part Number", "MMA4Z00-NS400"),
            ("Vendor Serial Number", f"MT23{k:02d}FT{i:05d}"), ("Rev", "A3"), ("FW Version", "46.120")]

def mlxlink_text(node, ca, raw="15E-255", symbol=0, module=None):
    """mlxlink -d CA -m -c -e in the format of the real capture
    tests/fixtures/ibdiags/mlxlink-m-c-bluefield3-100g-dac-fs-q28-pc03-ber-15e-255.txt (the same
    sections, `Key<35>: value`), with NDR values: IB-NDR 4x, the module of `module_rows`
    (`module`: its rows, default the optical transceiver), the IB counters Symbol Errors /
    Symbol BER; raw BER `raw` (synthesised). No eye section: no real capture of ConnectX-7's
    (FOM) eye output was found, so none is synthesised."""
    sec = [("Operational Info", [("State", "Active"), ("Physical state", "LinkUp"), ("Speed", "IB-NDR"), ("Width", "4x"),
                                 ("FEC", "Standard_RS-FEC (544,514)"), ("Loopback Mode", "No Loopback"), ("Auto Negotiation", "ON")]),
           ("Troubleshooting Info", [("Status Opcode", "0"), ("Group Opcode", "N/A"), ("Recommendation", "No issue was observed")]),
           ("Tool Information", [("Firmware Version", "28.39.1002"), ("amBER Version", "3.6"), ("MFT Version", "mft 4.26.1-3")]),
           ("Module Info", module or module_rows(node, ca)),
           ("Physical Counters and BER Info", [("Time Since Last Clear [Min]", "4213.6"), ("Symbol Errors", str(symbol)), ("Symbol BER", "15E-255"),
                                               ("Effective Physical Errors", "0"), ("Effective Physical BER", "15E-255"),
                                               ("Raw Physical Errors Per Lane", "0,0,0,0" if raw == "15E-255" else "318211,301877,355120,299014"),
                                               ("Link Down Counter", "0"), ("Link Error Recovery Counter", "0"), ("Raw Physical BER", raw)])]
    out = [""]
    for h, rows in sec:
        out += [h, "-" * len(h)] + [f"{a:<35s}: {b}" for a, b in rows] + [""]
    return "\n".join(out)

def mlxlink_answers(out, node, kind=None, rx=None):
    """Every HCA's mlxlink -m -c -e: `kind` (ca -> module kind) and `rx` (ca -> rx lanes) change
    some HCAs' modules."""
    for ca in HCAS:
        m = module_rows(node, ca, (kind or {}).get(ca, "optical"), (rx or {}).get(ca, "1.9,2.0,1.8,2.1"))
        cmd(out, f"mlxlink -d {ca} -m -c -e", mlxlink_text(node, ca, module=m), ms=900)

def switch_ends(out, node, place=None, bad=None):
    """The switch end of each of `node`'s HCA cables (iblinkinfo's layout `place`, default
    rail i on leaf i port k+1), read with perfquery -x LID PORT. `bad`: (hca, symbol): that
    end's SymbolErrorCounter after the load (ib_write_bw)."""
    place = place or (lambda k, i: (i, k + 1))
    k = NODES.index(node)
    for i, ca in enumerate(HCAS):
        leaf, port = place(k, i)
        cmd(out, f"perfquery -x {200 + leaf} {port}", perfquery_switch(200 + leaf, port), ms=15)
        if bad and bad[0] == ca:
            cmd(out, f"perfquery -x {200 + leaf} {port}", perfquery_switch(200 + leaf, port, bad[1]), ms=15, after="ib_write_bw",
                note=f"after the load: the switch end of {ca}'s cable counted {bad[1]} symbol errors (the HCA end none)")

def with_ends(files, place):
    """Scenario files plus every node's switch-end answers for the iblinkinfo layout `place`."""
    out = {}
    for n in NODES:
        f = files.get(n)
        out[n] = (lambda o, n=n, f=f: (f(o) if f else None, switch_ends(o, n, place)))
    return out

def topo(far=None):
    """nvidia-smi topo -m in the format of tests/fixtures/nvidia-smi/topo-m-tabs-8gpu-12nic-single-numa-bond-nics.txt
    (TAB separated, " X " self cells, NIC legend): GPU i and NIC i on one PCIe switch (PIX), the
    other NICs of its CPU socket NODE, the other socket SYS. `far`: the GPU whose own NIC is
    in the other socket's slot (its row and column say SYS)."""
    cols = [f"GPU{i}" for i in range(8)] + [f"NIC{i}" for i in range(8)]
    def rel(a, b):
        if a == b:
            return " X "
        ga, gb = a.startswith("GPU"), b.startswith("GPU")
        if ga and gb:
            return "NV18"
        ia, ib = int(a[3:]), int(b[3:])
        if far is not None and ((a == f"GPU{far}" and b == f"NIC{far}") or (b == f"GPU{far}" and a == f"NIC{far}")):
            return "SYS"
        if ia == ib:
            return "PIX"
        return "NODE" if ia // 4 == ib // 4 else "SYS"
    out = ["\t" + "\t".join(cols + ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for r in cols:
        cells = [rel(r, c) for c in cols]
        if r.startswith("GPU"):
            numa = int(r[3:]) // 4
            cells += ["0-55,112-167" if numa == 0 else "56-111,168-223", str(numa), "", "N/A"]
        else:
            cells += ["", "", "", ""]
        out.append(r + "\t" + "\t".join(cells))
    out += ["", "Legend:", "", "  X    = Self",
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
            "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
            "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
            "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
            "  PIX  = Connection traversing at most a single PCIe bridge",
            "  NV#  = Connection traversing a bonded set of # NVLinks", "", "NIC Legend:", ""]
    out += [f"  NIC{i}: {ca}" for i, ca in enumerate(HCAS)]
    return "\n".join(out) + "\n"

def rdma_link(node):
    """`rdma link` of the node's IB ports, in the format of the real IB line
    tests/fixtures/rdma/rdma-link-ib-cx5-subnet-prefix-lid-sm_lid-no-netdev.txt (no netdev), with
    the LIDs of ibstat() and SM lid 1."""
    k = NODES.index(node)
    return "".join(f"link {ca}/1 subnet_prefix fe80:0000:0000:0000 lid {10 + 8 * k + i} sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP\n"
                   for i, ca in enumerate(HCAS))

FX = "../../tests/fixtures/"
SPARK = "../sim/transcripts/synth/"
def ib_write_bw_client(node, peer, ca, gbps=392.18, peer_ca=None):
    """The Spark simulation's synthesised client answer (format of the real RoCE perftest capture)
    rewritten to InfiniBand: link type IB, LID addressing (no GID lines), the HCA's name, and
    `gbps` (assumed ~98 % of NDR's 400 Gb/s; no public measurement cited). `peer_ca`: the
    server's HCA when it is another rail's (the remote LID is its)."""
    k, j, i = NODES.index(node), NODES.index(peer), HCAS.index(ca)
    pi = HCAS.index(peer_ca or ca)
    t = open(SPARK + "ib_write_bw-client-rocep1s0f1.txt").read()
    t = (t.replace("Device         : rocep1s0f1", f"Device         : {ca}")
          .replace(" Link type       : Ethernet\n GID index       : 3\n", " Link type       : IB\n")
          .replace(" local address: LID 0000", f" local address: LID {10 + 8 * k + i:#06x}")
          .replace(" remote address: LID 0000", f" remote address: LID {10 + 8 * j + pi:#06x}"))
    t = "\n".join(l for l in t.split("\n") if not l.startswith(" GID:"))
    peak, avg = gbps * 1.0025, gbps
    mpps = gbps * 1e9 / 8 / 65536 / 1e6
    iters = int(905842 * gbps / 94.97)
    return t.replace(" 65536      905842             95.21              94.97              0.181141",
                     f" 65536      {iters}             {peak:.2f}              {avg:.2f}              {mpps:.6f}")

def ib_write_lat_text(ca, typical=None):
    """The REAL DGX Spark ib_write_lat capture (its link type forced to IB: its header is the IB
    form) on HCA `ca`; `typical` scales every latency column (None: the capture's 1.47 us)."""
    t = open(FX + "perftest/ib_write_lat-client-rdma_cm-force-link-IB-dgx-spark.txt").read()
    t = t.replace("Device         : rocep1s0f1", f"Device         : {ca}")
    return t if typical is None else lat_scaled(t, typical)

HOSTS = {n: f"10.1.0.{k + 1}" for k, n in enumerate(NODES)}
def rdma_answers(out, node):
    """What the baseline's and five-step's RDMA tests send on an IB node: `rdma link`, and per HCA
    the ib_write_bw / ib_write_lat server (on TCP port 18515; an inventory without ports makes
    each HCA its own port), its readiness probe and cleanup, and the client against every peer's
    IPoIB address of the same rail (perftest's out-of-band exchange goes there)."""
    cmd(out, "rdma link", rdma_link(node), ms=8, note="rdma link: 8 IB ports ACTIVE / LINK_UP (format of the real IB line)")
    server = open(FX + "perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt").read()
    cmd(out, "ss -Hltn 'sport = :18515'", "LISTEN 0      5            0.0.0.0:18515      0.0.0.0:*          \n", ms=6)
    for tool in ["ib_write_bw", "ib_write_lat"]:
        cmd(out, f"pkill -TERM -f -- 'fcsrv-{tool}-1851[5]'; true", "", ms=6)
    for ca in HCAS:
        cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits ; : fcsrv-ib_write_bw-18515", server, ms=6100,
            note="server: the REAL RoCE ib_write_bw server capture, as in the Spark simulation (only the client side is judged)")
        cmd(out, f"ib_write_lat -d {ca} -p 18515 ; : fcsrv-ib_write_lat-18515", ib_write_lat_text(ca), ms=1100)
        for peer in NODES:
            if peer == node:
                continue
            # the peer's IPoIB address of the rail; without IPoIB in the inventory (no-ipoib.toml)
            # perftest's out-of-band exchange goes to the peer's management address
            for ip in [fabric_ip(peer, HCAS.index(ca)), HOSTS[peer]]:
                cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits {ip}", ib_write_bw_client(node, peer, ca), ms=6050)
                cmd(out, f"ib_write_lat -d {ca} -p 18515 {ip}", ib_write_lat_text(ca), ms=1050)
        # fabcheck health's epilog: loopback on the HCA (server and client on the same device, the
        # exchange over 127.0.0.1). SYNTHESISED: no real loopback capture; both LIDs the HCA's own,
        # the figure assumed at the same ~98 % of NDR as the client answers above
        cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 2 --report_gbits ; : fcsrv-ib_write_bw-18515", server, ms=2600,
            note="server: the REAL RoCE ib_write_bw server capture, as above (only the client side is judged)")
        cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 2 --report_gbits 127.0.0.1", ib_write_bw_client(node, node, ca), ms=2550,
            note="SYNTHESISED loopback client (health --context epilog): no real capture of a loopback run")
    spine_answers(out, node)
    gdr_answers(out, node)

SHIFT = 1  # the baseline's cross-spine test: rail k of the client to rail k+1 of the server
def spine_answers(out, node, slow=None):
    """The baseline's traffic across the spine (rdma: across the spine): every HCA at once, on
    TCP ports 18515.., the client's rail k writing to the server's rail k+1 (its address on that
    rail, or the management address without IPoIB); `node` answers as server (the rails' servers,
    readiness probes, cleanup; port 18515's are rdma_answers') and as client against every peer.
    `slow`: {(peer, client HCA): Gbit/s} for flows that reach less (synthesised, as
    ib_write_bw_client)."""
    server = open(FX + "perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt").read()
    for k in range(1, len(HCAS)):
        port, sdev = 18515 + k, HCAS[(k + SHIFT) % len(HCAS)]
        cmd(out, f"ss -Hltn 'sport = :{port}'", f"LISTEN 0      5            0.0.0.0:{port}      0.0.0.0:*          \n", ms=6)
        cmd(out, f"pkill -TERM -f -- 'fcsrv-ib_write_bw-{str(port)[:-1]}[{str(port)[-1]}]'; true", "", ms=6)
        cmd(out, f"ib_write_bw -d {sdev} -p {port} -D 5 --report_gbits ; : fcsrv-ib_write_bw-{port}", server, ms=6100)
    for peer in NODES:
        if peer == node:
            continue
        for k, ca in enumerate(HCAS):
            r = (k + SHIFT) % len(HCAS)
            gbps = (slow or {}).get((peer, ca), 392.18)
            for ip in [fabric_ip(peer, r), HOSTS[peer]]:
                cmd(out, f"ib_write_bw -d {ca} -p {18515 + k} -D 5 --report_gbits {ip}", ib_write_bw_client(node, peer, ca, gbps, HCAS[r]), ms=6050)

def gdr_answers(out, node, slow=None, cuda=True):
    """The baseline's GPU-memory test (rdma: gpu memory per rail): whether perftest knows
    --use_cuda, and per HCA k the server and the client against every peer with
    --use_cuda=k (GPU k on HCA k's PCIe switch, topo()); the host-memory runs are
    rdma_answers'. The client answer is ib_write_bw_client's with perftest's CUDA set-up lines
    before it (synthesised); `slow`: {(peer, hca): Gbit/s}; `cuda`: False answers 0 (perftest
    built without CUDA)."""
    cmd(out, "ib_write_bw --help 2>&1 | grep -c -- --use_cuda", "1\n" if cuda else "0\n", ms=20,
        note="perftest's help lists --use_cuda (built with CUDA)" if cuda else "perftest built without CUDA")
    server = open(FX + "perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt").read()
    for k, ca in enumerate(HCAS):
        cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits --use_cuda={k} ; : fcsrv-ib_write_bw-18515", server, ms=6300)
        for peer in NODES:
            if peer == node:
                continue
            pre = (f"initializing CUDA\nListing all CUDA devices in system:\nCUDA device {k}: PCIe address is {GPU_BDF[k][5:10].upper()}\n"
                   f"Picking device No. {k}\n[pid = 4242, dev = {k}] device name = [NVIDIA H100 80GB HBM3]\ncreating CUDA Ctx\nmaking it the current CUDA Ctx\n")
            t = pre + ib_write_bw_client(node, peer, ca, (slow or {}).get((peer, ca), 391.46))
            for ip in [fabric_ip(peer, k), HOSTS[peer]]:
                cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits --use_cuda={k} {ip}", t, ms=6250)

def ibtracert_text(src, sca, dst, dca, up=1):
    """`ibtracert SLID DLID` from `src`'s HCA `sca` to `dst`'s `dca` in this fabric, in the format
    of the real captures tests/fixtures/ibdiags/ibtracert-*.txt (From line with the node GUID,
    each hop `[OUT] -> TYPE port {GUID}[IN] lid A-B "DESC"`, To line): up the source rail's
    leaf by its `up`-th uplink (uplinks()), down the destination rail's leaf from the same
    spine (synthesised)."""
    k, i, j, m = NODES.index(src), HCAS.index(sca), NODES.index(dst), HCAS.index(dca)
    ups = uplinks({leaf: list(range(len(NODES))) for leaf in range(len(HCAS))})
    lp = FIRST_UPLINK + up
    s, sp = ups[(i, lp)]
    dlp, (_, dsp) = next(((p, v) for (lf, p), v in sorted(ups.items()) if lf == m and v[0] == s))
    g = lambda n, c: "0x" + guid(n, HCAS.index(c)).replace(":", "")
    sl, dl = 10 + 8 * k + i, 10 + 8 * j + m
    sw = '"MQM9790 Mellanox Technologies"'
    return (f'From ca {{{g(src, sca)}}} portnum 1 lid {sl}-{sl} "{src} {sca}"\n'
            f'[1] -> switch port {{{leaf_guid(i)}}}[{k + 1}] lid {200 + i}-{200 + i} {sw}\n'
            f'[{lp}] -> switch port {{{spine_guid(s)}}}[{sp}] lid {300 + s}-{300 + s} {sw}\n'
            f'[{dsp}] -> switch port {{{leaf_guid(m)}}}[{dlp}] lid {200 + m}-{200 + m} {sw}\n'
            f'[{j + 1}] -> ca port {{{g(dst, dca)}}}[1] lid {dl}-{dl} "{dst} {dca}"\n'
            f'To ca {{{g(dst, dca)}}} portnum 1 lid {dl}-{dl} "{dst} {dca}"\n')

NCCL_BIN = "/home/nvidia/nccl-tests/build/all_reduce_perf"
GPUS = 8
# Healthy busbw of a full-node all_reduce (one rank per GPU, eight 400G rails per node): public
# measurements say 330 GB/s on 2 nodes and 320 on 4 nodes of 8x H100 with 8x400G
# (NVIDIA/nccl#1221, NVLS off) and about 350 on 248 x 8 H200 (NVIDIA/nccl-tests#283); the
# simulation's answers peak at these (synthesised values).
BUSBW = {2: 338.4, 4: 326.1, 8: 318.7}  # 8 nodes: assumed a little below 4 (synthesised, no public figure for 8)
def nccl_text(nodes, busbw=None, drop=None, no_gdr=(), idle=None):
    """The Spark simulation's synthesised all_reduce_perf answer (format of the real nccl-tests
    2.19.6 captures) for one rank per GPU (8 per node) on `nodes`: H100 rank lines, each rank's
    NCCL INFO lines (its host's `NET/IB : Using` line with the eight HCAs; `drop`: {node: HCA}
    left out of that node's line, as NCCL leaves out a port that is not active), the inter-node
    ring channels via NET/IB/N/GDRDMA (one per rail, GPUDirect RDMA), every time scaled so that
    the best busbw is `busbw` GB/s (default BUSBW by node count)."""
    drop = drop or {}
    best = busbw or BUSBW[len(nodes)]
    t = open(SPARK + "all_reduce_perf-2sparks-roce.txt").read().split("\n")
    import re
    base = max(float(m.group(1)) for l in t for m in [re.match(r"^\s+\d+\s+\d+\s+\w+\s+\w+\s+-?\d+\s+\S+\s+\S+\s+(\S+)", l)] if m)
    scale = best / base
    out = []
    nranks = GPUS * len(nodes)
    for line in t:
        if line.startswith("#  Rank "):
            continue
        if " NCCL INFO " in line:
            continue
        out.append(line)
        if line == "# Using devices":
            for k, n in enumerate(nodes):
                for g in range(GPUS):
                    r = k * GPUS + g
                    bus = GPU_BDF[g][5:12]
                    out.append(f"#  Rank {r:2d} Group  0 Pid {4211 + r:6d} on {n:>10s} device  {g} [{bus}] NVIDIA H100 80GB HBM3")
            for k, n in enumerate(nodes):
                devs = " ".join(f"[{i}]{ca}:1/IB" for i, ca in enumerate(c for c in HCAS if c != drop.get(n)))
                for g in range(GPUS):
                    r = k * GPUS + g
                    p = f"{n}:{4211 + r}:{4211 + r} [{g}] NCCL INFO "
                    if r == 0:
                        out.append(p + "NCCL version 2.21.5+cuda12.4")
                    out += [p + f"NET/IB : Using {devs} [RO]; OOB {IPOIB[0]}:{fabric_ip(n, 0)}<0>",
                            p + "Using network IB",
                            p + f"ncclCommInitRankConfig comm 0x55d1c2d3e40 rank {r} nranks {nranks} cudaDev {g} nvmlDev {g} busId {GPU_BDF[g][5:7]}000 commId 0x6d1e5a0b9c2f4e11 - Init START"]
                # the ring's inter-node hop of channel ch: through rail ch (GPU ch's own HCA)
                prev = ((k - 1) % len(nodes)) * GPUS
                nxt = ((k + 1) % len(nodes)) * GPUS
                for ch in range(GPUS):
                    r = k * GPUS + ch
                    gdr = "" if n in no_gdr else "/GDRDMA"
                    # `idle`: {node: k}: that node's channels over its last k devices go over
                    # its first ones instead (NCCL lists them, no channel uses them)
                    dev = ch if ch < GPUS - (idle or {}).get(n, 0) else ch - (idle or {}).get(n, 0)
                    out.append(f"{n}:{4211 + r}:{4230 + r} [{ch}] NCCL INFO Channel {ch:02d}/0 : {prev + ch}[{ch}] -> {r}[{ch}] [receive] via NET/IB/{dev}{gdr}")
                    out.append(f"{n}:{4211 + r}:{4230 + r} [{ch}] NCCL INFO Channel {ch:02d}/0 : {r}[{ch}] -> {nxt + ch}[{ch}] [send] via NET/IB/{dev}{gdr}")
    res = []
    for line in out:
        m = re.match(r"^(\s+\d+\s+\d+\s+\w+\s+\w+\s+-?\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", line)
        if m:
            a = [float(m.group(k)) for k in (2, 3, 4, 6, 7, 8)]
            # busbw = algbw x 2(n-1)/n: with 8n ranks instead of 2, the same busbw is a smaller algbw
            f = 2 * (nranks - 1) / nranks
            line = (f"{m.group(1)} {a[0] / scale:8.2f} {a[2] * scale / f:7.2f} {a[2] * scale:7.2f} {m.group(5):>7s} "
                    f"{a[3] / scale:8.2f} {a[5] * scale / f:7.2f} {a[5] * scale:7.2f} {m.group(9):>7s}")
        elif line.startswith("# Avg bus bandwidth"):
            line = f"# Avg bus bandwidth    : {float(line.split(':')[1]) * scale:.4f} "
        res.append(line)
    return "\n".join(res)

# The other collectives (issue 51 item 4) on all nodes, 1 MiB to 8 GiB. SYNTHESISED best busbw
# (no public measurement of these on 4 x 8 H100 with 8x400G is cited): all_gather and
# reduce_scatter a little below all_reduce (a real 2-node 8x B200 all_gather over 8x400G peaks
# at 261.6, tests/fixtures/nccl-tests/all_gather-2node-16xB200-gke-rdma-nccl2.26.txt), alltoall
# and sendrecv near one NIC per GPU (50 GB/s).
COLLS = {"alltoall": 46.2, "all_gather": 296.5, "reduce_scatter": 301.2, "sendrecv": 47.1}
def coll_text(nodes, coll, best):
    """`{coll}_perf -b 1M -e 8G -f 2 -g 1` over `nodes`, one rank per GPU: the header, rank and
    NCCL INFO lines of nccl_text() (format of the real nccl-tests captures) with the binary's
    name, and rows from 1 MiB to 8 GiB whose busbw rises to `best` (busbw = best x s / (s + 16
    MiB); algbw from nccl-tests' factors: (n-1)/n, sendrecv 1; redop `none` but for
    reduce_scatter's `sum`). SYNTHESISED."""
    import re
    n = GPUS * len(nodes)
    factor = 1.0 if coll == "sendrecv" else (n - 1) / n
    redop = "sum" if coll == "reduce_scatter" else "none"
    rows, size = [], 1 << 20
    while size <= 8 << 30:
        bus = best * size / (size + (16 << 20))
        alg = bus / factor
        t = size / alg / 1e3
        cnt = size // 4
        rows.append(f"{size:12d}  {cnt:12d}     float    {redop:>4s}      -1  {t:8.1f}  {alg:6.2f}  {bus:6.2f}       0  {t * 1.004:8.1f}  {alg / 1.004:6.2f}  {bus / 1.004:6.2f}       0")
        size *= 2
    avg = sum(best * (1 << k) / ((1 << k) + (16 << 20)) for k in range(20, 34)) / 14
    head, body = [], []
    for line in nccl_text(nodes).split("\n"):
        if re.match(r"^\s+\d+\s+\d+\s+\w+", line) or line.startswith("# Avg bus") or line.startswith("# Out of bounds"):
            continue
        line = line.replace("all_reduce_perf", f"{coll}_perf").replace("minBytes 8 maxBytes 1073741824", "minBytes 1048576 maxBytes 8589934592")
        (body if head and head[-1].startswith("#        (B)") or body else head).append(line)
    return "\n".join(head + rows + ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {avg:.4f} "] + body)

def coll_answers(out, colls=None):
    """The baseline's other collectives as launched from the first node (binary lookup, mpirun
    over all nodes on the first IPoIB address or, without IPoIB, the management address)."""
    for coll, best in (colls or COLLS).items():
        b = NCCL_BIN.replace("all_reduce_perf", f"{coll}_perf")
        cmd(out, f"""command -v '{coll}_perf' || {{ for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'{coll}_perf' ] && echo "$d"/'{coll}_perf' && break; done; }}""", b + "\n", ms=5)
        for addr in [lambda n: fabric_ip(n, 0), lambda n: HOSTS[n]]:
            hosts = ",".join(f"{addr(n)}:{GPUS}" for n in NODES)
            cmd(out, f"mpirun -np {GPUS * len(NODES)} -H {hosts} --bind-to none -x NCCL_IB_HCA -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS {b} -b 1M -e 8G -f 2 -g 1",
                coll_text(NODES, coll, best), ms=120000, note=f"synthesised {coll}_perf over every node, one rank per GPU (see coll_text)")

def nccl_answers(out, node, drop=None, busbw=None, no_gdr=(), idle=None):
    """The baseline's and five-step's NCCL runs as launched from the first node (h100-01): the
    binary lookup and mpirun over 2 nodes and over all 4, one rank per GPU (8 per node, the
    dgx-h100-class profile's gpus_per_node), on each node's first IPoIB address."""
    cmd(out, """command -v 'all_reduce_perf' || { for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'all_reduce_perf' ] && echo "$d"/'all_reduce_perf' && break; done; }""",
        NCCL_BIN + "\n", ms=5)
    for group, addr in [(g, a) for g in [NODES[:2], NODES] for a in [lambda n: fabric_ip(n, 0), lambda n: HOSTS[n]]]:
        hosts = ",".join(f"{addr(n)}:{GPUS}" for n in group)
        cmd(out, f"mpirun -np {GPUS * len(group)} -H {hosts} --bind-to none -x NCCL_IB_HCA -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS {NCCL_BIN} -b 8 -e 1G -f 2 -g 1",
            nccl_text(group, busbw=(busbw or {}).get(len(group)), drop=drop, no_gdr=no_gdr, idle=idle), ms=60000,
            note="synthesised all_reduce_perf, one rank per GPU, 8 HCAs on every host's NET/IB line (see nccl_text)")

def cmd(out, c, stdout, ms=10, note=None, after=None):
    if note:
        out.append(f"# {note}")
    out += ["[[command]]", f"command = {q(c)}"]
    if after:
        out.append(f"after = {q(after)}")
    out += [f"stdout = {q(stdout)}", "exit_code = 0", f"duration_ms = {ms}", ""]

def node_file(path, node, head, body):
    out = [f"# {head}", "# SYNTHESISED answers in the formats of real captures (see SOURCES.md).", ""]
    body(out)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write("\n".join(out))

for node in NODES:
    def body(out, node=node):
        cmd(out, "ibstat", ibstat(node), ms=40, note="ibstat: 8 ConnectX-7 NDR ports, Active, 400, SM lid 1")
        cmd(out, "ibv_devinfo", ibv_devinfo(node), ms=30, note="ibv_devinfo: IB MTU 4096 on every port")
        cmd(out, PKEYS_CMD, pkeys(), ms=10, note="the P_Keys: a full member (0xffff) of the default partition on every port")
        cmd(out, "sminfo", sminfo(act=1804467 + 17 * NODES.index(node)), ms=20, note="sminfo: the master SM (a UFM appliance's HCA, LID 1)")
        if node == NODES[0]:
            cmd(out, f"sminfo -G {SM_STANDBY}", sminfo(2, SM_STANDBY, 14, 2, "SMINFO_STANDBY", 602), ms=20, note="sminfo -G: the standby SM")
        for ca in HCAS:
            cmd(out, f"perfquery -x -C {ca} -P 1", perfquery(node, ca), ms=15)
        switch_ends(out, node)
        mlxlink_answers(out, node)
        cmd(out, "nvidia-smi topo -m", topo(), ms=300, note="one HCA per GPU on its PCIe switch (PIX)")
        ipoib_answers(out, node)
        health_answers(out, node)
        if node == NODES[0]:
            cmd(out, "iblinkinfo", iblinkinfo(), ms=900, note="iblinkinfo: every HCA cable 4X NDR to its rail's leaf switch (format of the real capture)")
            cmd(out, f"cat -- {PLAN}", cabling_plan(), ms=3, note="the site's cabling plan (--set ib_cabling_plan=...): example content, written by cabling_plan()")
            cmd(out, "ibdiagnet", ibdiagnet_text(), ms=95000, note="ibdiagnet's summary (format of the real capture): no warning, no error")
            cmd(out, "ibqueryerrors", ibqueryerrors_text(), ms=1500, note="ibqueryerrors: no port of the subnet beyond threshold (format of the real captures)")
        # --dry-run's preflight: the tools the primitives run (all present on a DGX H100 with
        # MLNX_OFED; ibdev2netdev is MLNX_OFED's) and the RDMA devices in sysfs
        for t in ["ping", "ethtool", "ip", "rdma", "ibdev2netdev", "ofed_info", "cat", "stat", "ib_write_bw",
                  "ib_read_bw", "ib_send_bw", "ib_write_lat", "iperf3", "mpirun", "timeout", "ss", "pkill", "ssh",
                  "sudo", NCCL_BIN, "ibv_devinfo", "show_gids", "lspci", "ls", "test", "uname", "mlnx_qos",
                  "dpkg-query", "hostname", "ibstat", "perfquery", "nvidia-smi", "sh", "head", "iblinkinfo"]:
            cmd(out, f"command -v {t} >/dev/null", "", ms=3)
        cmd(out, "ls -1 /sys/class/infiniband", "".join(sorted(c + "\n" for c in HCAS)), ms=3)
        rdma_answers(out, node)
        if node == NODES[0]:
            nccl_answers(out, node)
            coll_answers(out)
    node_file(f"{OUT}/{node}.toml", node, f"Transcript of the SIMULATED InfiniBand node {node}.", body)
# The plan as a site would keep it (example content; the same text h100-01 answers for PLAN)
open("cabling-plan.txt" if N == 4 else "cabling-plan-rack8.txt", "w").write(cabling_plan())
# The healthy fabric's ibnetdiscover, saved as a site would on the day of acceptance (SYNTHESISED;
# the scenarios with --set ib_cabling_plan=/etc/fabcheck/fabric.topo answer it)
open("fabric.topo" if N == 4 else "fabric-rack8.topo", "w").write(ibnetdiscover_text())

# ---- fault scenarios: scenarios/NAME/{scenario.toml, NODE.toml} -------------------------------
# What each fault's first diagnosis's `part` field alone must name (tests/it/sim_ib.rs: never
# unexplained; every fault scenario with testcases has a row).
PARTS = {
    "ib-gpu-far-hca": ["h100-04 GPU5 and its rail's HCA", "mlx5_6 (NODE)"],
    "ib-gpu-lost": ["h100-03: 7 of its 8 GPUs seen"],
    "ib-ibdiagnet-routing-errors": ["the subnet as ibdiagnet saw it from h100-01", "Routing 2 error(s)"],
    "ib-nccl-busbw-low": ["the path of NCCL's traffic between h100-01, h100-02"],
    "ib-rail-down-nccl-skips": ["h100-02 ibp94s0 (mlx5_5)"],
    "ib-port-at-hdr": ["the cable of h100-02 mlx5_5"],
    "ib-no-subnet-manager": ["the subnet manager"],
    "ib-symbol-errors-growing": ["h100-03 mlx5_9"],
    "ib-rail-write-slow": ["h100-03 ibp192s0 (mlx5_9)", "its own cable"],
    "ib-latency-pair-slow": ["the path of h100-02 ibp79s0 (mlx5_4) to h100-04"],
    "ib-cable-at-hdr": ["the cable of h100-04 mlx5_10"],
}
def scenario(name, description, expects, files, parts=(), notes=(), healthy=False, runs=()):
    """`parts`: what the run's first diagnosis's `part` field must name (the injected fault's
    part); `notes`: (script, args, rule, part) WARN-level notes a run must carry and no red;
    `healthy`: a healthy variant, every script of `runs` ((script, args)) green, no note."""
    if (N == 4) == name.startswith("rack-"):
        return  # the 4-node catalogue, or the rack's
    # Every scenario runs its scripts unfiltered (issue 46): the reds it lists are all there are.
    def unfiltered(args):
        out, i = [], 0
        while i < len(args):
            if args[i] == "--filter":
                i += 2
                continue
            out.append(args[i])
            i += 1
        return out
    expects = [e if len(e) == 2 else (e[0], unfiltered(e[1]), e[2], e[3]) for e in expects]
    notes = [(sc, unfiltered(a), r, p) for sc, a, r, p in notes]
    runs = [(sc, unfiltered(a)) for sc, a in runs]
    d = f"{OUT}/scenarios/{name}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    s = [f"description = {q(description)}", f"healthy = {'true' if healthy else 'false'}"]
    parts = parts or PARTS.get(name, ())
    if parts:
        s.append(f"parts = {json.dumps(list(parts))}")
    if not expects:
        s.append("expect = []")
    s.append("")
    for script, args in runs:
        s += ["[[run]]", f"script = {q(script)}", f"args = {json.dumps(args)}", ""]
    for script, args, rule, part in notes:
        s += ["[[note]]", f"script = {q(script)}", f"args = {json.dumps(args)}", f"rule = {q(rule)}", f"part = {q(part)}", ""]
    for e in expects:
        # (test, messages): fabric_health's IB checks; (script, args, test, messages): another script
        script, args, test, msgs = ("fabric_health.rhai", [], *e) if len(e) == 2 else e
        s += ["[[expect]]", f"script = {q(script)}", f"test = {q(test)}", 'status = "failure"',
              f"message = {json.dumps(msgs)}"] + ([f"args = {json.dumps(args)}"] if args else []) + [""]
    open(f"{d}/scenario.toml", "w").write("\n".join(s))
    for node, body in files.items():
        node_file(f"{d}/{node}.toml", node, f"Fault scenario `{name}` on {node}: these answers replace the healthy ones.", body)

scenario("ib-port-at-hdr", "h100-02 mlx5_5 trained at 200 Gb/s (HDR speed or 2X width) in an NDR fabric",
         [("health: ib ports [h100-02]", ["h100-02 mlx5_5 port 1: Rate 200 Gb/s", "expected 400 Gb/s (4X NDR)"])],
         {"h100-02": lambda out: cmd(out, "ibstat", ibstat("h100-02", {"mlx5_5": {"rate": "200"}}), ms=40)})
no_sm = {ca: {"state": "Initializing", "lid": "65535", "sm": "0"} for ca in HCAS}
scenario("ib-no-subnet-manager", "no subnet manager runs: every port links up but stays Initializing, no LID, SM lid 0",
         [(f"health: ib ports [{n}]", [f"{n} mlx5_0 port 1: State Initializing", "SM lid 0: no subnet manager"]) for n in NODES],
         {n: (lambda out, n=n: cmd(out, "ibstat", ibstat(n, no_sm), ms=40)) for n in NODES})
def symbol_growing(out):
    cmd(out, "perfquery -x -C mlx5_9 -P 1", perfquery("h100-03", "mlx5_9"), ms=15, note="first read: healthy")
    cmd(out, "perfquery -x -C mlx5_9 -P 1", perfquery("h100-03", "mlx5_9", symbol=37, wait=8801), ms=15,
        note="second read: SymbolErrorCounter grew by 37 (a marginal cable or transceiver)")
scenario("ib-symbol-errors-growing", "h100-03 mlx5_9: SymbolErrorCounter grows by 37 between the two reads (a marginal cable)",
         [("health: error counters not grown [h100-03]", ["h100-03 mlx5_9/1", "SymbolErrorCounter grew by +37"])],
         {"h100-03": symbol_growing})
scenario("ib-gpu-far-hca", "h100-04 GPU5's HCA mlx5_9 sits in a slot of the other CPU socket (SYS): GPUDirect crosses the socket link",
         [("health: gpu nearest hca [h100-04]", ["h100-04 GPU5: nearest listed HCA is mlx5_6 (NODE)", "no HCA on the GPU's PCIe switch"])],
         {"h100-04": lambda out: cmd(out, "nvidia-smi topo -m", topo(far=5), ms=300)})
# A slow rail at full link rate (a PCIe path or a cable with retransmissions): ibstat says 400,
# ib_write_bw from h100-03's mlx5_9 reaches 251.3 Gb/s against every peer. The baseline's RDMA
# test fails naming the node, the HCA and the value.
RDMA = ["--filter", "rdma: "]
scenario("ib-rail-write-slow", "h100-03 mlx5_9 is Active at 400 Gb/s but writes only 251.3 Gb/s (RDMA) to every peer: a PCIe path or a cable with retransmissions",
         [("fabric_baseline.rhai", RDMA, f"rdma: write per port [h100-03 -> {p}]", ["h100-03 -> " + p, "mlx5_9 251.3"]) for p in ["h100-01", "h100-02", "h100-04"]],
         {"h100-03": lambda out: [cmd(out, f"ib_write_bw -d mlx5_9 -p 18515 -D 5 --report_gbits {fabric_ip(p, HCAS.index('mlx5_9'))}", ib_write_bw_client("h100-03", p, "mlx5_9", 251.3), ms=6050)
                                  for p in ["h100-01", "h100-02", "h100-04"]]})
# A slow latency pair (issue 33): h100-02's mlx5_4 to h100-04 answers in 6.2 us where every other
# rail and pair answers 1.47: with the fixed line --set rdma_lat_max_usec=3 the pair fails naming
# the rail; without it the diagnosis's odd one out names it (tests/it/sim_ib.rs).
scenario("ib-latency-pair-slow", "h100-02 mlx5_4 -> h100-04: RDMA write latency 6.2 us where every other rail and pair answers 1.47 us",
         [("fabric_baseline.rhai", RDMA + ["--set", "rdma_lat_max_usec=3"], "rdma: latency per rail [h100-02 -> h100-04]", ["latency above 3 us on mlx5_4 6.2 us"])],
         {"h100-02": lambda out: cmd(out, f"ib_write_lat -d mlx5_4 -p 18515 {fabric_ip('h100-04', HCAS.index('mlx5_4'))}", ib_write_lat_text("mlx5_4", 6.2), ms=1050)})
# A down rail NCCL skips silently (issue 33): h100-02's NCCL lists 7 of its 8 HCAs (mlx5_5 left
# out, as NCCL leaves out a port that is not active). Its traffic spreads over the 7 rails left:
# busbw 7/8 of healthy (296 GB/s on 2 nodes, 285 on 4) still passes the full-node line (280,
# 70 % of the rails together): only the rails check fails, naming h100-02 and mlx5_5. (The
# port's own ibstat/rdma link answers are left healthy here: the port checks have their
# scenarios; this one is about NCCL.)
NCCL = ["--filter", "nccl"]
scenario("ib-rail-down-nccl-skips", "h100-02's NCCL lists 7 of its 8 HCAs (mlx5_5 not active, skipped silently); busbw at 7/8 still passes the full-node line",
         [("fabric_baseline.rhai", NCCL, t, ["h100-02: NCCL used 7 of its 8 rails", "not used: mlx5_5"]) for t in ["nccl: all_reduce 2 nodes", "nccl: all_reduce 4 nodes"]],
         {"h100-01": lambda out: nccl_answers(out, "h100-01", drop={"h100-02": "mlx5_5"}, busbw={2: 296.1, 4: 285.3})})
# Full-node busbw far below the rails together (issue 33): NCCL lists and uses every rail of
# every node, but the collective peaks at 187 GB/s (a fabric that does not carry eight rails at
# once: a congested or mis-cabled fat tree, adaptive routing off). One rank per node against one
# port's line (40 GB/s) passed this; one rank per GPU against the node's rails (280) fails it.
scenario("ib-nccl-busbw-low", "every rail used, but the full-node all_reduce peaks at 187 GB/s, below the 280 GB/s of eight NDR rails together",
         [("fabric_baseline.rhai", NCCL, "nccl: all_reduce 2 nodes", ["best bus bandwidth over 16 ranks, 8 per node", "expected >= 280, actual 187.2"]),
          ("fabric_baseline.rhai", NCCL, "nccl: all_reduce 4 nodes", ["best bus bandwidth over 32 ranks, 8 per node", "expected >= 280, actual 186.9"])],
         {"h100-01": lambda out: nccl_answers(out, "h100-01", busbw={2: 187.2, 4: 186.9})})
# A GPU fallen off the bus (issue 33): h100-03 shows 7 of its 8 GPUs (nvidia-smi and
# /proc/driver/nvidia/gpus; GPU 5 at c3:00.0 gone, as after an Xid 79). A full-node collective
# needs every GPU: the NCCL tests fail before launching, naming the node, 7 seen and 8 expected
# (the profile); --set gpus_per_node=7 would run on the GPUs there are.
def gpu_lost(out):
    cmd(out, sysfs_command(), sysfs_ib("h100-03", gpus=[g for g in GPU_BDF if g != "0000:c3:00.0"]), ms=30)
    cmd(out, gpu_command(), "NVIDIA H100 80GB HBM3\n" * 7, ms=40)
scenario("ib-gpu-lost", "h100-03 shows 7 of its 8 GPUs (GPU 5 fallen off the bus): a full-node collective cannot run",
         [("fabric_baseline.rhai", NCCL, t, ["h100-03: 7 GPU(s) seen, 8 expected", "profile dgx-h100-class"])
          for t in ["nccl: all_reduce 4 nodes"] + [f"nccl: {c} 4 nodes" for c in COLLS]],
         {"h100-03": gpu_lost})
# A cable that trained at HDR (issue 33, the fabric view): h100-04 mlx5_10's link to its leaf
# switch runs 4X at 53.125 Gbps lanes (200 Gb/s) in the NDR fabric, as the subnet sees it
# (iblinkinfo from h100-01: the node's own ibstat is left healthy: a wrong view at one end)
scenario("ib-cable-at-hdr", "h100-04 mlx5_10's cable to its leaf switch trained at HDR (4X 53.125 Gbps lanes) in the NDR fabric, as iblinkinfo shows it",
         [("health: ib fabric links", ["h100-04 mlx5_10 LID 40 port 1 -> MQM9790 Mellanox Technologies LID 206 port 4", "4X 53.125 Gbps (HDR, 200 Gb/s), expected 4X at 400 Gb/s"])],
         {"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo({("h100-04", "mlx5_10"): ("4X", "53.125", "Active", "LinkUp")}), ms=900)})
# ibdiagnet, asked for (--set ibdiagnet=true), finds routing errors (issue 33: the heavy fabric
# check, never by default): the Routing stage reports 2 errors
scenario("ib-ibdiagnet-routing-errors", "ibdiagnet (asked for with --set ibdiagnet=true) reports 2 errors in its Routing stage",
         [("fabric_health.rhai", ["--filter", "health: ibdiagnet", "--set", "ibdiagnet=true"], "health: ibdiagnet", ["ibdiagnet from h100-01 found errors: Routing 2 error(s)", "/var/tmp/ibdiagnet2"])],
         {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text((("Discovery", 0, 0), ("Virtualization", 0, 0), ("Routing", 1, 2))), ms=95000)})

# NCCL's evidence by host (issue 46 item 4): h100-02's channels stage through host memory (no
# /GDRDMA: nvidia-peermem not loaded there) while the other nodes' go GPUDirect RDMA.
scenario("ib-node-without-gdr", "h100-02's NCCL channels stage through host memory (no GDRDMA: nvidia-peermem not loaded there) while h100-01, h100-03 and h100-04 use GPUDirect RDMA",
         [("fabric_baseline.rhai", NCCL, t, ["h100-02 (0 of 16 channels via GDRDMA) stage through host memory", "use GPUDirect RDMA"]) for t in ["nccl: all_reduce 2 nodes", "nccl: all_reduce 4 nodes"]],
         {"h100-01": lambda out: nccl_answers(out, "h100-01", no_gdr=("h100-02",))},
         parts=["GPUDirect RDMA on h100-02, where h100-01 use it"])

# A rail NCCL lists but no channel uses (issue 46 item 4): h100-02 lists its eight HCAs, but its
# channels 6 and 7 go over its devices 4 and 5: mlx5_10 and mlx5_11 carry nothing (busbw still
# above the full-node line).
scenario("ib-rail-listed-unused", "h100-02's NCCL lists its eight HCAs but no channel goes over mlx5_10 and mlx5_11 (its channels 6 and 7 share devices 4 and 5); busbw still passes the full-node line",
         [("fabric_baseline.rhai", NCCL, t, ["h100-02: NCCL listed 8 rails but its channels use 6 (no channel over mlx5_10, mlx5_11)"]) for t in ["nccl: all_reduce 2 nodes", "nccl: all_reduce 4 nodes"]],
         {"h100-01": lambda out: nccl_answers(out, "h100-01", idle={"h100-02": 2})},
         parts=["h100-02 mlx5_10: NCCL listed it, no channel uses it"])

# ---- the fleet view (issue 46): like parts compared across nodes ------------------------------
# A node slow on every rail (its BIOS, IOMMU or power settings, firmware: what its rails share):
# h100-03 writes at 331.6 Gb/s, and is written to at the same, on all eight HCAs; every HCA is
# Active at 400 and every other pair runs 392.18. Each pair with h100-03 is past its line (360):
# the diagnosis puts them on h100-03 as a whole, not on 48 rails.
def slow_links(node, cas, gbps):
    """Every node's answers on HCAs `cas` of the pairs with `node`, both ways, at `gbps`."""
    def files(out, me):
        for ca in cas:
            for p in NODES:
                if p == me or (me != node and p != node):
                    continue
                cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits {fabric_ip(p, HCAS.index(ca))}",
                    ib_write_bw_client(me, p, ca, gbps), ms=6050)
    return {n: (lambda out, n=n: files(out, n)) for n in NODES}
def slow_node(gbps, node="h100-03"):
    return slow_links(node, HCAS, gbps)
OTHERS = [n for n in NODES if n != "h100-03"]
scenario("ib-node-slow-every-rail", "h100-03 writes and is written to at 331.6 Gb/s on all eight HCAs (every link Active at 400); every other pair runs 392.18: the node, not a rail",
         [("fabric_baseline.rhai", RDMA, f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "331.6"])
          for a, b in [("h100-03", p) for p in OTHERS] + [(p, "h100-03") for p in OTHERS]],
         slow_node(331.6), parts=["h100-03 as a whole"])
# The same node 6 % slow (370.2 Gb/s): above the 360 line, so no pair fails, but the node is in
# every slow pair: a WARN-level note with the numbers, not a pass in silence.
scenario("ib-node-6pct-slow-every-rail", "h100-03 writes and is written to at 370.2 Gb/s on every HCA, 6 % below its peers' 392.18 but above the 360 line: nothing fails, the diagnosis notes the node",
         [], slow_node(370.2), notes=[("fabric_baseline.rhai", RDMA, "odd_node", "h100-03 as a whole")])
# One HCA slow in both directions (its cable with retransmissions): h100-02 mlx5_6 at 288.4
def slow_hca(node, ca, gbps):
    return slow_links(node, [ca], gbps)
scenario("ib-hca-slow-both-ways", "h100-02 mlx5_6 (rail 4) at 288.4 Gb/s to and from every peer, Active at 400: that HCA's cable, transceiver or leaf port",
         [("fabric_baseline.rhai", RDMA, f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "mlx5_6 288.4"])
          for a, b in [("h100-02", p) for p in NODES if p != "h100-02"] + [(p, "h100-02") for p in NODES if p != "h100-02"]],
         slow_hca("h100-02", "mlx5_6", 288.4), parts=["h100-02 ibp154s0 (mlx5_6)", "its own cable"])
# Healthy variant: every pair within 1.5 % of the others (real fabrics are not identical): the
# fleet view names no node and no rail, and nothing fails.
def noisy(out, me):
    for ca in HCAS:
        for p in NODES:
            if p == me:
                continue
            i, j, k = NODES.index(me), NODES.index(p), HCAS.index(ca)
            cmd(out, f"ib_write_bw -d {ca} -p 18515 -D 5 --report_gbits {fabric_ip(p, k)}",
                ib_write_bw_client(me, p, ca, 392.18 * (1 - ((3 * i + 5 * j + 7 * k) % 7) * 0.0025)), ms=6050)
scenario("ib-healthy-noisy-pairs", "healthy: every pair's RDMA write within 1.5 % of the others (386.3 to 392.18 Gb/s), as a real fabric measures",
         [], {n: (lambda out, n=n: noisy(out, n)) for n in NODES}, healthy=True, runs=[("fabric_baseline.rhai", [])])

# NVIDIA's release table (issue 46 item 5): every node runs MLNX_OFED 24.10's driver (DOCA 2.9's
# stream, which bundles ConnectX-7 firmware 28.43.x) with firmware 28.39.1002: the same on every
# node, so no drift; the version check passes with a WARN per node naming its IPoIB netdevs.
# The healthy variant runs the firmware of that release. (ethtool -i of IPoIB under MLNX_OFED
# reports the OFED version, as the real capture tests/fixtures/ethtool/ethtool-i-ipoib-mlx5_core-ib_ipoib-azure-cx6-ofed24.07.txt.)
def ofed_driver(fw):
    def f(out):
        for i, nd in enumerate(IPOIB):
            cmd(out, f"ethtool -i {nd}", ethtool_i_ipoib(i).replace(f"version: {KERNEL}", "version: 24.10-1.1.4").replace("28.39.1002", fw), ms=10)
    return f
VERSIONS = ["--filter", "health: version drift"]
scenario("ib-firmware-outside-driver-release", "every node runs MLNX_OFED 24.10's driver (DOCA 2.9 bundles ConnectX-7 28.43.x) with firmware 28.39.1002: the same everywhere (no drift), a WARN per node from NVIDIA's release table",
         [], {n: ofed_driver("28.39.1002") for n in NODES}, healthy=True, runs=[("fabric_health.rhai", VERSIONS)])
scenario("ib-healthy-ofed-driver-with-its-firmware", "healthy: every node runs MLNX_OFED 24.10's driver with the firmware its DOCA 2.9 release bundles (28.43.2566): no drift, no release-table warning",
         [], {n: ofed_driver("28.43.2566") for n in NODES}, healthy=True, runs=[("fabric_health.rhai", VERSIONS)])

# Rail alignment (issue 46 item 3): h100-02's mlx5_3 (rail 2) and mlx5_4 (rail 3) cables are
# swapped at the leaves: each lands on the other rail's leaf switch (LIDs 202 and 201), in the
# port h100-02's own cable of that rail should use. Every link is Active 4X NDR: only where the
# cables land tells it (iblinkinfo from h100-01).
def crossed(k, i, node="h100-02"):
    if NODES[k] == node and i in (1, 2):
        return (3 - i, k + 1)
    return (i, k + 1)
LINKS = ["--filter", "health: ib fabric links"]
scenario("ib-rail-crossed", "h100-02's mlx5_3 and mlx5_4 cables swapped at the leaves: each lands on the other rail's leaf switch (every link Active 4X NDR)",
         [("fabric_health.rhai", LINKS, "health: ib fabric links", ["h100-02 mlx5_3 (rail 2 of 8) lands on switch LID 202 port 2, the leaf of rail 3", "h100-02 mlx5_4 (rail 3 of 8) lands on switch LID 201 port 2, the leaf of rail 2"]),
          ("fabric_baseline.rhai", LINKS + ["--filter", "ib: fabric links"], "ib: fabric links", ["h100-02 mlx5_3 (rail 2 of 8) lands on switch LID 202"])],
         with_ends({"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place=crossed), ms=900)}, crossed),
         parts=["the cables of h100-02 mlx5_3, mlx5_4 at the leaf switches"])
# Healthy variant: a small cluster on one switch (every HCA of every node on one 32-port NDR
# switch, not rail-optimised): no rail has a leaf of its own, nothing is crossed.
scenario("ib-healthy-one-switch", "healthy: all 32 HCAs on one NDR switch (a small cluster, not rail-optimised): no rail alignment to judge",
         [], with_ends({"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place=lambda k, i: (0, 8 * k + i + 1), spines=0), ms=900)}, lambda k, i: (0, 8 * k + i + 1)),
         healthy=True, runs=[("fabric_health.rhai", ["--filter", "health: ib fabric links"])])
# Healthy variant: nodes split between two switches by node (h100-01/02 on one, 03/04 on the
# other, each node's eight HCAs on its switch): not rail-optimised, nothing crossed.
scenario("ib-healthy-leaves-by-node", "healthy: h100-01/02 on one switch, h100-03/04 on another, every HCA of a node on its node's switch: not rail-optimised, nothing crossed",
         [], with_ends({"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place=lambda k, i: (k // 2, 8 * (k % 2) + i + 1)), ms=900)}, lambda k, i: (k // 2, 8 * (k % 2) + i + 1)),
         healthy=True, runs=[("fabric_health.rhai", ["--filter", "health: ib fabric links"])])

# ---- the fabric between the nodes (issue 51 item 1): leaf-spine cables, uplinks, the plan -----
# The healthy fabric: 8 rail leaves (LID 200-207) with 4 node cables each and 4 uplinks (ports
# 33-36), alternating over 2 spines (LID 300, 301; spine port = leaf's cables in order).
# A missing uplink: leaf 202's fourth uplink (port 36 -> spine 301 port 6) is Down at both ends.
# Every link that is up is 4X NDR; the leaf has 3 uplinks where the 7 others have 4.
LINKS_H = "health: ib fabric links"
scenario("ib-uplink-missing", "the rail-3 leaf (LID 202) lost an uplink: its port 36 to spine LID 301 port 6 is Down at both ends (3 uplinks where the other leaves have 4)",
         [(LINKS_H, ["leaf switch 0xfc6a1c0300e40200 \"MQM9790 Mellanox Technologies\" LID 202 has 3 uplinks to the spines where 7 of the 8 leaves have 4", "port(s) 36 are uplinks on the other leaves"]),
          ("fabric_baseline.rhai", [], "ib: fabric links", ["LID 202 has 3 uplinks"])],
         {"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place_up=lambda lf, lp, to: None if (lf, lp) == (2, 36) else to), ms=900)},
         parts=["an uplink of leaf switch 0xfc6a1c0300e40200"])
# A slow uplink: leaf 205's port 34 to spine 301 port 11 trained at HDR (53.125 Gbps lanes).
scenario("ib-uplink-slow", "the rail-6 leaf's (LID 205) uplink port 34 to spine LID 301 port 11 trained at HDR (4X 53.125 Gbps) in the NDR fabric",
         [(LINKS_H, ["switch 0xfc6a1c0300e40500 \"MQM9790 Mellanox Technologies\" LID 205 port 34 <-> switch 0xfc6a1c0300e50100 \"MQM9790 Mellanox Technologies\" LID 301 port 11: 4X 53.125 Gbps (HDR, 200 Gb/s), expected 4X at 400 Gb/s"])],
         {"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(up_over={(5, 34): ("4X", "53.125", "Active", "LinkUp")}), ms=900)},
         parts=["the switch-to-switch cable switch 0xfc6a1c0300e40500 \"MQM9790 Mellanox Technologies\" LID 205 port 34"])
# A cable on the wrong spine port against the plan: leaf 201's port 35 (planned to spine 300
# port 4) lands on spine 300 port 17, a port the plan leaves empty. Every link is Active 4X NDR
# and every leaf has 4 uplinks: only the plan tells it (--set ib_cabling_plan=...).
PLAN_ARGS = ["--set", f"ib_cabling_plan={PLAN}"]
scenario("ib-cable-wrong-port-vs-plan", "the rail-2 leaf's (LID 201) uplink port 35 lands on spine LID 300 port 17 where the cabling plan says port 4 (every link Active 4X NDR, 4 uplinks per leaf)",
         [("fabric_health.rhai", PLAN_ARGS, LINKS_H, ["planned cable switch 0xfc6a1c0300e40100 \"MQM9790 Mellanox Technologies\" LID 201 port 35 <-> switch 0xfc6a1c0300e50000 \"MQM9790 Mellanox Technologies\" LID 300 port 4",
                                                      "LID 201 port 35 is cabled to switch 0xfc6a1c0300e50000 \"MQM9790 Mellanox Technologies\" LID 300 port 17", "LID 300 port 4 is Down/Polling (no cable)"])],
         {"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place_up=lambda lf, lp, to: (0, 17) if (lf, lp) == (1, 35) else to), ms=900)},
         parts=["the cable planned switch 0xfc6a1c0300e40100 \"MQM9790 Mellanox Technologies\" LID 201 port 35"])
# Healthy variant: the healthy fabric against its plan (every unused port Down, no planned
# cable on them): nothing fails.
scenario("ib-healthy-plan-matches", "healthy: every cable where the cabling plan puts it; the switches' unused ports Down (no planned cable: not a fault)",
         [], {}, healthy=True, runs=[("fabric_health.rhai", PLAN_ARGS), ("fabric_baseline.rhai", PLAN_ARGS + ["--filter", "ib: fabric links"])])

# The plan as a saved ibnetdiscover (the whole fabric as accepted): h100-03 mlx5_6's cable was
# moved from port 3 of its rail's leaf (LID 204) to port 9 of the same leaf. Every link is Active
# 4X NDR on the right rail's leaf with 4 uplinks per leaf: only the saved topology tells it.
TOPO_ARGS = ["--set", f"ib_cabling_plan={TOPO}"]
def topo_answer(out):
    cmd(out, f"cat -- {TOPO}", ibnetdiscover_text(), ms=3, note="the saved ibnetdiscover of the healthy fabric (SYNTHESISED, examples/sim-ib/fabric.topo)")
def moved_port(k, i):
    return (4, 9) if (k, i) == (2, 4) else (i, k + 1)
scenario("ib-cable-moved-vs-ibnetdiscover", "h100-03 mlx5_6's cable sits on port 9 of its rail's leaf (LID 204) where the saved ibnetdiscover has it on port 3 (every link Active 4X NDR, on its rail's leaf)",
         [("fabric_health.rhai", TOPO_ARGS, LINKS_H, ["planned cable switch 0xfc6a1c0300e40400 \"MQM9790 Mellanox Technologies\" LID 204 port 3 <-> h100-03 mlx5_6 (/etc/fabcheck/fabric.topo on h100-01 line ",
                                                      "LID 204 port 3 is Down/Polling (no cable); h100-03 mlx5_6 is cabled to switch 0xfc6a1c0300e40400 \"MQM9790 Mellanox Technologies\" LID 204 port 9"])],
         with_ends({"h100-01": lambda out: (topo_answer(out), cmd(out, "iblinkinfo", iblinkinfo(place=moved_port), ms=900))}, moved_port),
         parts=["the cable planned switch 0xfc6a1c0300e40400 \"MQM9790 Mellanox Technologies\" LID 204 port 3 <-> h100-03 mlx5_6"])
# A new cable the saved topology does not have: a spare leaf-spine cable added between leaf 207's
# unused port 50 and spine 301's unused port 40 (the leaf then has 5 uplinks: more than the
# others is not a fault; only the plan tells it).
scenario("ib-cable-new-vs-ibnetdiscover", "a cable added since the fabric was accepted: leaf LID 207 port 50 to spine LID 301 port 40, ports the saved ibnetdiscover has unconnected",
         [("fabric_health.rhai", TOPO_ARGS, LINKS_H, ["cable switch 0xfc6a1c0300e40700 \"MQM9790 Mellanox Technologies\" LID 207 port 50 <-> switch 0xfc6a1c0300e50100 \"MQM9790 Mellanox Technologies\" LID 301 port 40 is not in the plan /etc/fabcheck/fabric.topo on h100-01 (a saved ibnetdiscover, the whole fabric)"])],
         {"h100-01": lambda out: (topo_answer(out), cmd(out, "iblinkinfo", iblinkinfo(extra_up={(7, 50): (1, 40)}), ms=900))},
         parts=["the unplanned cable switch 0xfc6a1c0300e40700 \"MQM9790 Mellanox Technologies\" LID 207 port 50"])
# Healthy variant: the fabric as it was saved; the switches' unused ports Down (not in the
# topology: ibnetdiscover lists connected ports only).
scenario("ib-healthy-ibnetdiscover-plan-matches", "healthy: every cable where the saved ibnetdiscover (the fabric as accepted) has it; unused ports Down",
         [], {"h100-01": topo_answer}, healthy=True, runs=[("fabric_health.rhai", TOPO_ARGS), ("fabric_baseline.rhai", TOPO_ARGS + ["--filter", "ib: fabric links"])])

# ---- the GPUDirect path (issue 51 item 5) -----------------------------------------------------
def raw(out, c, stdout, code, stderr=""):
    """A transcript entry with an exit code (cmd() answers 0)."""
    out += ["[[command]]", f"command = {q(c)}", f"stdout = {q(stdout)}", f"stderr = {q(stderr)}", f"exit_code = {code}", "duration_ms = 3", ""]
OPEN_KM = open(FX + "nvidia-smi/proc-driver-nvidia-version-open-kernel-module-580.txt").read()
PROP_KM = open(FX + "nvidia-smi/proc-driver-nvidia-version-proprietary-515.txt").read()
def no_peermem(version):
    def files(out):
        raw(out, "test -d /sys/module/nvidia_peermem", "", 1)
        cmd(out, "cat /proc/driver/nvidia/version", version, ms=3, note="/proc/driver/nvidia/version: a REAL capture (tests/fixtures/nvidia-smi), unchanged")
    return files
# ACS on above one GPU: h100-03's switch port above GPU 5 (0000:c3:00.0) redirects
# peer-to-peer (the real capture's ACSCtl line): GPUDirect RDMA for that GPU and mlx5_9 goes
# through the root complex.
scenario("ib-acs-on-above-gpu", "h100-03: PCIe ACS on (ReqRedir+ CmpltRedir+) at the switch port above GPU 5 (0000:c3:00.0): its GPUDirect traffic to mlx5_9 goes through the root complex",
         [("health: pcie acs [h100-03]", ["h100-03 bridge 0000:bf:01.0", "above GPU 0000:c3:00.0", "ACS redirects peer-to-peer (ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+"])],
         {"h100-03": lambda out: acs_answers(out, on=("0000:bf:01.0",))}, parts=["PCIe ACS on h100-03's bridge 0000:bf:01.0 above GPU 0000:c3:00.0"])
# Healthy variant: h100-02 runs GPUDirect RDMA through DMA-BUF: no nvidia_peermem, the open GPU
# kernel modules (580.95.05) on kernel 5.15.
scenario("ib-healthy-dmabuf-without-peermem", "healthy: h100-02 has no nvidia_peermem but the open GPU kernel modules on kernel 5.15: GPUDirect RDMA through DMA-BUF",
         [], {"h100-02": no_peermem(OPEN_KM)}, healthy=True, runs=[("fabric_health.rhai", [])])
# Neither path: no nvidia_peermem and the proprietary kernel module (no DMA-BUF).
scenario("ib-no-gpudirect-path", "h100-02 has no nvidia_peermem and the proprietary NVIDIA kernel module (no DMA-BUF): GPUDirect RDMA is off",
         [("health: gpudirect rdma [h100-02]", ["nvidia_peermem module is not loaded", "DMA-BUF is not available (the proprietary kernel module 515.76, kernel 5.15.0-1063-nvidia"])],
         {"h100-02": no_peermem(PROP_KM)}, parts=["GPUDirect RDMA on h100-02: no nvidia_peermem and no DMA-BUF"])

# A GPU's PCIe link at half width: h100-04's GPU 3 (0000:61:00.0) trained x8 of x16 (its riser).
scenario("ib-gpu-link-x8", "h100-04 GPU 3 (0000:61:00.0) PCIe link at x8 of its x16 (a riser or the board's seating)",
         [("health: gpu pcie link [h100-04]", ["h100-04 GPU 61:00.0", "PCIe link width x8 of its x16"])],
         {"h100-04": lambda out: gpu_lspci_answers(out, {"0000:61:00.0": "Speed 32GT/s, Width x8 (downgraded)"})},
         parts=["h100-04 GPU 61:00.0: its PCIe link at x8 of x16"])

# GPUDirect RDMA from GPU memory: h100-02's mlx5_6 (GPU 4) writes 121.7 Gb/s from GPU memory to
# h100-04 where the same rail writes 392.18 from host memory (GPU 4's PCIe link trained down,
# or its switch port redirecting peer-to-peer: the host-memory path is clean).
GDR = ["--filter", "rdma: gpu memory"]
scenario("ib-gpu-memory-slow", "h100-02 mlx5_6 writes 121.7 Gb/s from GPU 4's memory (ib_write_bw --use_cuda=4) to h100-04 where the same rail writes 392.18 from host memory",
         [("fabric_baseline.rhai", GDR, "rdma: gpu memory per rail [h100-02 -> h100-04]",
           ["mlx5_6 (GPU 4) -> h100-04 mlx5_6: GPU memory 121.7 Gbit/s vs host memory 392.18 Gbit/s (31 %)"])],
         {"h100-02": lambda out: gdr_answers(out, "h100-02", slow={("h100-04", "mlx5_6"): 121.7})},
         parts=["the GPUDirect path of h100-02 GPU 4 and mlx5_6"])
# Healthy variant: perftest on h100-03 built without CUDA: the GPU-memory test is skipped
# saying so (nothing fails).
scenario("ib-healthy-perftest-without-cuda", "healthy: perftest on h100-03 built without CUDA (no --use_cuda): the GPU-memory test skips saying why",
         [], {"h100-03": lambda out: gdr_answers(out, "h100-03", cuda=False)},
         healthy=True, runs=[("fabric_baseline.rhai", GDR)])

# The IOMMU translating DMA on h100-02 (booted with intel_iommu=on and no iommu=pt: every GPU's
# and HCA's group DMA-FQ): GPUDirect RDMA's peer-to-peer DMA goes through the IOMMU.
scenario("ib-iommu-translated", "h100-02 booted with intel_iommu=on and no iommu=pt: every GPU and HCA in a translated (DMA-FQ) IOMMU group",
         [("health: iommu [h100-02]", ["h100-02: the IOMMU translates DMA of GPU 0000:1b:00.0", "mlx5_0", "iommu_group type DMA-FQ", "kernel command line: intel_iommu=on", "boot with iommu=pt"])],
         {"h100-02": lambda out: iommu_answers(out, CMDLINE.replace("iommu=pt", "intel_iommu=on"), "DMA-FQ")},
         parts=["the IOMMU mode of h100-02 (DMA-FQ for GPU 0000:1b:00.0"])
# Healthy variant: h100-03 has no IOMMU at all (off in the firmware: no group on any device,
# no IOMMU parameter), as on the real machine of tests/fixtures/iommu/iommu-group-type-*.
scenario("ib-healthy-iommu-off", "healthy: h100-03 without an IOMMU (no iommu_group on any GPU or HCA, no IOMMU parameter on the command line)",
         [], {"h100-03": lambda out: iommu_answers(out, CMDLINE.replace(" iommu=pt", ""), "none")},
         healthy=True, runs=[("fabric_health.rhai", [])])

# ---- both ends of every link (issue 51 item 2) -------------------------------------------------
# The switch end of h100-02 mlx5_4's cable (leaf LID 202 port 2) counts 55 symbol errors during
# the load; the HCA end counts none (a cable or module failing towards the switch): the
# baseline's counters after load name the switch end.
scenario("ib-switch-end-errors", "the leaf end (LID 202 port 2) of h100-02 mlx5_4's cable counts 55 symbol errors under load; the HCA end counts none",
         [("fabric_baseline.rhai", [], "health: error counters not grown under load [h100-02]", ["switch LID 202 port 2 (the switch end of mlx5_4)", "SymbolErrorCounter"])],
         {"h100-02": lambda out: switch_ends(out, "h100-02", bad=("mlx5_4", 55))},
         parts=["h100-02 switch LID 202 port 2 (the switch end of mlx5_4)"])

# Raw BER high with zero symbol errors (NDR counts symbol errors after FEC): h100-03 mlx5_10's
# link runs at a raw BER of 4E-5 (above 1e-6), the effective BER and the symbol errors are 0.
scenario("ib-raw-ber-high", "h100-03 mlx5_10: raw (pre-FEC) BER 4E-5 with zero symbol errors and a clean effective BER (a link near failure, hidden by FEC)",
         [("health: ib physical layer [h100-03]", ["h100-03 mlx5_10: raw (pre-FEC) BER 0.00004 above 0.000001", "symbol errors 0", "module NVIDIA MMA4Z00-NS400 serial MT2302FT00006"])],
         {"h100-03": lambda out: cmd(out, "mlxlink -d mlx5_10 -m -c -e", mlxlink_text("h100-03", "mlx5_10", raw="4E-5"), ms=900)},
         parts=["the cable or module NVIDIA MMA4Z00-NS400 serial MT2302FT00006 of h100-03 mlx5_10"])

# One lane's received light below the module's own low (alarm) threshold: h100-02 mlx5_6's
# lane 2 reads -11.42 dBm where the transceiver's range is -9.508..6.999 dBm (a dirty fibre end
# or a failing far-end laser on that lane); the link is still Active 4X NDR and its BER clean.
scenario("ib-rx-power-low", "h100-02 mlx5_6: lane 2 of its NVIDIA MMA4Z00-NS400 transceiver receives -11.42 dBm, below the module's low alarm threshold -9.508 dBm; the link Active, the BER clean",
         [("health: ib physical layer [h100-02]", ["h100-02 mlx5_6 port 1: module NVIDIA MMA4Z00-NS400 serial MT2301FT00004 lane 2: rx power -11.42 dBm below the module's low alarm threshold -9.508 dBm", "clean both fibre end faces", "look at the far end too (switch \"MQM9790 Mellanox Technologies\" LID 204 port 2"])],
         {"h100-02": lambda out: mlxlink_answers(out, "h100-02", rx={"mlx5_6": "1.9,2.0,-11.42,2.1"})},
         parts=["the cable or module NVIDIA MMA4Z00-NS400 serial MT2301FT00004 of h100-02 mlx5_6"])
# Healthy variants: copper cables carry no light (h100-03 NVIDIA passive DACs with diagnostics:
# `0,0,0,0 [0..0]`; h100-04 without: N/A), not judged; optics near but inside their thresholds
# (h100-02: lanes 0.2 dB above the low alarm, one 0.1 dB under the high).
scenario("ib-healthy-dac-no-rx-power", "healthy: h100-03's HCAs cabled with passive copper OSFP DACs that read 0,0,0,0 [0..0], h100-04's with DACs without diagnostics (N/A): rx power not judged",
         [], {"h100-03": lambda out: mlxlink_answers(out, "h100-03", kind={ca: "dac" for ca in HCAS}),
              "h100-04": lambda out: mlxlink_answers(out, "h100-04", kind={ca: "dac-na" for ca in HCAS})},
         healthy=True, runs=[("fabric_health.rhai", [])])
# Healthy variant: mlxlink could not read h100-04 mlx5_9's eye and says so in its `Errors`
# section (the real capture's first words; the exception text synthesised), exiting 1 after
# printing everything else: the BER and the module are still judged, the error logged.
def eye_error(out):
    t = mlxlink_text("h100-04", "mlx5_9") + "\nErrors\n------\nShowing Eye via SLRG raised the following exception: Failed to send access register\n"
    out += ["[[command]]", 'command = "mlxlink -d mlx5_9 -m -c -e"', f"stdout = {q(t)}", 'stderr = ""', "exit_code = 1", "duration_ms = 900", ""]
scenario("ib-healthy-mlxlink-eye-error", "healthy: mlxlink could not read h100-04 mlx5_9's eye (its Errors section, exit 1) but printed the counters and the module: judged, the error logged",
         [], {"h100-04": eye_error}, healthy=True, runs=[("fabric_health.rhai", [])])
scenario("ib-healthy-optics-near-thresholds", "healthy: h100-02's transceivers receive -9.3 dBm on every lane (0.2 dB inside the low alarm -9.508) and mlx5_0's lane 3 6.9 dBm (inside the high 6.999)",
         [], {"h100-02": lambda out: mlxlink_answers(out, "h100-02", rx={ca: ("-9.3,-9.3,-9.3,6.9" if ca == "mlx5_0" else "-9.3,-9.3,-9.3,-9.3") for ca in HCAS})},
         healthy=True, runs=[("fabric_health.rhai", [])])

# The subnet's counters under load (ibqueryerrors before and after the baseline's traffic): the
# rail-4 leaf's (LID 203) uplink port 35 counts 118 symbol errors and 2 link error recoveries
# during the load; every HCA end is clean (a leaf-spine cable no HCA counter sees).
def fabric_errors_after(out, errors, code):
    out += ["# after the load: the leaf uplink's counters grew", "[[command]]", 'command = "ibqueryerrors"', 'after = "ib_write_bw"',
            f"stdout = {q(ibqueryerrors_text(errors))}", 'stderr = ""', f"exit_code = {code}", "duration_ms = 1500", ""]
scenario("ib-uplink-errors-under-load", "the rail-4 leaf's (LID 203) uplink port 35 counts 118 symbol errors and 2 link error recoveries under load (ibqueryerrors); every HCA end clean",
         [("fabric_baseline.rhai", [], "ib: fabric error counters not grown under load",
           ["switch 0xfc6a1c0300e40300 \"MQM9790 Mellanox Technologies\" port 35: SymbolErrorCounter grew by +118 (0 -> 118) (its cable's other end: LID 300 port 8", "LinkErrorRecoveryCounter grew by +2"])],
         {"h100-01": lambda out: fabric_errors_after(out, [(203, 35, {"SymbolErrorCounter": 118, "LinkErrorRecoveryCounter": 2})], 1)},
         parts=["the cable at switch 0xfc6a1c0300e40300 \"MQM9790 Mellanox Technologies\" port 35 <-> LID 300 port 8"])
# Healthy variant: a spine port with 3 link-downed events from a cable replaced before the
# run, the same before and after the load: standing, not grown.
def standing(out):
    e = [(300, 9, {"LinkDownedCounter": 3})]
    cmd(out, "ibqueryerrors", ibqueryerrors_text(e), ms=1500, note="a standing counter: 3 link-downed events on spine 300 port 9 from before the run")
scenario("ib-healthy-standing-fabric-errors", "healthy: spine LID 300 port 9 shows 3 link-downed events from a cable replaced before the run, unchanged under the load",
         [], {"h100-01": standing}, healthy=True, runs=[("fabric_baseline.rhai", ["--filter", "ib: fabric error counters"])])

# ---- the control plane (issue 51 item 3) ------------------------------------------------------
# ibdiagnet warnings a site fails on (--set ibdiagnet_fail, default Links Check, Speed / Width,
# Subnet Manager, Partition Keys): 2 warnings in Partition Keys (a port not a full member of the
# compute partition, as ibdiagnet's pkey stage reports it) fail; 3 in Discovery are logged.
scenario("ib-ibdiagnet-pkey-warnings", "ibdiagnet (--set ibdiagnet=true) warns twice in its Partition Keys stage (and 3 times in Discovery): the default ibdiagnet_fail stages fail on warnings",
         [("fabric_health.rhai", ["--set", "ibdiagnet=true"], "health: ibdiagnet", ["warns in stages that fail", "Partition Keys 2 warning(s)"])],
         {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text((("Discovery", 3, 0), ("Lids Check", 0, 0), ("Links Check", 0, 0), ("Subnet Manager", 0, 0), ("Port Counters", 0, 0), ("Nodes Information", 0, 0), ("Speed / Width checks", 0, 0), ("Partition Keys", 2, 0), ("Alias GUIDs", 0, 0), ("Virtualization", 0, 0), ("Routing", 0, 0))), ms=95000)},
         parts=["the subnet as ibdiagnet saw it from h100-01", "Partition Keys 2 warning(s)"])
SM_H = "health: ib subnet manager"
SITE_SM = ["--set", f"ib_sm={SM_GUID}", "--set", f"ib_sm_standby={SM_STANDBY}"]
# A stray opensm on a compute node: h100-03's mlx5_0 port carries the IsSM capability bit (an
# opensm started there, in standby behind the UFM master); sminfo still names the UFM master.
scenario("ib-stray-sm", "a stray opensm on h100-03: its mlx5_0 port has the IsSM capability bit (ibstat capability mask 0xa651e84a); the master is still the site's UFM SM",
         [("fabric_health.rhai", SITE_SM, SM_H, ["h100-03 mlx5_0/1 (port GUID 0xa088c203000200b8", "runs a subnet manager", "a stray opensm"])],
         {"h100-03": lambda out: cmd(out, "ibstat", ibstat("h100-03", {"mlx5_0": {"cap": "0xa651e84a"}}), ms=40)},
         parts=["a stray subnet manager on h100-03 mlx5_0"])
# No standby: the site names its standby SM (--set ib_sm_standby), which does not answer.
scenario("ib-no-standby-sm", "the site's standby SM (0xb8cef60300aa0002) does not answer sminfo -G: a master failure would leave the subnet unmanaged",
         [("fabric_health.rhai", SITE_SM, SM_H, ["no standby SM at 0xb8cef60300aa0002", "sminfo -G 0xb8cef60300aa0002 from h100-01 failed (exit 255"])],
         {"h100-01": lambda out: out.extend(["[[command]]", f"command = {q('sminfo -G ' + SM_STANDBY)}", 'stdout = ""',
                                             f"stderr = {q('ibwarn: [40311] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0)' + chr(10) + 'sminfo: iberror: failed: query' + chr(10))}",
                                             "exit_code = 255", "duration_ms = 4000", ""])},
         parts=["the standby subnet manager 0xb8cef60300aa0002"])
# A limited P_Key: h100-02's mlx5_5 is a limited member (0x7fff) of the default partition (the
# SM's partitions.conf lists it without =full): it reaches full members only.
scenario("ib-limited-pkey", "h100-02 mlx5_5 is a limited member (P_Key 0x7fff) of the compute partition: it reaches only full members",
         [("health: ib partition [h100-02]", ["h100-02 mlx5_5/1: P_Key 0x7fff (index 0) is a LIMITED member of partition 0x7fff"])],
         {"h100-02": lambda out: cmd(out, PKEYS_CMD, pkeys({"mlx5_5": "0x7fff"}), ms=10)},
         parts=["the partition membership (P_Key) of h100-02's HCA ports"])
# IB MTU 2048 fabric-wide: every port of every node at 2048 (the SM's partition MTU).
scenario("ib-mtu-2048", "every IB port of every node runs IB MTU 2048 (the subnet manager's partition MTU), 4096 expected",
         [("health: ib mtu", [f"every one of the {8 * len(NODES)} active IB ports runs IB MTU 2048", "the subnet manager's setting"])],
         {n: (lambda out, n=n: cmd(out, "ibv_devinfo", ibv_devinfo(n, 2048), ms=30)) for n in NODES},
         parts=["the subnet manager's MTU: every IB port at 2048"])
# Healthy variant: a site that runs IB MTU 2048 by choice says so (--set ib_mtu=2048).
scenario("ib-healthy-mtu-2048-by-site", "healthy: every port at IB MTU 2048 where the site chose 2048 (--set ib_mtu=2048)",
         [], {n: (lambda out, n=n: cmd(out, "ibv_devinfo", ibv_devinfo(n, 2048), ms=30)) for n in NODES},
         healthy=True, runs=[("fabric_health.rhai", ["--set", "ib_mtu=2048"])])
scenario("ib-healthy-sm-as-site-says", "healthy: the master and standby SMs the site names (--set ib_sm, ib_sm_standby), no SM on a node",
         [], {}, healthy=True, runs=[("fabric_health.rhai", SITE_SM)])

# ---- traffic across the spine (issue 51 item 4) -----------------------------------------------
# The baseline's cross-rail test (every HCA at once, rail k to the peer's rail k+1, half the
# nodes against the other half). h100-01's mlx5_4 (rail 3, leaf LID 202) writing to h100-03's
# mlx5_5 (rail 4, leaf LID 203) reaches 183.6 Gb/s: its path goes up leaf 202's uplink port 34
# to spine LID 301. Every cable is Active 4X NDR in iblinkinfo and every flow that stays on a
# leaf is at line rate: only traffic over that uplink shows it (a cable the switches keep
# retrying, or a spine port that does not forward at rate).
SPINE = ["--filter", "rdma: across the spine"]
scenario("ib-spine-path-slow", "h100-01 mlx5_4 -> h100-03 mlx5_5 (rail 3 to rail 4, up leaf LID 202's uplink port 34 to spine LID 301) writes 183.6 Gb/s; every link Active 4X NDR, every leaf-local flow at rate",
         [("fabric_baseline.rhai", SPINE, "rdma: across the spine [h100-01 -> h100-03]",
           ["h100-01 mlx5_4 -> h100-03 mlx5_5 183.6 Gbit/s", "1 of 8 flows below 90% of 400 Gb/s",
            "switch \"MQM9790 Mellanox Technologies\" LID 202 in 1 out 34 -> switch \"MQM9790 Mellanox Technologies\" LID 301 in"])],
         {"h100-01": lambda out: (spine_answers(out, "h100-01", slow={("h100-03", "mlx5_4"): 183.6}),
                                  cmd(out, "ibtracert 12 29", ibtracert_text("h100-01", "mlx5_4", "h100-03", "mlx5_5"), ms=40,
                                      note="ibtracert from h100-01 mlx5_4 (LID 12) to h100-03 mlx5_5 (LID 29): leaf 202 -> spine 301 -> leaf 203"))},
         parts=["the path of h100-01 mlx5_4 -> h100-03 mlx5_5 across the spine", "LID 202 in 1 out 34", "LID 301"])
# Two slow flows whose paths share links: h100-01 mlx5_4 -> h100-03 mlx5_5 and h100-02 mlx5_4 ->
# h100-04 mlx5_5 both leave leaf 202 by uplink port 34 to spine 301 and come down to leaf 203 by
# the same spine port (ibtracert of each); the diagnosis puts both reds on the links they share,
# once, not one path per red (every other flow at rate).
scenario("ib-spine-link-shared", "two cross-spine flows from two nodes (h100-01 and h100-02 mlx5_4 to mlx5_5 of h100-03 and h100-04) write 171-176 Gb/s; both traces go up leaf LID 202's port 34 to spine LID 301 and down to leaf LID 203: the links they share are the part",
         [("fabric_baseline.rhai", SPINE, "rdma: across the spine [h100-01 -> h100-03]",
           ["h100-01 mlx5_4 -> h100-03 mlx5_5 176.2 Gbit/s", "1 of 8 flows below 90% of 400 Gb/s"]),
          ("fabric_baseline.rhai", SPINE, "rdma: across the spine [h100-02 -> h100-04]",
           ["h100-02 mlx5_4 -> h100-04 mlx5_5 171.9 Gbit/s", "1 of 8 flows below 90% of 400 Gb/s"])],
         {"h100-01": lambda out: (spine_answers(out, "h100-01", slow={("h100-03", "mlx5_4"): 176.2}),
                                  cmd(out, "ibtracert 12 29", ibtracert_text("h100-01", "mlx5_4", "h100-03", "mlx5_5"), ms=40,
                                      note="ibtracert from h100-01 mlx5_4 (LID 12) to h100-03 mlx5_5 (LID 29): leaf 202 port 34 -> spine 301 -> leaf 203")),
          "h100-02": lambda out: (spine_answers(out, "h100-02", slow={("h100-04", "mlx5_4"): 171.9}),
                                  cmd(out, "ibtracert 20 37", ibtracert_text("h100-02", "mlx5_4", "h100-04", "mlx5_5"), ms=40,
                                      note="ibtracert from h100-02 mlx5_4 (LID 20) to h100-04 mlx5_5 (LID 37): leaf 202 port 34 -> spine 301 -> leaf 203"))},
         parts=["switch LID 202 (0xfc6a1c0300e40200) port 34", "switch LID 301"])
# Pairs from the topology: a fabric of two switches by node where the inventory's halves share
# them (h100-01 and h100-03 on leaf LID 200, h100-02 and h100-04 on LID 201, each node's eight
# HCAs on its switch's ports). The inventory's bisection pairs h100-01 with h100-03 and h100-02
# with h100-04: every flow stays on its switch, and a spine path at half rate (the flows on the
# even rails between the switches, routed over spine LID 300) is never crossed (--set
# spine_pairs=inventory: green). The topology puts h100-01/03 and h100-02/04 in two groups and
# pairs across them: h100-01 <-> h100-02, h100-03 <-> h100-04, whose even-rail flows fail.
def by_node(k, i):
    return (k % 2, 8 * (k // 2) + i + 1)
def ibtracert_placed(src, sca, dst, dca, place, spine=0):
    """`ibtracert SLID DLID` from `src`'s HCA `sca` to `dst`'s `dca` in the fabric laid out by
    `place` (as iblinkinfo(place=...)): up the source leaf's first uplink to `spine`, down the
    destination leaf's (synthesised, in the format of the real captures, as ibtracert_text)."""
    k, i, j, m = NODES.index(src), HCAS.index(sca), NODES.index(dst), HCAS.index(dca)
    ports = {}
    for a in range(len(NODES)):
        for b in range(len(HCAS)):
            lf, p = place(a, b)
            ports.setdefault(lf, []).append(p)
    ups = uplinks(ports)
    (sl_leaf, sl_port), (dl_leaf, dl_port) = place(k, i), place(j, m)
    up = lambda leaf: next(((p, v) for (lf, p), v in sorted(ups.items()) if lf == leaf and v[0] == spine))
    (slp, (_, ssp)), (dlp, (_, dsp)) = up(sl_leaf), up(dl_leaf)
    g = lambda n, c: "0x" + guid(n, HCAS.index(c)).replace(":", "")
    sl, dl = 10 + 8 * k + i, 10 + 8 * j + m
    sw = '"MQM9790 Mellanox Technologies"'
    return (f'From ca {{{g(src, sca)}}} portnum 1 lid {sl}-{sl} "{src} {sca}"\n'
            f'[1] -> switch port {{{leaf_guid(sl_leaf)}}}[{sl_port}] lid {200 + sl_leaf}-{200 + sl_leaf} {sw}\n'
            f'[{slp}] -> switch port {{{spine_guid(spine)}}}[{ssp}] lid {300 + spine}-{300 + spine} {sw}\n'
            f'[{dsp}] -> switch port {{{leaf_guid(dl_leaf)}}}[{dlp}] lid {200 + dl_leaf}-{200 + dl_leaf} {sw}\n'
            f'[{dl_port}] -> ca port {{{g(dst, dca)}}}[1] lid {dl}-{dl} "{dst} {dca}"\n'
            f'To ca {{{g(dst, dca)}}} portnum 1 lid {dl}-{dl} "{dst} {dca}"\n')
def spine_by_node(out, node, slow_gbps=None):
    """`node`'s answers on the by-node fabric: its cross-spine flows to the other switch's nodes
    on even rails at `slow_gbps` (None: at rate), with ibtracert of each slow one."""
    k = NODES.index(node)
    others = [p for j, p in enumerate(NODES) if j % 2 != k % 2]
    slow = {(p, HCAS[i]): slow_gbps for p in others for i in range(0, len(HCAS), 2)} if slow_gbps else {}
    spine_answers(out, node, slow=slow)
    for p, ca in slow:
        r = HCAS[(HCAS.index(ca) + SHIFT) % len(HCAS)]
        sl, dl = 10 + 8 * k + HCAS.index(ca), 10 + 8 * NODES.index(p) + HCAS.index(r)
        cmd(out, f"ibtracert {sl} {dl}", ibtracert_placed(node, ca, p, r, by_node), ms=40)
    if node == NODES[0]:
        cmd(out, "iblinkinfo", iblinkinfo(place=by_node), ms=900, note="two switches by node: h100-01/03 on LID 200, h100-02/04 on LID 201")
if N == 4:
    BY_NODE_PAIRS = ["rdma: across the spine [h100-01 -> h100-02]", "rdma: across the spine [h100-02 -> h100-01]",
                     "rdma: across the spine [h100-03 -> h100-04]", "rdma: across the spine [h100-04 -> h100-03]"]
    scenario("ib-spine-pairs-from-topology", "h100-01/03 share leaf LID 200 and h100-02/04 LID 201 (switches by node); the flows between the switches on even rails (over spine LID 300) reach 183.6 Gb/s. The inventory's halves (h100-01 with h100-03) never leave their switch; the pairs from the topology cross it",
             [("fabric_baseline.rhai", SPINE, t, [f"{t[24:-1].split(' -> ')[0]} mlx5_0 -> {t[24:-1].split(' -> ')[1]} mlx5_3 183.6 Gbit/s", "LID 300"]) for t in BY_NODE_PAIRS],
             with_ends({n: (lambda out, n=n: spine_by_node(out, n, 183.6)) for n in NODES}, by_node),
             parts=["one of the links switch LID 200 (0xfc6a1c0300e40000) port 33", "switch LID 300"])
    # Healthy variant: the same fabric at rate: the pairs across the switches pass.
    scenario("ib-healthy-spine-pairs-by-node-leaves", "healthy: h100-01/03 on one switch, h100-02/04 on another; the pairs from the topology cross between them, every flow at rate",
             [], with_ends({n: (lambda out, n=n: spine_by_node(out, n)) for n in NODES}, by_node),
             healthy=True, runs=[("fabric_baseline.rhai", SPINE)])

# Healthy variant: a site whose spines are oversubscribed 2:1 by design (half as many uplinks
# as node cables) sees every cross-spine flow at 196.4 Gb/s when every HCA sends at once, and
# says so (--set spine_pct=45).
scenario("ib-healthy-spine-oversubscribed-by-site", "healthy: spines oversubscribed 2:1 by design: every cross-spine flow at 196.4 Gb/s with all HCAs at once, the site's line 45 % (--set spine_pct=45)",
         [], {n: (lambda out, n=n: spine_answers(out, n, slow={(p, c): 196.4 for p in NODES for c in HCAS})) for n in NODES},
         healthy=True, runs=[("fabric_baseline.rhai", SPINE + ["--set", "spine_pct=45"])])

# The other collectives: alltoall (every GPU to every other, across the spines) peaks at 14.8
# GB/s while all_reduce, all_gather, reduce_scatter and sendrecv pass (rings and trees keep to
# the rails; an all-to-all loads every leaf-spine path at once: static routes that stack flows
# on a few uplinks, adaptive routing off, show here first).
scenario("ib-alltoall-low", "alltoall over the 4 nodes peaks at 14.79 GB/s busbw (line 25: half of one NDR port per rank) while all_reduce, all_gather, reduce_scatter and sendrecv pass",
         [("fabric_baseline.rhai", NCCL, "nccl: alltoall 4 nodes", ["nccl alltoall best bus bandwidth over 32 ranks, 8 per node (the line: 50 % of one port (50.0 GB/s)", "expected >= 25, actual 14.79"])],
         {"h100-01": lambda out: coll_answers(out, {"alltoall": 14.82})},
         parts=["the path of NCCL's traffic between h100-01, h100-02, h100-03, h100-04"])
# Healthy variant: a site whose spines are oversubscribed 2:1 by design sees alltoall at 21.3
# GB/s and gives its line (--set nccl_collective_min_gbs=18).
scenario("ib-healthy-alltoall-by-site-line", "healthy: alltoall at 21.3 GB/s on spines oversubscribed 2:1 by design, the site's line 18 GB/s (--set nccl_collective_min_gbs=18)",
         [], {"h100-01": lambda out: coll_answers(out, {"alltoall": 21.35})},
         healthy=True, runs=[("fabric_baseline.rhai", NCCL + ["--set", "nccl_collective_min_gbs=18"])])

# ---- adaptive routing and SHARP as the site expects (issue 51 item 3), from ibdiagnet ---------
# AR off on the two spines (replaced, their AR settings not restored): "enabled on 8 switches"
# of 10; every link and stage clean.
IBD = ["--set", "ibdiagnet=true"]
scenario("ib-ar-off", "adaptive routing is off on 2 of the 10 switches (ibdiagnet: \"Adaptive Routing is enabled on 8 switches\"); every stage clean",
         [("fabric_health.rhai", IBD, "health: ibdiagnet", ["adaptive routing is off on 2 of 10 switches", "Adaptive Routing is enabled on 8 of its 10 switches", "ibdiagnet2.far"])],
         {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ar=8), ms=95000)},
         parts=["the subnet's routing as ibdiagnet saw it from h100-01", "Adaptive Routing is enabled on 8 of its 10 switches"])
# Healthy variant: a site that routes statically by choice (no AR line in ibdiagnet's summary)
# says so (--set ib_adaptive_routing=off).
scenario("ib-healthy-ar-not-used-by-site", "healthy: no switch runs adaptive routing (no AR line in ibdiagnet's summary) and the site routes statically by choice (--set ib_adaptive_routing=off)",
         [], {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ar=0), ms=95000)},
         healthy=True, runs=[("fabric_health.rhai", IBD + ["--set", "ib_adaptive_routing=off"])])
# Healthy variant under the default (consistent): an ibdiagnet whose summary has no AR line is
# not judged, so a fabric routed statically passes without the site saying anything.
scenario("ib-healthy-no-ar-line-default", "healthy: ibdiagnet's summary has no adaptive-routing line and the site says nothing (default ib_adaptive_routing=consistent: not judged)",
         [], {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ar=0), ms=95000)},
         healthy=True, runs=[("fabric_health.rhai", IBD)])
# A SuperPOD-style site that requires AR everywhere (--set ib_adaptive_routing=on): a summary
# without the AR line does not confirm it.
scenario("ib-ar-required-not-confirmed", "with --set ib_adaptive_routing=on: ibdiagnet's summary has no adaptive-routing line, so AR on the 10 switches is not confirmed",
         [("fabric_health.rhai", IBD + ["--set", "ib_adaptive_routing=on"], "health: ibdiagnet", ["adaptive routing is off on 10 of 10 switches", "no \"Adaptive Routing is enabled on N switches\" line"])],
         {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ar=0), ms=95000)},
         parts=["the subnet's routing as ibdiagnet saw it from h100-01"])
# SHARP expected on every switch (--set ib_sharp=on): 8 aggregation nodes for 10 switches.
scenario("ib-sharp-missing", "with --set ib_sharp=on: ibdiagnet counts 8 SHARP aggregation nodes for 10 switches (two switches without one)",
         [("fabric_health.rhai", IBD + ["--set", "ib_sharp=on"], "health: ibdiagnet", ["SHARP: 8 aggregation node(s) for 10 switches"])],
         {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ans=8), ms=95000)},
         parts=["the subnet's routing as ibdiagnet saw it from h100-01", "8 SHARP aggregation node(s)"])
scenario("ib-healthy-sharp-everywhere", "healthy: a SHARP aggregation node on each of the 10 switches, --set ib_sharp=on",
         [], {"h100-01": lambda out: cmd(out, "ibdiagnet", ibdiagnet_text(ans=10), ms=95000)},
         healthy=True, runs=[("fabric_health.rhai", IBD + ["--set", "ib_sharp=on"])])

# ---- the GPUs' PCIe error counters (issue 51 item 5): AER in sysfs, nvidia-smi's replays ----
def port_above(gpu):
    """The address of the switch port above a GPU (pcie_paths' numbering)."""
    g, _, _ = pcie_paths()
    return g[GPU_BDF.index(gpu)].rsplit("/", 2)[1]
GPU_ERR = "health: gpu pcie errors not grown under load"
# h100-03 GPU 5 receives bad TLPs during the load: its own AER counts (RxErr, BadTLP) grow by 64
scenario("ib-gpu-pcie-errors-growing", "h100-03 GPU 5 (0000:c3:00.0) counts 41 RxErr and 23 BadTLP (correctable AER) during the load: its PCIe link to the switch is marginal",
         [("fabric_baseline.rhai", [], f"{GPU_ERR} [h100-03]",
           [f"h100-03 GPU 0000:c3:00.0 (NVIDIA H100 80GB HBM3) on its link to the switch port {port_above('0000:c3:00.0')} above GPU 0000:c3:00.0: correctable PCIe errors grew by +64 (TOTAL_ERR 0 -> 64: BadTLP +23, RxErr +41) above 8"])],
         {"h100-03": lambda out: aer_answers(out, {"0000:c3:00.0": {"correctable": {"RxErr": 41, "BadTLP": 23}}}, after="ib_write_bw",
                                             note="after the load: GPU 0000:c3:00.0's correctable AER counts grew (synthesised)")},
         parts=["h100-03 GPU 0000:c3:00.0 (NVIDIA H100 80GB HBM3)"])
# Unsupported Requests standing since boot are a warning (healthy variant below), but ones that
# grow under the load are not boot-time probing: the port above h100-01 GPU 2 shows 4 before the
# load and 31 after it
scenario("ib-gpu-pcie-unsupported-requests-growing", "the switch port above h100-01 GPU 2 (0000:52:00.0) shows 4 Unsupported Requests since boot and 31 after the load: a warning before, a red under load",
         [("fabric_baseline.rhai", [], f"{GPU_ERR} [h100-01]",
           [f"the switch port {port_above('0000:52:00.0')} above GPU 0000:52:00.0 on its link to GPU 0000:52:00.0", "uncorrectable non-fatal PCIe errors grew by +27", "UnsupReq +27"])],
         {"h100-01": lambda out: (aer_answers(out, {port_above("0000:52:00.0"): {"nonfatal": {"UnsupReq": 4}}}, note="before the load: 4 Unsupported Requests since boot at the port above GPU 0000:52:00.0 (synthesised)"),
                                  aer_answers(out, {port_above("0000:52:00.0"): {"nonfatal": {"UnsupReq": 31}}}, after="ib_write_bw",
                                              note="after the load: 31 Unsupported Requests at the port above GPU 0000:52:00.0 (synthesised)"))},
         parts=[f"the switch port {port_above('0000:52:00.0')} above GPU 0000:52:00.0"])
# h100-02: the switch port above GPU 3 counts the errors (it receives the GPU's bad TLPs); the
# GPU's own AER counters stay 0, its replay counter grows (it sends those TLPs again)
P3 = port_above("0000:61:00.0")
def port_counts(out):
    aer_answers(out, {P3: {"correctable": {"RxErr": 18, "BadDLLP": 9}}}, after="ib_write_bw",
                note=f"after the load: the switch port {P3} above GPU 0000:61:00.0 counted errors, the GPU none (synthesised)")
    smi_q_answers(out, {"0000:61:00.0": (212, 0)}, after="ib_write_bw", note="after the load: GPU 0000:61:00.0 replayed 212 TLPs")
scenario("ib-gpu-switch-port-errors", f"h100-02: the switch port {P3} above GPU 3 (0000:61:00.0) counts 27 correctable errors during the load while the GPU's own AER counts stay 0; the GPU's replay counter grows by 212",
         [("fabric_baseline.rhai", [], f"{GPU_ERR} [h100-02]",
           [f"h100-02 the switch port {P3} above GPU 0000:61:00.0 on its link to GPU 0000:61:00.0 (NVIDIA H100 80GB HBM3): correctable PCIe errors grew by +27 (TOTAL_ERR 0 -> 27: BadDLLP +9, RxErr +18)",
            "h100-02 GPU 0000:61:00.0 (NVIDIA H100 80GB HBM3): its PCIe replay counter (nvidia-smi Replays Since Reset) grew by +212 (0 -> 212)"])],
         {"h100-02": port_counts}, parts=[f"h100-02 the switch port {P3} above GPU 0000:61:00.0"])
# h100-04 GPU 0: two uncorrectable non-fatal completion timeouts since boot (every read)
NF = ["h100-04 GPU 0000:1b:00.0 (NVIDIA H100 80GB HBM3) counted 2 uncorrectable non-fatal PCIe error(s) since boot (aer_dev_nonfatal: CmpltTO 2)",
      f"its link to the switch port {port_above('0000:1b:00.0')} above GPU 0000:1b:00.0", "not noise"]
scenario("ib-gpu-pcie-nonfatal", "h100-04 GPU 0 (0000:1b:00.0) shows 2 uncorrectable non-fatal AER errors (completion timeouts) since boot",
         [("health: gpu pcie errors [h100-04]", NF), ("fabric_baseline.rhai", [], "health: gpu pcie errors before load [h100-04]", NF)],
         {"h100-04": lambda out: aer_answers(out, {"0000:1b:00.0": {"nonfatal": {"CmpltTO": 2}}}, note="GPU 0000:1b:00.0: 2 completion timeouts (non-fatal) since boot (synthesised)")},
         parts=["h100-04 GPU 0000:1b:00.0 (NVIDIA H100 80GB HBM3)", "CmpltTO 2"])
GPU_RUNS = [("fabric_health.rhai", ["--filter", "gpu pcie errors"]), ("fabric_baseline.rhai", ["--filter", "gpu pcie errors"])]
# Healthy: Unsupported Requests alone since boot on the port above a GPU (firmware and the
# kernel's config-space probing cause them on healthy hosts): a warning, unchanged under load
scenario("ib-healthy-gpu-pcie-unsupported-requests-at-boot", "healthy: the switch port above h100-03 GPU 0 shows 4 non-fatal Unsupported Requests since boot and nothing else, unchanged under the load: a warning, not a red",
         [], {"h100-03": lambda out: aer_answers(out, {port_above("0000:1b:00.0"): {"nonfatal": {"UnsupReq": 4}}}, note="the port above GPU 0000:1b:00.0: 4 Unsupported Requests since boot, the same in every read (synthesised)")},
         healthy=True, runs=GPU_RUNS)
# Healthy: a long uptime's few correctable errors (and the GPU's replays), unchanged under load
def standing_pcie(out):
    aer_answers(out, {"0000:43:00.0": {"correctable": {"RxErr": 3}}, port_above("0000:43:00.0"): {"correctable": {"BadDLLP": 1, "Timeout": 1}}},
                note="a long uptime: 3 RxErr on GPU 0000:43:00.0 and 2 errors at the port above it, the same in every read (synthesised)")
    smi_q_answers(out, {"0000:43:00.0": (5, 0)}, note="GPU 0000:43:00.0: 5 replays since its reset, the same in every read")
scenario("ib-healthy-gpu-pcie-errors-standing", "healthy: h100-02 GPU 1 and the port above it show a few correctable AER errors and 5 replays from a long uptime, unchanged under the load",
         [], {"h100-02": standing_pcie}, healthy=True, runs=GPU_RUNS)
# A burst of 3 correctable errors under the load on h100-04 GPU 7 (a retrain as the link
# leaves a low-power state): within the default budget (8), green; a site that tolerates none
# (--set gpu_pcie_error_growth=0) fails on the same answers
def few_under_load(out):
    aer_answers(out, {"0000:df:00.0": {"correctable": {"RxErr": 2, "BadDLLP": 1}}}, after="ib_write_bw",
                note="after the load: GPU 0000:df:00.0 counted 3 correctable errors (synthesised)")
scenario("ib-healthy-gpu-pcie-few-under-load", "healthy: h100-04 GPU 7 (0000:df:00.0) counts 3 correctable AER errors during the load (RxErr 2, BadDLLP 1), within the default gpu_pcie_error_growth of 8",
         [], {"h100-04": few_under_load}, healthy=True, runs=[("fabric_baseline.rhai", ["--filter", "gpu pcie errors"])])
scenario("ib-gpu-pcie-few-under-load-strict-site", "the same 3 correctable errors of h100-04 GPU 7 under the load where the site tolerates none (--set gpu_pcie_error_growth=0)",
         [("fabric_baseline.rhai", ["--set", "gpu_pcie_error_growth=0"], f"{GPU_ERR} [h100-04]",
           [f"h100-04 GPU 0000:df:00.0 (NVIDIA H100 80GB HBM3) on its link to the switch port {port_above('0000:df:00.0')} above GPU 0000:df:00.0: correctable PCIe errors grew by +3 (TOTAL_ERR 0 -> 3: BadDLLP +1, RxErr +2) above 0"])],
         {"h100-04": few_under_load}, parts=["h100-04 GPU 0000:df:00.0 (NVIDIA H100 80GB HBM3)"])
# Healthy: a VM (or AER off in the firmware): no aer_dev_* files, head says so on stderr and
# exits 1, stdout empty (the format of the real VM capture
# tests/fixtures/aer/head-v-aer-dev-stderr-firecracker-vm-h100-no-aer-files.txt); the replay
# counter is still read (a warning, not a red)
def no_aer(out):
    err = "".join(f"head: cannot open '{d}/aer_dev_{s}' for reading: No such file or directory\n" for d in aer_dirs() for s in ["correctable", "nonfatal", "fatal"])
    raw(out, aer_cmd(), "", 1, err)
scenario("ib-healthy-gpu-vm-without-aer", "healthy: h100-03 is a VM without AER statistics in sysfs (no aer_dev_* files): a warning; the GPUs' replay counters are still read",
         [], {"h100-03": no_aer}, healthy=True, runs=GPU_RUNS)
# Without AER the GPU's own replay counter still catches a bad link: h100-03 (no AER files) GPU 6
def no_aer_replays(out):
    no_aer(out)
    smi_q_answers(out, {"0000:d1:00.0": (1450, 0)}, after="ib_write_bw", note="after the load: GPU 0000:d1:00.0 replayed 1450 TLPs")
scenario("ib-gpu-replays-growing-without-aer", "h100-03 has no AER statistics (a VM); its GPU 6 (0000:d1:00.0) replays 1450 TLPs during the load (nvidia-smi's replay counter)",
         [("fabric_baseline.rhai", [], f"{GPU_ERR} [h100-03]",
           ["h100-03 GPU 0000:d1:00.0 (NVIDIA H100 80GB HBM3): its PCIe replay counter (nvidia-smi Replays Since Reset) grew by +1450 (0 -> 1450) above 8"])],
         {"h100-03": no_aer_replays}, parts=["h100-03 GPU 0000:d1:00.0 (NVIDIA H100 80GB HBM3), its PCIe link"])

# ---- the rack of eight (FCSIM_NODES=8): the fleet view at rack size --------------------------
RACK_RDMA = ["--filter", "rdma: write"]
scenario("rack-node-slow-every-rail", "rack of 8: h100-06 writes and is written to at 331.6 Gb/s on all eight HCAs; every other pair 392.18: the node, not 112 rails",
         [("fabric_baseline.rhai", RACK_RDMA, f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "331.6"])
          for a, b in [("h100-06", p) for p in NODES if p != "h100-06"] + [(p, "h100-06") for p in NODES if p != "h100-06"]],
         slow_node(331.6, "h100-06"), parts=["h100-06 as a whole"])
scenario("rack-hca-slow-both-ways", "rack of 8: h100-03 mlx5_6 at 288.4 Gb/s to and from every peer: that HCA, not the node",
         [("fabric_baseline.rhai", RACK_RDMA, f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "mlx5_6 288.4"])
          for a, b in [("h100-03", p) for p in NODES if p != "h100-03"] + [(p, "h100-03") for p in NODES if p != "h100-03"]],
         slow_hca("h100-03", "mlx5_6", 288.4), parts=["h100-03 ibp154s0 (mlx5_6)", "its own cable"])
scenario("rack-rail-crossed", "rack of 8: h100-07's mlx5_3 and mlx5_4 cables swapped at the leaves",
         [("fabric_baseline.rhai", ["--filter", "ib: fabric links"], "ib: fabric links", ["h100-07 mlx5_3 (rail 2 of 8) lands on switch LID 202 port 7, the leaf of rail 3"])],
         with_ends({"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place=lambda k, i: crossed(k, i, "h100-07")), ms=900)}, lambda k, i: crossed(k, i, "h100-07")),
         parts=["the cables of h100-07 mlx5_3, mlx5_4 at the leaf switches"])
scenario("rack-healthy-noisy-pairs", "rack of 8, healthy: every pair's RDMA write within 1.5 % of the others",
         [], {n: (lambda out, n=n: noisy(out, n)) for n in NODES}, healthy=True, runs=[("fabric_baseline.rhai", ["--filter", "rdma: write"])])
# The rack's fabric (issue 51 item 1): 8 leaves of 8 node cables and 8 uplinks each (ports
# 33-40) over 2 spines; the rail-7 leaf (LID 206) lost its uplink port 40.
scenario("rack-uplink-missing", "rack of 8: the rail-7 leaf (LID 206) lost an uplink: its port 40 to spine LID 301 is Down at both ends (7 uplinks where the other leaves have 8)",
         [("fabric_baseline.rhai", [], "ib: fabric links", ["leaf switch 0xfc6a1c0300e40600 \"MQM9790 Mellanox Technologies\" LID 206 has 7 uplinks to the spines where 7 of the 8 leaves have 8", "port(s) 40 are uplinks"])],
         {"h100-01": lambda out: cmd(out, "iblinkinfo", iblinkinfo(place_up=lambda lf, lp, to: None if (lf, lp) == (6, 40) else to), ms=900)},
         parts=["an uplink of leaf switch 0xfc6a1c0300e40600"])
scenario("rack-healthy-plan-matches", "rack of 8, healthy: every cable where the cabling plan puts it",
         [], {}, healthy=True, runs=[("fabric_baseline.rhai", PLAN_ARGS + ["--filter", "ib: fabric links"])])
