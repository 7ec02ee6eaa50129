# Generates the transcripts of the SIMULATED switched RoCE cluster (examples/sim-switch): N DGX
# Sparks (default 4; users wire 2 to 6) with one QSFP port each cabled to one 200G Ethernet
# switch, the port's two logical rails (enp1s0f1np1 / enP2p1s0f1np1, rocep1s0f1 / roceP2p1s0f1)
# on two rail subnets (192.168.100.0/24 and 192.168.200.0/24), every pair reachable through the
# switch. Run from examples/sim-switch/:   python3 transcripts/generate.py
#   FCSIM_NODES=6 FCSIM_OUT=transcripts-6 python3 transcripts/generate.py   (another size; it
#   needs an inventory of that size, see four-sparks.toml)
# Every answer is the two-Spark simulation's (examples/sim/transcripts: its formats.py and its
# synth/ answers, themselves in the formats of real captures; a few real captures from
# tests/fixtures, copied unchanged into real/) with this node's names, addresses and peers:
# SYNTHESISED, never measured. SOURCES.md says which answer comes from where. The fault
# scenarios are written at the end (scenarios/NAME/).
import json, os, re, shutil, sys
sys.path.insert(0, "../sim/transcripts")
from formats import lspci_text, show_gids_text, rdma_stat_text, show_fec_text  # fabric health answers
from formats import ping_text, ping_all_cmd, ping_all_out  # pings; n.ping_all
from formats import sysfs_command, sysfs_text, gpu_command, gpu_text  # discover, platform detection
from formats import ip_route_json, iperf3_json
from formats import KERNEL_LOG_CMD, kernel_log_text, boot_link_events  # health link flaps (issue 47)
from formats import hca_readlink_cmd, hca_readlink_text, hca_aer_cmd, hca_aer_text  # the HCAs' PCIe errors

N = int(os.environ.get("FCSIM_NODES", "4"))
OUT = os.environ.get("FCSIM_OUT", "transcripts")
NODES = [f"spark-{k:02d}" for k in range(1, N + 1)]
IFACES = ["enp1s0f1np1", "enP2p1s0f1np1"]
DEVS = ["rocep1s0f1", "roceP2p1s0f1"]
BDF = {"enp1s0f1np1": "0000:01:00.1", "enP2p1s0f1np1": "0002:01:00.1"}
NETDEV = dict(zip(DEVS, IFACES))
SPARK = "../sim/transcripts/"          # the two-Spark simulation: its synthesised answers
FX = "../../tests/fixtures/"           # real captures
HOST = {n: f"10.0.0.{11 + k}" for k, n in enumerate(NODES)}
MGMT_GW = "10.0.0.1"
# per-Spark RDMA write over one rail through the switch: NVIDIA's DGX Spark figure, as the
# two-Spark simulation (~95 Gbit/s per rail, ~190 per port)
RAIL_GBPS = [94.97, 94.91]

def q(s):
    return json.dumps(s)

def fabric_ip(node, rail):
    """Rail 0 on 192.168.100.0/24, rail 1 on 192.168.200.0/24; the node's number + 10 as host part
    (spark-01: .11), as examples/six-sparks-switch.toml."""
    return f"192.168.{100 * (rail + 1)}.{NODES.index(node) + 11}"

def mac(node, iface):
    """A MAC per node and interface: the two-Spark simulation's spark-01 MACs with the node's
    number in the fifth byte (its CX7 functions 4c:bb:47:2d:NN:16/17/1a/1b)."""
    k = NODES.index(node) + 1
    return {"enp1s0f0np0": f"4c:bb:47:2d:{k:02x}:16", "enp1s0f1np1": f"4c:bb:47:2d:{k:02x}:17",
            "enP2p1s0f0np0": f"4c:bb:47:2d:{k:02x}:1a", "enP2p1s0f1np1": f"4c:bb:47:2d:{k:02x}:1b",
            "enP7s7": f"3c:6d:66:01:03:{k:02x}", "wlP9s9": f"a8:3b:76:11:33:{k:02x}"}[iface]

def ip_addr_doc(node, addrs=None):
    """The two-Spark simulation's `ip -j addr` answer of spark-01 (format of the real lab
    captures) with this node's management address, fabric addresses and MACs. `addrs`:
    {iface: [(ip, prefix)]} replacing the fabric addresses of an interface (a fault)."""
    doc = json.load(open(SPARK + "synth/ip-j-addr-spark-01.json"))
    k = NODES.index(node)
    for i in doc:
        if i["ifname"] in ("lo",):
            continue
        i["address"] = mac(node, i["ifname"])
        for a in i["addr_info"]:
            if i["ifname"] == "enP7s7":
                a["local"] = HOST[node]
            elif i["ifname"] == "wlP9s9":
                a["local"] = f"192.168.1.{50 + k}"
            elif i["ifname"] in IFACES:
                a["local"] = fabric_ip(node, IFACES.index(i["ifname"]))
        if addrs and i["ifname"] in addrs:
            i["addr_info"] = [dict(i["addr_info"][0], local=ip, prefixlen=p) for ip, p in addrs[i["ifname"]]]
    return doc

# ---- files shared by every node (replay reads files only inside the transcript directory) ----
def put(rel, text):
    os.makedirs(os.path.dirname(f"{OUT}/{rel}"), exist_ok=True)
    open(f"{OUT}/{rel}", "w").write(text)
    return rel
def real(rel):
    """A REAL capture of tests/fixtures, copied unchanged into real/."""
    return put("real/" + rel, open(FX + rel).read())
def from_sim(rel):
    """A synthesised answer of the two-Spark simulation, copied unchanged into synth/."""
    return put("synth/" + os.path.basename(rel), open(SPARK + rel).read())

def ethtool_text(iface, speed=200000, partner=("100000baseCR4/Full", "200000baseCR4/Full"), advertised=None):
    """The two-Spark simulation's `ethtool IFACE` answer (CX7 at 200G) with the switch port's
    advertisement (ethtool's "Link partner advertised" lines, in the order of the real capture
    the two-Spark scenarios use), `speed` negotiated; `advertised`: this end's advertised modes."""
    t = open(SPARK + f"synth/ethtool-{iface}.txt").read().replace("Speed: 200000Mb/s", f"Speed: {speed}Mb/s")
    pad = " " * 41
    lp = ("        Link partner advertised link modes:  " + f"\n{pad}".join(partner) + "\n"
          "        Link partner advertised pause frame use: Symmetric\n"
          "        Link partner advertised auto-negotiation: Yes\n"
          "        Link partner advertised FEC modes: RS\n")
    anchor = "        Advertised FEC modes: RS\n"
    assert anchor in t
    t = t.replace(anchor, anchor + lp)
    if advertised is not None:
        old = "        Advertised link modes:  100000baseCR4/Full\n                                200000baseCR4/Full\n"
        assert old in t
        t = t.replace(old, "        Advertised link modes:  " + f"\n{' ' * 32}".join(advertised) + "\n")
    return t

def rdma_client_text(node, peer, rail, gbps=None):
    """The two-Spark simulation's synthesised ib_write_bw client answer (format of the real RoCE
    perftest capture) of this rail, the GID lines of this pair's addresses, `gbps` average."""
    gbps = RAIL_GBPS[rail] if gbps is None else gbps
    t = open(SPARK + f"synth/ib_write_bw-client-{DEVS[rail]}.txt").read()
    gid = lambda ip: "00:00:00:00:00:00:00:00:00:00:255:255:" + ip.replace(".", ":")
    lines = t.split("\n")
    g = [i for i, l in enumerate(lines) if l.startswith(" GID:")]
    lines[g[0]] = " GID: " + gid(fabric_ip(node, rail))
    lines[g[1]] = " GID: " + gid(fabric_ip(peer, rail))
    t = "\n".join(lines)
    def row(m):
        mpps = gbps * 1e9 / 8 / 65536 / 1e6
        return f" 65536      {int(int(m.group(1)) * gbps / float(m.group(3))):d}             {gbps * 1.0025:.2f}              {gbps:.2f}              {mpps:.6f}"
    return re.sub(r"^ 65536\s+(\d+)\s+(\S+)\s+(\S+)\s+\S+$", row, t, flags=re.M)

def ib_write_lat_text(dev):
    """As the two-Spark simulation: its synthesised ib_write_lat answer (from the REAL DGX Spark
    capture, RoCE form) of this device."""
    return open(SPARK + f"synth/ib_write_lat-{dev}.txt").read()

NCCL_BIN = "/home/nvidia/nccl-tests/build/all_reduce_perf"
from formats import nccl_scaled  # the two-Spark scenarios' function, one copy

def fabric_ip_two(k):
    """The two-Spark simulation's rail-0 addresses, replaced in its NCCL answer."""
    return ["192.168.100.10", "192.168.100.11"][k]

def nccl_text(group, factor=1.0):
    """The two-Spark simulation's synthesised 2-rank all_reduce_perf answer (format of the real
    nccl-tests 2.19.6 captures) for one rank per Spark on `group`: a rank line per Spark, rank 0's
    NCCL INFO lines as spark-01's there (its ring channels: from the last rank, to rank 1) and
    every other host's `NET/IB : Using` line as spark-02's there; busbw the two-Spark answer's
    times `factor` (a switch carries a ring of Sparks at the port rate: synthesised)."""
    t = open(SPARK + "synth/all_reduce_perf-2sparks-roce.txt").read().split("\n")
    rank0 = next(l for l in t if l.startswith("#  Rank  0 "))
    two = fabric_ip_two(0), fabric_ip_two(1)
    out = []
    for line in t:
        if line.startswith("#  Rank ") or " NCCL INFO " in line:
            continue
        out.append(line)
        if line != "# Using devices":
            continue
        n = len(group)
        for r, h in enumerate(group):
            out.append(rank0.replace(" Rank  0 ", f" Rank {r:2d} ").replace("Pid   4211", f"Pid {4211 - 17 * r:6d}").replace("spark-01", h))
        for l in t:
            if " NCCL INFO " not in l:
                continue
            if l.startswith("spark-02:"):
                for r, h in enumerate(group[1:], 1):
                    out.append(l.replace("spark-02:3977:3977", f"{h}:{4211 - 17 * r}:{4211 - 17 * r}").replace(two[1], fabric_ip(h, 0)))
                continue
            l = l.replace("spark-01:", f"{group[0]}:", 1).replace(two[0], fabric_ip(group[0], 0))
            l = re.sub(r"rank 0 nranks \d+", f"rank 0 nranks {n}", l)
            l = l.replace("1[0] -> 0[0] [receive]", f"{n - 1}[0] -> 0[0] [receive]")
            out.append(l)
    text = "\n".join(out)
    text = nccl_scaled(text, factor) if factor != 1.0 else text
    return nccl_ranks(text, len(group))

def nccl_ranks(text, n):
    """nccl-tests' bus bandwidth is algbw x 2(n-1)/n for n ranks (1 for the two-Spark table):
    the same busbw over n ranks is a smaller algbw, so a longer time per size."""
    f = 2 * (n - 1) / n
    if f == 1.0:
        return text
    out = []
    for line in text.split("\n"):
        c = line.split()
        if len(c) == 13 and c[0].isdigit():
            size = int(c[0])
            b1, b2 = float(c[7]), float(c[11])
            a1, a2 = b1 / f, b2 / f
            t1 = size / a1 / 1e3 if a1 > 0 else float(c[5])
            t2 = size / a2 / 1e3 if a2 > 0 else float(c[9])
            line = (f"{c[0]:>12} {c[1]:>13} {c[2]:>9} {c[3]:>7} {c[4]:>7} {t1:8.2f} {a1:7.2f} {b1:7.2f} {c[8]:>7} "
                    f"{t2:8.2f} {a2:7.2f} {b2:7.2f} {c[12]:>7}")
        out.append(line)
    return "\n".join(out)

# ---- per-node answers --------------------------------------------------------------------------
def cmd(out, c, stdout=None, stdout_file=None, stderr=None, exit_code=0, ms=5, note=None, after=None):
    if note:
        out.append(f"# {note}")
    out += ["[[command]]", f"command = {q(c)}"]
    if after:
        out.append(f"after = {q(after)}")
    if stdout_file is not None:
        out.append(f"stdout_file = {q(stdout_file)}")
    if stdout is not None:
        out.append(f"stdout = {q(stdout)}")
    if stderr is not None:
        out.append(f"stderr = {q(stderr)}")
    out += [f"exit_code = {exit_code}", f"duration_ms = {ms}", ""]

def peers(node):
    return [p for p in NODES if p != node]

def link_answers(out, node):
    for i in IFACES:
        cmd(out, f"ethtool {i}", stdout_file=f"synth/ethtool-{i}.txt", ms=40,
            note="the two-Spark ethtool answer (CX7 at 200G), the switch port advertising 100G and 200G")
        cmd(out, f"ethtool -i {i}", stdout_file=f"synth/ethtool-i-cx7-{i}.txt", ms=10)
        cmd(out, f"ethtool -S {i}", stdout_file="synth/ethtool-S-cx7.txt", ms=30)
        cmd(out, f"ethtool --show-eee {i}", stdout="", stderr="netlink error: Operation not supported\n", exit_code=1, ms=8)
    me = ip_addr_doc(node)
    cmd(out, "ip -j addr", stdout=json.dumps(me, separators=(",", ":")) + "\n", ms=12)
    cmd(out, "ip -j route", stdout=ip_route_json(me, MGMT_GW), ms=4)
    cmd(out, "ip -j -6 route", stdout="[]\n", ms=4)
    cmd(out, "rdma link", stdout_file="synth/rdma-link-dgx-spark.txt", ms=15)
    cmd(out, "ibdev2netdev", stdout_file="real/rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt", ms=60, note="REAL DGX Spark capture")
    cmd(out, "ibv_devinfo", stdout_file="real/rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt", ms=80, note="REAL DGX Spark capture")
    cmd(out, "ofed_info -s", stdout="OFED-internal-25.07-0.9.7:\n", ms=200)
    cmd(out, KERNEL_LOG_CMD, stdout=kernel_log_text(node, boot_link_events([(i, BDF[i]) for i in IFACES])), ms=25,
        note="fabcheck health's link flaps: the boot id and the kernel log's link lines, each rail's first down-then-up at boot (SYNTHESISED, format of tests/fixtures/kernel-log/)")
    cmd(out, "hostname", stdout=f"{node}\n", ms=3)
    for i in IFACES:
        cmd(out, f"cat /sys/class/net/{i}/mtu", stdout="9000\n", ms=3)
    cmd(out, "uname -r", stdout="6.11.0-1016-nvidia\n", ms=3)

def combined_pings(out, ips, jumbo, note=None):
    """Five-step step 1's one command per pair (n.ping_all): the pings of the peer's addresses
    `ips` (count 5, 3 or 2) and the jumbo path's don't-fragment pings, `jumbo` [(ip, size,
    stdout, stderr, exit status)] per rail, both answers as the separate commands' above:
    SYNTHESISED, as those."""
    mtu = [f"ping -n -c 3 -W 2 -M do -I {IFACES[r]} -s {size} {ip}" for r, (ip, size, _, _, _) in enumerate(jumbo)]
    for cnt in [5, 3, 2]:
        pings = [f"ping -n -c {cnt} -W 2 -I {IFACES[r]} {ip}" for r, ip in enumerate(ips)]
        parts = [(0, ping_text(ip, cnt, 56), "") for ip in ips] + [(x, o, e) for _, _, o, e, x in jumbo]
        cmd(out, ping_all_cmd(pings + mtu), stdout=ping_all_out(parts), ms=max(1000 * cnt, 2000),
            note=note or "n.ping_all: step 1's pings and its jumbo pings in one command (the answers above, SYNTHESISED)")

def reach_answers(out, node, drop=None):
    """Pings (one rail, and both rails of a peer at once), MTU pings, neighbour entries and SSH
    hops to every peer through the switch. `drop`: {(peer, rail): (ip, mac)} answers of a fault."""
    for p in peers(node):
        ips = [fabric_ip(p, r) for r in range(2)]
        for cnt in [5, 3, 2]:
            for r, ip in enumerate(ips):
                cmd(out, f"ping -n -c {cnt} -W 2 -I {IFACES[r]} {ip}", stdout=ping_text(ip, cnt, 56), ms=1000 * cnt)
            pings = [f"ping -n -c {cnt} -W 2 -I {IFACES[r]} {ip}" for r, ip in enumerate(ips)]
            cmd(out, ping_all_cmd(pings), stdout=ping_all_out([(0, ping_text(ip, cnt, 56), "") for ip in ips]), ms=1000 * cnt)
        mtu = [f"ping -n -c 3 -W 2 -M do -I {IFACES[r]} -s 8972 {ip}" for r, ip in enumerate(ips)]
        for r, ip in enumerate(ips):
            cmd(out, mtu[r], stdout=ping_text(ip, 3, 8972), ms=2000)
        cmd(out, ping_all_cmd(mtu), stdout=ping_all_out([(0, ping_text(ip, 3, 8972), "") for ip in ips]), ms=2000)
        combined_pings(out, ips, [(ip, 8972, ping_text(ip, 3, 8972), "", 0) for ip in ips])
        for r, ip in enumerate(ips):
            cmd(out, f"ip -j neigh show {ip} dev {IFACES[r]}",
                stdout=json.dumps([{"dst": ip, "lladdr": mac(p, IFACES[r]), "state": ["REACHABLE"]}], separators=(",", ":")) + "\n", ms=4)
        for ip in ips + [HOST[p]]:
            cmd(out, f"ssh -o BatchMode=yes -o ConnectTimeout=10 -o NumberOfPasswordPrompts=0 {ip} 'echo fabcheck-hop $(id -un) $(hostname)'",
                stdout=f"fabcheck-hop nvidia {p}\n", ms=180)

SERVER = "real/perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt"
def rdma_answers(out, node, gbps=None):
    """ib_write_bw per port (both rails at once; an inventory without ports measures each rail on
    TCP port 18515) and ib_write_lat per rail, server and client against every peer. `gbps`:
    {(peer, rail): Gbit/s} for this node's client answers that differ (a fault)."""
    gbps = gbps or {}
    for k, d in enumerate(DEVS):
        for port in sorted({18515 + k, 18515}):
            cmd(out, f"ib_write_bw -d {d} -x 3 -p {port} -D 5 --report_gbits ; : fcsrv-ib_write_bw-{port}", stdout_file=SERVER, ms=6100,
                note="REAL ib_write_bw server capture (only the client side is judged)")
            cmd(out, f"ss -Hltn 'sport = :{port}'", stdout=f"LISTEN 0      5            0.0.0.0:{port}      0.0.0.0:*          \n", ms=6)
            cmd(out, f"pkill -TERM -f -- 'fcsrv-ib_write_bw-{str(port)[:-1]}[{str(port)[-1]}]'; true", stdout="", ms=6)
            for p in peers(node):
                cmd(out, f"ib_write_bw -d {d} -x 3 -p {port} -D 5 --report_gbits {fabric_ip(p, k)}",
                    stdout=rdma_client_text(node, p, k, gbps.get((p, k))), ms=6050)
        # fabcheck health's epilog: loopback on the rail (server and client on the same device, the
        # exchange over 127.0.0.1). SYNTHESISED: no real loopback capture; both GIDs the rail's own
        cmd(out, f"ib_write_bw -d {d} -x 3 -p 18515 -D 2 --report_gbits ; : fcsrv-ib_write_bw-18515", stdout_file=SERVER, ms=2600,
            note="REAL ib_write_bw server capture (only the client side is judged)")
        cmd(out, f"ib_write_bw -d {d} -x 3 -p 18515 -D 2 --report_gbits 127.0.0.1", stdout=rdma_client_text(node, node, k, 94.1), ms=2550,
            note="SYNTHESISED loopback client (health --context epilog): no real capture of a loopback run")
        cmd(out, f"ib_write_lat -d {d} -x 3 -p 18515 ; : fcsrv-ib_write_lat-18515", stdout_file=f"synth/ib_write_lat-{d}.txt", ms=1100)
        cmd(out, "pkill -TERM -f -- 'fcsrv-ib_write_lat-1851[5]'; true", stdout="", ms=6)
        for p in peers(node):
            cmd(out, f"ib_write_lat -d {d} -x 3 -p 18515 {fabric_ip(p, k)}", stdout_file=f"synth/ib_write_lat-{d}.txt", ms=1050)

def nccl_groups():
    """The groups the shipped scripts launch NCCL on from the first node: the first two nodes
    and all of them (the baseline), one rank per Spark."""
    return [NODES[:2], NODES] if N > 2 else [NODES]

def nccl_answers(out, node, factor=None, env=()):
    """`env`: the recipe's NCCL_* variables the launch passes (sorted, as the scripts pass them)."""
    cmd(out, """command -v 'all_reduce_perf' || { for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'all_reduce_perf' ] && echo "$d"/'all_reduce_perf' && break; done; }""",
        stdout=NCCL_BIN + "\n", ms=5)
    if node != NODES[0]:
        return
    for g in nccl_groups():
        hosts = ",".join(f"{fabric_ip(n, 0)}:1" for n in g)
        f = (factor or {}).get(len(g), 1.0)
        xs = " ".join(f"-x {k}" for k in sorted(set(env) | {"NCCL_IB_HCA"}))
        cmd(out, f"mpirun -np {len(g)} -H {hosts} --bind-to none {xs} -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS {NCCL_BIN} -b 8 -e 1G -f 2 -g 1",
            stdout=nccl_text(g, f), ms=41000, note="synthesised all_reduce_perf, one rank per Spark (see nccl_text)")

IPERF3_GBPS = 38.6  # one TCP stream over one rail: assumed (synthesised), no public Spark figure
def tcp_answers(out, node):
    """localise.rhai's iperf3 ring: the server on 5201 (its banner as the two-Spark simulation's),
    its readiness probe and cleanup, and a 2-second single-stream client to every peer's rail-0
    address (`iperf3 -J`, formats.iperf3_json)."""
    cmd(out, "iperf3 -s -1 -p 5201 ; : fcsrv-iperf3-5201", ms=2200,
        stdout="-----------------------------------------------------------\nServer listening on 5201 (test #1)\n-----------------------------------------------------------\n")
    cmd(out, "ss -Hltn 'sport = :5201'", stdout="LISTEN 0      5            0.0.0.0:5201      0.0.0.0:*          \n", ms=6)
    cmd(out, "pkill -TERM -f -- 'fcsrv-iperf3-520[1]'; true", stdout="", ms=6)
    for p in peers(node):
        cmd(out, f"iperf3 -c {fabric_ip(p, 0)} -p 5201 -J -t 2", stdout=iperf3_json(fabric_ip(node, 0), fabric_ip(p, 0), 1, 2, IPERF3_GBPS * 1e9), ms=2100)

def recipe_answers(out, node):
    cmd(out, "cat -- /home/nvidia/recipe/hostfile", stdout_file="recipes/hostfile-fabric", ms=4)
    cmd(out, "cat -- /home/nvidia/recipe/hostfile-wifi", stdout_file="recipes/hostfile-wifi", ms=4)
    cmd(out, "cat -- /home/nvidia/recipe/serve.yaml", stdout_file="recipes/serve.yaml", ms=4)

def tool_answers(out, node):
    for t in ["ping", "ethtool", "ip", "rdma", "ibdev2netdev", "ofed_info", "cat", "stat", "ib_write_bw",
              "ib_read_bw", "ib_send_bw", "ib_write_lat", "iperf3", "mpirun", "timeout", "ss", "pkill", "ssh", "sudo",
              NCCL_BIN, "ibv_devinfo", "show_gids", "lspci", "ls", "test", "uname", "mlnx_qos", "dpkg-query", "hostname"]:
        cmd(out, f"command -v {t} >/dev/null", stdout="", ms=3)
    cmd(out, "ls -1 /sys/class/infiniband", stdout="rocep1s0f0\nrocep1s0f1\nroceP2p1s0f0\nroceP2p1s0f1\n", ms=3)

def health_answers(out, node):
    """fabric_health's answers, as the two-Spark simulation's (formats.py, real captures)."""
    for k, d in enumerate(DEVS):
        cmd(out, f"rdma statistic show link {d}/1", stdout=rdma_stat_text(d), ms=12)
        cmd(out, f"rdma statistic show link {d}/1", stdout=rdma_stat_text(d, rx_write_requests=52_428_800 + 977 * k, np_cnp_sent=1204, rp_cnp_handled=1187, np_ecn_marked_roce_packets=1204), ms=12,
            after="ib_write_bw", note="after the RDMA load: write requests and CNPs grew; no error counter")
        cmd(out, f"show_gids {d}", stdout=show_gids_text(d, NETDEV[d], fabric_ip(node, k)), ms=25)
    for i in IFACES:
        cmd(out, f"ethtool -m {i}", stdout_file="real/ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt", ms=60,
            note="REAL ethtool -m capture of a Mellanox passive copper QSFP cable, as the Spark's DAC to the switch")
        cmd(out, f"ethtool -I --show-fec {i}", stdout=show_fec_text(i, corrected=1187), ms=20)
        cmd(out, f"ethtool -I --show-fec {i}", stdout=show_fec_text(i, corrected=4211), ms=20, after="ib_write_bw")
        cmd(out, f"mlnx_qos -i {i}", stdout_file="real/mlnx_qos/mlnx_qos-dscp-firmware-dcbx-pfc3-ets-50-50-max-buffer.txt", ms=90,
            note="REAL mlnx_qos capture of a ConnectX port: trust dscp, PFC on priority 3 (what a lossless switch fabric needs)")
        cmd(out, f"cat /sys/class/net/{i}/ecn/roce_np/enable/3 /sys/class/net/{i}/ecn/roce_rp/enable/3", stdout="1\n1\n", ms=3)
        cmd(out, f"lspci -vv -s {BDF[i]}", stdout=lspci_text(BDF[i]), ms=40)
    cmd(out, "dpkg-query -W -f='${Version}' libnccl2", stdout="2.28.3-1+cuda13.0", ms=30)
    cmd(out, "dpkg-query -W -f='${Version}' perftest", stdout="24.01.0+0.38-1build2", ms=30)
    cmd(out, "ls /proc/driver/nvidia/gpus", stdout="000f:01:00.0\n", ms=3)
    cmd(out, "test -d /sys/module/nvidia_peermem", stdout="", ms=3)
    cmd(out, hca_readlink_cmd(DEVS), stdout=hca_readlink_text(DEVS), ms=5,
        note="the RDMA devices' sysfs device paths (each rail its own root port; synthesised, formats.py)")
    cmd(out, hca_aer_cmd(DEVS), stdout=hca_aer_text(DEVS), ms=20,
        note="the AER statistics of each rail's PCIe function and the root port above it: all 0 (synthesised)")
    cmd(out, sysfs_command(), stdout=sysfs_text(), ms=30, note="the two-Spark simulation's sysfs listing (SYNTHESISED DGX Spark values)")
    cmd(out, gpu_command(), stdout=gpu_text(), ms=40)

SWITCH = "sw-spark-200g"  # the switch's LLDP system name (synthesised)
def lldp_json(node, port=None, system=SWITCH):
    """`lldpctl -f json` (lldpd 1.0.16) in the shape of the real capture
    tests/fixtures/lldp/lldpctl-f-json-1.0.16-two-interfaces-list-portid-ifname.json (a list of
    one-key objects, one per interface; chassis keyed by its system name; port id of type
    ifname): both rails of the node's one cable see the switch's port swpN (N: the node's
    number). SYNTHESISED: the chassis MAC and description and the port names are assumed; no
    auto-negotiation block (lldpd prints one only when the neighbour sends that TLV)."""
    port = port or f"swp{NODES.index(node) + 1}"
    items = []
    for k, i in enumerate(IFACES):
        items.append({i: {"via": "LLDP", "rid": "1", "age": "0 day, 02:13:41",
                          "chassis": {system: {"id": {"type": "mac", "value": "1c:34:da:5e:40:00"},
                                               "descr": "Ethernet switch, 200G QSFP56 ports (synthesised)",
                                               "mgmt-ip": "10.0.0.2", "mgmt-iface": "1",
                                               "capability": [{"type": "Bridge", "enabled": True}, {"type": "Router", "enabled": False}]}},
                          "port": {"id": {"type": "ifname", "value": port}, "descr": port, "ttl": "120"}}})
    return json.dumps({"lldp": {"interface": items}}, indent=2) + "\n"

def lldp_answers(out, node):
    """The baseline's rail alignment over LLDP (run as root): every rail of a Spark on the one
    switch, which the check does not judge (one switch for every rail)."""
    cmd(out, "if command -v lldpctl >/dev/null; then lldpctl -f json; else exit 127; fi", stdout=lldp_json(node), ms=40,
        note="lldpctl -f json: both rails on the switch's port of this node (synthesised in the real capture's shape)")

# Per-node commands of later checks go here: a function (out, node) appended to this list
# answers them on every node, and a scenario overrides one node's answer in its files.
PER_NODE = [link_answers, reach_answers, rdma_answers, nccl_answers, tcp_answers, recipe_answers, tool_answers, health_answers,
            lldp_answers]

def node_file(path, node, head, body):
    out = [f"# {head}", "# SYNTHESISED answers in the formats of real captures (see SOURCES.md); real/ holds the real ones.", ""]
    body(out)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write("\n".join(out))

def shared_files():
    for rel in ["rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt",
                "rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt",
                "perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt",
                "ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt",
                "mlnx_qos/mlnx_qos-dscp-firmware-dcbx-pfc3-ets-50-50-max-buffer.txt",
                "mlnx_qos/mlnx_qos-pcp-os-dcbx-no-pfc-tsa-vendor-default.txt"]:
        real(rel)
    for rel in ["synth/ethtool-S-cx7.txt", "synth/rdma-link-dgx-spark.txt", "synth/ethtool-i-cx7-enp1s0f1np1.txt",
                "synth/ethtool-i-cx7-enP2p1s0f1np1.txt", "synth/ib_write_lat-rocep1s0f1.txt", "synth/ib_write_lat-roceP2p1s0f1.txt"]:
        from_sim(rel)
    for i in IFACES:
        put(f"synth/ethtool-{i}.txt", ethtool_text(i))
    put("recipes/hostfile-fabric", "# MPI hostfile of the serving recipe: one rank per Spark, over the CX7 fabric (rail 0)\n"
        + "".join(f"{fabric_ip(n, 0)} slots=1\n" for n in NODES))
    # the two-Spark simulation's example recipes, with this cluster's addresses
    put("recipes/hostfile-wifi", "# MPI hostfile where the second host is the Wi-Fi address of spark-02 (a common mistake)\n"
        f"{fabric_ip(NODES[0], 0)} slots=1\n192.168.1.51 slots=1\n")
    put("recipes/serve.yaml", "# serving config whose head node is the management address of spark-01\n"
        f"model: meta-llama/Llama-3.1-70B-Instruct\ntensor_parallel_size: {N}\nmaster_addr: {HOST[NODES[0]]}\nnodes:\n"
        + "".join(f"  - {fabric_ip(n, 0)}\n" for n in NODES))

shared_files()
for node in NODES:
    node_file(f"{OUT}/{node}.toml", node, f"Transcript of the SIMULATED DGX Spark {node} on a 200G switch ({N} Sparks).",
              lambda out, node=node: [f(out, node) for f in PER_NODE])

# ---- fault scenarios: scenarios/NAME/{scenario.toml, NODE.toml} -------------------------------
# Each overlays one fault's answers on the healthy transcripts (`--scenario NAME`); the answers
# keep the healthy ones' formats, with the values the fault changes. tests/it/sim_switch.rs runs
# each scenario's scripts unfiltered: a fault fails exactly the testcases it lists, and the
# run's first diagnosis has the scenario's `rule` and its `part` field alone names each of
# `parts` (never unexplained); a `[[note]]` is a WARN-level diagnosis of a run that fails
# nothing; a healthy variant's runs are green with no diagnosis.
BASE, FIVE, HEALTH = "fabric_baseline.rhai", "five_step_acceptance.rhai", "fabric_health.rhai"
def scenario(name, description, files, expects=(), rule=None, parts=(), notes=(), healthy=False, runs=()):
    """`files`: {node: [answer functions (out, node)]}; `expects`: (script, args, test, [message
    parts]); `notes`: (script, args, rule, part); `runs`: (script, args) of a healthy variant."""
    d = f"{OUT}/scenarios/{name}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    s = [f"description = {q(description)}", f"healthy = {'true' if healthy else 'false'}"]
    if rule:
        s.append(f"rule = {q(rule)}")
    if parts:
        s.append(f"parts = {json.dumps(list(parts))}")
    if not expects:
        s.append("expect = []")
    s.append("")
    for script, args in runs:
        s += ["[[run]]", f"script = {q(script)}", f"args = {json.dumps(list(args))}", ""]
    for script, args, r, part in notes:
        s += ["[[note]]", f"script = {q(script)}", f"args = {json.dumps(list(args))}", f"rule = {q(r)}", f"part = {q(part)}", ""]
    for script, args, test, msgs in expects:
        s += ["[[expect]]", f"script = {q(script)}", f"test = {q(test)}", 'status = "failure"',
              f"message = {json.dumps(list(msgs))}"] + ([f"args = {json.dumps(list(args))}"] if args else []) + [""]
    open(f"{d}/scenario.toml", "w").write("\n".join(s))
    for node, fs in files.items():
        node_file(f"{d}/{node}.toml", node, f"Fault scenario `{name}` on {node}: these answers replace the healthy ones.",
                  lambda out, node=node, fs=fs: [f(out, node) for f in fs])

def slow_pairs(x, rails, gbps):
    """Every node's client answers of the pairs with node `x` on rail indexes `rails` at `gbps`
    (both ways: x writing to its peers, and its peers writing to x): {node: [answer function]}."""
    def f(out, me):
        for k, d in enumerate(DEVS):
            if k not in rails:
                continue
            for port in sorted({18515 + k, 18515}):
                for p in peers(me):
                    if x not in (me, p):
                        continue
                    cmd(out, f"ib_write_bw -d {d} -x 3 -p {port} -D 5 --report_gbits {fabric_ip(p, k)}",
                        stdout=rdma_client_text(me, p, k, gbps[k] if isinstance(gbps, list) else gbps), ms=6050)
    return {n: [f] for n in NODES}

def with_nccl(files, **kw):
    """files plus the first node's NCCL answers of nccl_answers(**kw)."""
    files.setdefault(NODES[0], []).append(lambda out, node: nccl_answers(out, node, **kw))
    return files

if N == 4:
    pairs_with = lambda x: [(x, p) for p in NODES if p != x] + [(p, x) for p in NODES if p != x]
    # A node slow on every rail (its PCIe, power or firmware settings: what its rails share):
    # spark-03 writes and is written to at 71.3 Gbit/s per rail, every link at 200G; the ring of
    # four runs at the slow node's pace (NCCL over 4 Sparks 17.3 GB/s, below its 20 line).
    scenario("node-slow-every-rail", "spark-03 writes and is written to at 71.3 Gbit/s on both rails (every link at 200G); every other pair at 94.9: the node, not a rail; the 4-Spark all_reduce at the slow node's pace",
             with_nccl(slow_pairs("spark-03", [0, 1], 71.3), factor={4: 0.75}),
             [(BASE, [], f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "71.3"]) for a, b in pairs_with("spark-03")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth"])],
             rule="slow_node", parts=["spark-03 as a whole"])
    # The same node 5 % slow (90.12 Gbit/s per rail, 180.24 per port): above the fixed lines (90 a
    # rail, 180 a port), so no pair fails, but spark-03 is in every slow pair: a WARN-level note
    # with the numbers, not a pass in silence.
    scenario("node-5pct-slow-every-rail", "spark-03 writes and is written to at 90.12 Gbit/s on both rails, 5 % below its peers' 94.9 but above the 90 line: nothing fails, the diagnosis notes the node",
             with_nccl(slow_pairs("spark-03", [0, 1], 90.12), factor={4: 0.95}), notes=[(BASE, [], "odd_node", "spark-03 as a whole")])
    # One rail of one node slow both ways (its PCIe Gen5 x4 path, or that function's settings):
    # spark-02's roceP2p1s0f1 at 61.2 Gbit/s to and from every peer; its first rail at 94.97.
    # NCCL's channels go over both rails: the ring of four at the slow rail's pace (x 0.64,
    # 2 x 61.2 of 190 Gbit/s; synthesised), the 2-Spark run at full rate.
    scenario("rail-slow-both-ways", "spark-02's second rail roceP2p1s0f1 (enP2p1s0f1np1) writes and is written to at 61.2 Gbit/s with every peer, its first rail and every other pair at ~95: that rail's PCIe path, not the node or the shared cable",
             with_nccl(slow_pairs("spark-02", [1], 61.2), factor={4: 0.64}),
             [(BASE, [], f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "roceP2p1s0f1 61.2"]) for a, b in pairs_with("spark-02")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth", "actual 14.78"])],
             rule="slow_rail", parts=["spark-02 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)", "PCIe path"])

    # Link speed from what the parts ARE (issue 46 item 1) on a switch: the like ports of the
    # other nodes decide what a port should run.
    def ethtool_answers(**kw):
        """This node's `ethtool IFACE` answers with ethtool_text(**kw) (both rails of the port)."""
        return lambda out, node: [cmd(out, f"ethtool {i}", stdout=ethtool_text(i, **kw), ms=40) for i in IFACES]
    HALF = [47.51, 47.42]  # a rail's RDMA write with a 100G link in the path (the two-Spark figure)
    def at_100g(x):
        """ethtool answers of spark `x` at 100G come from the scenario; the pairs with x at half."""
        return with_nccl(slow_pairs(x, [0, 1], HALF), factor={4: 0.5})
    f = at_100g("spark-02")
    f["spark-02"].append(ethtool_answers(speed=100000, partner=["100000baseCR4/Full"]))
    scenario("switch-port-100g-one-node", "the switch port of spark-02's qsfp1 is set to 100G (it advertises only 100000baseCR4/Full) while spark-01, spark-03 and spark-04 run 200G: spark-02's port is below its like ports, named with its partner's advertisement; every pair with spark-02 at half, the 4-Spark all_reduce at half",
             f,
             [(BASE, [], "link: speed and EEE [spark-02]", ["spark-02 port qsfp1", "negotiated 100000 Mb/s", "expected 200000 Mb/s",
               "the link partner of spark-02 port qsfp1 (its switch port, or the far end) advertises only 100000baseCR4/Full", "runs 200000 Mb/s"])]
             + [(BASE, [], f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "94.93 Gbit/s"]) for a, b in pairs_with("spark-02")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth"])],
             rule="link_down", parts=["spark-02 port qsfp1's link partner (its switch port, or the far end)",
                                      "advertises only 100000baseCR4/Full where spark-01 qsfp1 runs 200000 Mb/s"])
    f = at_100g("spark-02")
    f["spark-02"].append(ethtool_answers(speed=100000, advertised=["100000baseCR4/Full"]))
    scenario("end-advertises-100g", "spark-02's qsfp1 rails advertise only 100000baseCR4/Full although they support 200000baseCR4 (an `ethtool -s ... advertise` left from a test); the switch port offers 100G and 200G; the link came up at 100G: the red is on spark-02, the end that limits the link",
             f,
             [(BASE, [], "link: speed and EEE [spark-02]", ["spark-02 port qsfp1", "negotiated 100000 Mb/s", "expected 200000 Mb/s",
               "spark-02 enp1s0f1np1 advertises only 100000baseCR4/Full although it supports 200000 Mb/s"])]
             + [(BASE, [], f"rdma: write per port [{a} -> {b}]", [f"{a} -> {b}", "94.93 Gbit/s"]) for a, b in pairs_with("spark-02")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth"])],
             rule="link_down", parts=["spark-02 port qsfp1: its own advertisement (it advertises only 100000baseCR4/Full although it supports 200000 Mb/s"])
    # Healthy variant: every Spark on a 100G switch by design (its ports advertise at most
    # 100000baseCR4): every port at 100G like its like ports, RDMA and NCCL at half: notes, no red.
    def everyone_at_100g(out, node):
        ethtool_answers(speed=100000, partner=["100000baseCR4/Full"])(out, node)
        rdma_answers(out, node, gbps={(p, k): HALF[k] for p in peers(node) for k in range(2)})
        nccl_answers(out, node, factor={2: 0.5, 4: 0.5})
    scenario("all-ports-100g-switch", "healthy: the four Sparks on a 100G switch by design (its ports advertise at most 100000baseCR4/Full): every port at 100G as its like ports, RDMA rails ~47.5 Gbit/s, NCCL at half: the site's design, nothing fails",
             {n: [everyone_at_100g] for n in NODES}, healthy=True, runs=[(BASE, []), (FIVE, [])])
    # Rails addressed on each other's subnet: spark-03's enp1s0f1np1 holds 192.168.200.13 and its
    # enP2p1s0f1np1 192.168.100.13 (a netplan file with the two interface names swapped). Both
    # rails reach the one switch, so the pings still succeed: each peer's neighbour entry for an
    # address of spark-03 holds the MAC of the other rail than the inventory says. The RDMA and
    # NCCL answers are left healthy: the identity checks are under test here.
    SWAP = {"enp1s0f1np1": [(fabric_ip("spark-03", 1), 24)], "enP2p1s0f1np1": [(fabric_ip("spark-03", 0), 24)]}
    def swapped_addr(out, node):
        me = ip_addr_doc(node, addrs=SWAP)
        cmd(out, "ip -j addr", stdout=json.dumps(me, separators=(",", ":")) + "\n", ms=12,
            note="the healthy answer with the two rails' addresses swapped")
        cmd(out, "ip -j route", stdout=ip_route_json(me, MGMT_GW), ms=4)
        for k, d in enumerate(DEVS):
            cmd(out, f"show_gids {d}", stdout=show_gids_text(d, NETDEV[d], fabric_ip(node, 1 - k)), ms=25)
    def neigh_of_swapped(out, node):
        for r in range(2):
            ip = fabric_ip("spark-03", r)
            cmd(out, f"ip -j neigh show {ip} dev {IFACES[r]}",
                stdout=json.dumps([{"dst": ip, "lladdr": mac("spark-03", IFACES[1 - r]), "state": ["REACHABLE"]}], separators=(",", ":")) + "\n", ms=4,
                note="spark-03's address answered from its other rail (the one holding it)")
    files = {n: [neigh_of_swapped] for n in NODES if n != "spark-03"}
    files["spark-03"] = [swapped_addr]
    scenario("rails-addressed-swapped", "spark-03's two rails hold each other's addresses (enp1s0f1np1 192.168.200.13, enP2p1s0f1np1 192.168.100.13): a netplan file with the interface names swapped; through the one switch every ping still answers",
             files, [(sc, [], f"{t}: rails as the inventory says [spark-03]", ["address 192.168.100.13 is on enP2p1s0f1np1, the inventory puts it on enp1s0f1np1", "address 192.168.200.13 is on enp1s0f1np1"])
                     for sc, t in [(FIVE, "step 1"), (HEALTH, "health")]],
             rule="setting", parts=["spark-03 enP2p1s0f1np1 and enp1s0f1np1: address 192.168.100.13 on the other rail"])
    # Healthy variant: the recipe exports NCCL_SOCKET_IFNAME=^lo,docker (NCCL's own default
    # exclusion list): the bootstrap may use any other interface, RoCE carries the data.
    def exclude_recipe(out, node):
        cmd(out, "cat -- /home/nvidia/recipe/serve.env", ms=4, note="the recipe's env file (example content)",
            stdout="# serving environment of the Sparks (sourced by launch.sh)\n"
                   f"export MASTER_ADDR={fabric_ip(NODES[0], 0)}\nexport MASTER_PORT=29500\nexport NCCL_SOCKET_IFNAME=^lo,docker\n")
        nccl_answers(out, node, env=["NCCL_SOCKET_IFNAME"])
    scenario("nccl-socket-ifname-exclude", "healthy: the recipe exports NCCL_SOCKET_IFNAME=^lo,docker (NCCL's own default exclusion list): every other interface may carry the bootstrap, RoCE carries the data: no red (step 4 warns that the bootstrap may pick each Spark's Wi-Fi wlP9s9)",
             {NODES[0]: [exclude_recipe]}, healthy=True, runs=[(FIVE, ["--set", "recipe=/home/nvidia/recipe/serve.env"])])
    # Healthy variant: real fabrics are not identical: every pair within 1.5 % of the others
    # (93.5 to 94.97 Gbit/s per rail): the fleet view names no node and no rail.
    def noisy(out, me):
        i = NODES.index(me)
        rdma_answers(out, me, gbps={(p, k): RAIL_GBPS[k] * (1 - ((3 * i + 5 * NODES.index(p) + 7 * k) % 7) * 0.0025)
                                    for p in peers(me) for k in range(2)})
    scenario("healthy-noisy-pairs", "healthy: every pair's RDMA write within 1.5 % of the others (93.5 to 94.97 Gbit/s per rail), as a real fabric measures: no node or rail named",
             {n: [noisy] for n in NODES}, healthy=True, runs=[(BASE, [])])
    # Receive errors on one port: spark-04's first rail counts rx_crc_errors_phy +1842 and
    # rx_symbol_err_phy +77 under load (a marginal DAC or the switch port's transmitter); the
    # bandwidth still looks fine.
    def crc_growing(out, node):
        base = open(SPARK + "synth/ethtool-S-cx7.txt").read()
        grown = base.replace("rx_crc_errors_phy: 0", "rx_crc_errors_phy: 1842").replace("rx_symbol_err_phy: 0", "rx_symbol_err_phy: 77")
        assert grown != base
        cmd(out, "ethtool -S enp1s0f1np1", stdout_file="synth/ethtool-S-cx7.txt", ms=30, note="first read: the healthy answer")
        cmd(out, "ethtool -S enp1s0f1np1", stdout=grown, ms=30, after="ib_write_bw",
            note="every read after the RDMA load: CRC and symbol errors grown")
    scenario("crc-errors-growing-one-port", "spark-04's first rail receives with errors under load: rx_crc_errors_phy +1842, rx_symbol_err_phy +77 (its DAC to the switch, or the switch port's transmitter); the bandwidth still looks fine",
             {"spark-04": [crc_growing]},
             [(BASE, [], "health: error counters not grown under load [spark-04]", ["spark-04 enp1s0f1np1", "rx_crc_errors_phy grew by +1842", "rx_symbol_err_phy grew by +77"]),
              (FIVE, [], "step 3: error counters not grown under load [spark-04]", ["spark-04 enp1s0f1np1", "rx_crc_errors_phy grew by +1842"])],
             rule="receiver_errors", parts=["spark-04 port qsfp1 enp1s0f1np1", "the transmitter at the far end (switch port or peer)"])
    # PFC off on one node behind the switch (a re-imaged Spark that lost its QoS setup; the
    # REAL mlnx_qos capture of a port in trust pcp with no PFC), the others on priority 3.
    def pfc_off(out, node):
        for i in IFACES:
            cmd(out, f"mlnx_qos -i {i}", stdout_file="real/mlnx_qos/mlnx_qos-pcp-os-dcbx-no-pfc-tsa-vendor-default.txt", ms=90,
                note="REAL mlnx_qos capture: trust pcp, PFC on no priority")
    scenario("pfc-off-one-node", "spark-03 lost its lossless RoCE setup (trust pcp, PFC on no priority; a re-imaged node) while the other three run trust dscp with PFC on priority 3, behind a switch",
             {"spark-03": [pfc_off]},
             [(HEALTH, [], "health: lossless roce config", ["spark-03 enp1s0f1np1: PFC is off on every priority", "spark-03 enP2p1s0f1np1: PFC is off", "trust is pcp, expected dscp"])],
             rule="setting", parts=["spark-03 port qsfp1 enp1s0f1np1 (rocep1s0f1)", "spark-03 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)"])
    # One Spark transmits slowly on both rails (its send side: a PCIe or firmware setting that
    # limits transmit), receives at full rate: spark-04 -> each peer at 52.3 Gbit/s per rail.
    def slow_tx(out, node):
        rdma_answers(out, node, gbps={(p, k): 52.3 for p in peers(node) for k in range(2)})
    scenario("node-transmits-slow", "spark-04 writes at 52.3 Gbit/s per rail to every peer (its transmit side) while every peer writes to it at ~95: one direction of one node",
             with_nccl({"spark-04": [slow_tx]}, factor={4: 0.55}),
             [(sc, [], f"{t}rdma{w} write per port [spark-04 -> {p}]", [f"spark-04 -> {p}", "52.3"])
              for sc, t, w in [(BASE, "", ":"), (FIVE, "step 3: ", "")] for p in peers("spark-04")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth"]), (FIVE, [], "step 3: nccl all_reduce busbw and transport", ["bus bandwidth"])],
             rule="slow_node", parts=["spark-04's sending as a whole", "every peer's writes to it are not"])
    # One rail of one Spark at MTU 1500 while its peers run 9000 (a netplan without mtu: 9000).
    def mtu_1500(out, node):
        doc = ip_addr_doc(node)
        for i in doc:
            if i["ifname"] == "enP2p1s0f1np1":
                i["mtu"] = 1500
        cmd(out, "ip -j addr", stdout=json.dumps(doc, separators=(",", ":")) + "\n", ms=12, note="enP2p1s0f1np1 at MTU 1500")
        cmd(out, "cat /sys/class/net/enP2p1s0f1np1/mtu", stdout="1500\n", ms=3)
        # its jumbo pings on that rail are refused locally (iputils' words and statistics line,
        # as the two-Spark scenario jumbo-path-broken-one-direction)
        for p in peers(node):
            ips = [fabric_ip(p, r) for r in range(2)]
            refused = (f"PING {ips[1]} ({ips[1]}) 8972(9000) bytes of data.\n\n--- {ips[1]} ping statistics ---\n"
                       "3 packets transmitted, 0 received, +3 errors, 100% packet loss, time 2041ms\n\n")
            mtu = [f"ping -n -c 3 -W 2 -M do -I {IFACES[r]} -s 8972 {ip}" for r, ip in enumerate(ips)]
            cmd(out, mtu[1], stdout=refused, stderr="ping: local error: message too long, mtu=1500\n" * 3, exit_code=1, ms=2041)
            cmd(out, ping_all_cmd(mtu), stdout=ping_all_out([(0, ping_text(ips[0], 3, 8972), ""), (1, refused, "ping: local error: message too long, mtu=1500\n" * 3)]), ms=2050)
            # step 1's one command sends its jumbo pings at each rail's own MTU: 1472 bytes on
            # the 1500 rail, which a 1500-byte frame carries to any peer
            combined_pings(out, ips, [(ips[0], 8972, ping_text(ips[0], 3, 8972), "", 0), (ips[1], 1472, ping_text(ips[1], 3, 1472), "", 0)],
                           note="n.ping_all: step 1's pings and its jumbo pings at this node's MTUs (9000, 1500) in one command")
    def jumbo_lost_to(x):
        """A peer's jumbo pings to x's second rail: no reply (x drops frames above its MTU 1500;
        the format of the real capture tests/fixtures/lab/ping-3-unreachable-100pct-loss.txt)."""
        def f(out, node):
            ips = [fabric_ip(x, r) for r in range(2)]
            lost = (f"PING {ips[1]} ({ips[1]}) 8972(9000) bytes of data.\n\n--- {ips[1]} ping statistics ---\n"
                    "3 packets transmitted, 0 received, 100% packet loss, time 2045ms\n\n")
            mtu = [f"ping -n -c 3 -W 2 -M do -I {IFACES[r]} -s 8972 {ip}" for r, ip in enumerate(ips)]
            cmd(out, mtu[1], stdout=lost, exit_code=1, ms=6000)
            cmd(out, ping_all_cmd(mtu), stdout=ping_all_out([(0, ping_text(ips[0], 3, 8972), ""), (1, lost, "")]), ms=6000)
            combined_pings(out, ips, [(ips[0], 8972, ping_text(ips[0], 3, 8972), "", 0), (ips[1], 8972, lost, "", 1)],
                           note="n.ping_all: step 1's pings and its jumbo pings in one command (the jumbo answers above)")
        return f
    files = {n: [jumbo_lost_to("spark-02")] for n in NODES if n != "spark-02"}
    files["spark-02"] = [mtu_1500]
    scenario("rail-mtu-1500-one-node", "spark-02's second rail enP2p1s0f1np1 runs MTU 1500 (its netplan lost `mtu: 9000`) while every other rail runs 9000: its jumbo pings are refused locally, jumbo pings to it go unanswered",
             files, [(sc, [], f"{t}: MTU end to end [{a} -> {b}]", ["spark-02 enP2p1s0f1np1 MTU", "expected 9000, actual 1500"])
                     for sc, t in [(FIVE, "step 1"), (BASE, "link")] for a, b in pairs_with("spark-02")],
             rule="setting", parts=["spark-02 port qsfp1 enP2p1s0f1np1 (roceP2p1s0f1)"])
    # TCP through one node slow both ways (its CPU or TCP settings: offloads off, a powersave
    # governor): iperf3 to and from spark-03 at 9.1 Gbit/s, every other pair 38.6; localise's
    # ring names the node its slow pairs share.
    def tcp_slow(x, gbps):
        def f(out, node):
            for p in peers(node):
                if x in (node, p):
                    cmd(out, f"iperf3 -c {fabric_ip(p, 0)} -p 5201 -J -t 2", stdout=iperf3_json(fabric_ip(node, 0), fabric_ip(p, 0), 1, 2, gbps * 1e9), ms=2100)
        return {n: [f] for n in NODES}
    scenario("tcp-node-slow", "TCP to and from spark-03 at 9.1 Gbit/s (a single iperf3 stream; its TCP offloads or CPU governor), every other pair at 38.6: localise's ring names spark-03",
             tcp_slow("spark-03", 9.1), [("localise.rhai", [], "localise: bad node or link", ["exclude spark-03", "failed against 3 nodes proven good (spark-01, spark-02, spark-04)"])],
             rule="named_part", parts=["spark-03 as a whole"])
    # Drift names the part (issue 46 item 5): one of four missed the firmware update; the
    # majority (three nodes on 28.45.4028) says which node and which devices differ.
    def old_firmware(out, node):
        for i in IFACES:
            cmd(out, f"ethtool -i {i}", ms=10, note="the healthy ethtool -i with the older firmware",
                stdout=open(SPARK + f"synth/ethtool-i-cx7-{i}.txt").read().replace("28.45.4028", "28.43.1014"))
    scenario("firmware-drift-one-node", "spark-04's ConnectX-7 runs firmware 28.43.1014 while spark-01, 02 and 03 run 28.45.4028 (one node missed the firmware update)",
             {"spark-04": [old_firmware]},
             [(HEALTH, [], "health: version drift", ["most nodes have 28.45.4028", "spark-04 has 28.43.1014"]),
              (BASE, [], "link: driver and firmware identical", ["most nodes have 28.45.4028", "spark-04 has 28.43.1014"])],
             rule="setting", parts=["spark-04 enp1s0f1np1, enP2p1s0f1np1: firmware 28.43.1014"])
    # The other direction: every peer's writes to spark-02 at 58.7 Gbit/s per rail (its receive
    # path: receive buffers, PCIe writes), its own writes at ~95.
    def slow_rx(x, gbps):
        def f(out, node):
            rdma_answers(out, node, gbps={(x, k): gbps for k in range(2)})
        return {n: [f] for n in NODES if n != x}
    scenario("node-receives-slow", "every peer writes to spark-02 at 58.7 Gbit/s per rail (its receive side) while spark-02's own writes run ~95: one direction of one node",
             with_nccl(slow_rx("spark-02", 58.7), factor={4: 0.62}),
             [(sc, [], f"{t}rdma{w} write per port [{p} -> spark-02]", [f"{p} -> spark-02", "58.7"])
              for sc, t, w in [(BASE, "", ":"), (FIVE, "step 3: ", "")] for p in peers("spark-02")]
             + [(BASE, [], "nccl: all_reduce 4 nodes", ["bus bandwidth"]), (FIVE, [], "step 3: nccl all_reduce busbw and transport", ["bus bandwidth"])],
             rule="slow_node", parts=["spark-02's receiving as a whole", "its own writes are not"])
    # The cable of one Spark to the switch flaps: both rails of spark-02's qsfp1 (one cable)
    # count link_down_events_phy 0 -> 3 between the first and the later reads.
    def flapping(out, node):
        base = open(SPARK + "synth/ethtool-S-cx7.txt").read()
        flap = base.replace("link_down_events_phy: 0", "link_down_events_phy: 3")
        assert flap != base
        for i in IFACES:
            cmd(out, f"ethtool -S {i}", stdout_file="synth/ethtool-S-cx7.txt", ms=30, note="first read: the healthy answer")
            cmd(out, f"ethtool -S {i}", stdout=flap, ms=30, note="second and later reads: three link-down events since")
    scenario("port-flapping-one-node", "spark-02's cable to the switch flaps: both rails of its qsfp1 count link_down_events_phy 0 -> 3 between the first and the later reads of their counters",
             {"spark-02": [flapping]},
             [(sc, [], t, ["spark-02 enp1s0f1np1: link_down_events_phy grew by +3", "spark-02 enP2p1s0f1np1: link_down_events_phy grew by +3"])
              for sc, t in [(HEALTH, "health: error counters not grown [spark-02]"), (FIVE, "step 3: error counters not grown under load [spark-02]"),
                            (BASE, "health: error counters not grown under load [spark-02]")]],
             rule="receiver_errors", parts=["spark-02 port qsfp1", "the far end (switch port or peer)"])
    # RoCE at 1 KiB on one node: spark-03's rocep1s0f1 runs active_mtu 1024 over netdev MTU 9000
    # (the real DGX Spark ibv_devinfo capture with that device's active_mtu changed).
    def roce_mtu_1024(out, node):
        dv = open(FX + "rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt").read()
        head, rest = dv.split("hca_id:\trocep1s0f1\n", 1)
        blk, tail = rest.split("\nhca_id:", 1)
        blk2 = blk.replace("active_mtu:\t\t4096 (5)", "active_mtu:\t\t1024 (3)")
        assert blk2 != blk
        cmd(out, "ibv_devinfo", stdout=head + "hca_id:\trocep1s0f1\n" + blk2 + "\nhca_id:" + tail, ms=80,
            note="the real DGX Spark ibv_devinfo capture with rocep1s0f1's active_mtu 1024 (3)")
    scenario("roce-mtu-1024-one-node", "spark-03's rocep1s0f1 runs RoCE at active_mtu 1024 while its netdev and every other node's run 9000 / 4096 (RDMA sends 1 KiB packets)",
             {"spark-03": [roce_mtu_1024]},
             [(sc, [], t, ["rocep1s0f1: active_mtu 1024 with netdev enp1s0f1np1 MTU 9000", "expected 4096"])
              for sc, t in [(HEALTH, "health: roce mtu [spark-03]"), (FIVE, "step 1: roce mtu [spark-03]")]],
             rule="setting", parts=["spark-03 port qsfp1 enp1s0f1np1 (rocep1s0f1)"])
