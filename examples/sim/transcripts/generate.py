# Generates spark-01.toml and spark-02.toml of the simulation. Run from examples/sim/:
#   python3 transcripts/generate.py
# Sources of every answer: SOURCES.md (real fixtures vs synthesised outputs).
import json, os, re, shutil, sys
sys.path.insert(0, "transcripts")
from formats import lspci_text, show_gids_text, rdma_stat_text, show_fec_text  # fabric health answers (issue 21)
from formats import ping_text, ping_all_cmd, ping_all_out  # pings; n.ping_all (issue 22)
from formats import sysfs_command, sysfs_text  # fabcheck discover (issue 30 section 2)
from formats import gpu_command, gpu_text  # platform profile detection (issue 30 section 1)
from formats import ip_route_json  # step 5's running-network snapshot (issue 30 section 3)
from formats import iperf3_json  # iperf3 -J answers
from formats import KERNEL_LOG_CMD, kernel_log_text, boot_link_events  # health link flaps (issue 47)
from formats import hca_readlink_cmd, hca_readlink_text, hca_aer_cmd, hca_aer_text  # the HCAs' PCIe errors
# Replay reads captured files only from inside the transcript directory (issue 14), so the
# real fixtures and the recipe files are copied in: real/ (from tests/fixtures/), recipes/.
def inside(src, dst):
    os.makedirs(os.path.dirname("transcripts/" + dst), exist_ok=True)
    shutil.copyfile(os.path.normpath("transcripts/" + src), "transcripts/" + dst)
    return dst
class Fixtures:
    def __add__(self, rel):
        return inside("../../../tests/fixtures/" + rel, "real/" + rel)
F = Fixtures()
S = "synth/"
nodes = {
  "spark-01": dict(ips=["192.168.100.10","192.168.200.10"], peer="spark-02", peer_ips=["192.168.100.11","192.168.200.11"], host="10.0.0.11", peer_host="10.0.0.12"),
  "spark-02": dict(ips=["192.168.100.11","192.168.200.11"], peer="spark-01", peer_ips=["192.168.100.10","192.168.200.10"], host="10.0.0.12", peer_host="10.0.0.11"),
}
ifaces = ["enp1s0f1np1", "enP2p1s0f1np1"]
devs = ["rocep1s0f1", "roceP2p1s0f1"]
def shell_quote(t):
    """The scripts' shell_quote (util::names::quote): safe words as they are, else POSIX single quotes."""
    import re
    if t and re.fullmatch(r"[A-Za-z0-9\-_./=:@%+,]+", t):
        return t
    return "'" + t.replace("'", "'\\''") + "'"
def backup_dir_script():
    """Step 5's node-side backup-directory script, read from the stdlib (one source)."""
    text = open("../../stdlib/acceptance.rhai").read()
    body = text.split("fn backup_dir_script() {", 1)[1]
    return body.split("`", 2)[1]
# --- fabric health (issue 21): answers in the formats of the real captures in tests/fixtures ---
BDF = {"enp1s0f1np1": "0000:01:00.1", "enP2p1s0f1np1": "0002:01:00.1"}
NETDEV = dict(zip(devs, ifaces))
def synth(name, text):
    open("transcripts/" + S + name, "w").write(text)
    return S + name
def ethtool_i(iface):
    """synth/ethtool-i-cx7.txt with the interface's own PCI function (the Spark's two CX7 rails
    sit on PCI domains 0000 and 0002, as the real ibdev2netdev capture's names say)."""
    t = open("transcripts/" + S + "ethtool-i-cx7.txt").read().replace("bus-info: 0000:01:00.1", f"bus-info: {BDF[iface]}")
    return synth(f"ethtool-i-cx7-{iface}.txt", t)
LAT_REAL = "perftest/ib_write_lat-client-rdma_cm-force-link-IB-dgx-spark.txt"
def ib_write_lat_text(dev):
    """The REAL DGX Spark ib_write_lat capture (rdma_cm, --force-link IB) rewritten to the RoCE
    form the scripts run (-x 3: Ethernet link, GID index 3, no rdma_cm, MTU 4096) on `dev`
    (scenarios.py's lat_scaled changes its latencies)."""
    t = open("../../tests/fixtures/" + LAT_REAL).read()
    return (t.replace("Device         : rocep1s0f1", f"Device         : {dev}")
             .replace("Mtu             : 1024[B]", "Mtu             : 4096[B]")
             .replace(" Link type       : IB\n", " Link type       : Ethernet\n GID index       : 3\n")
             .replace("rdma_cm QPs     : ON", "rdma_cm QPs     : OFF")
             .replace("Data ex. method : rdma_cm", "Data ex. method : Ethernet"))
def q(s):  # TOML basic string
    return json.dumps(s)
for name, n in nodes.items():
    out = [f"# Transcript of the SIMULATED {name}: answers to the exact commands the shipped scripts send.",
           "# stdout_file paths are relative to this directory; see SOURCES.md for where every answer comes from.", ""]
    def cmd(c, stdout=None, stdout_file=None, stderr=None, exit_code=0, ms=5, note=None, after=None):
        if note: out.append(f"# {note}")
        out.append("[[command]]")
        out.append(f"command = {q(c)}")
        if after: out.append(f"after = {q(after)}")
        if stdout_file: out.append(f"stdout_file = {q(stdout_file)}")
        if stdout is not None: out.append(f"stdout = {q(stdout)}")
        if stderr is not None: out.append(f"stderr = {q(stderr)}")
        out.append(f"exit_code = {exit_code}")
        out.append(f"duration_ms = {ms}")
        out.append("")
    # link / ethtool
    for i in ifaces:
        cmd(f"ethtool {i}", stdout_file=S+f"ethtool-{i}.txt", ms=40, note="synthesised CX7 at 200G (format of a real ConnectX ethtool capture)")
        cmd(f"ethtool -i {i}", stdout_file=ethtool_i(i), ms=10)
        cmd(f"ethtool -S {i}", stdout_file=S+"ethtool-S-cx7.txt", ms=30)
        cmd(f"ethtool --show-eee {i}", stdout="", stderr="netlink error: Operation not supported\n", exit_code=1, ms=8,
            note="CX7 has no EEE: same answer as the real capture tests/fixtures/lab/ethtool-show-eee-veth-unsupported.txt")
    cmd("ip -j addr", stdout_file=f"synth/ip-j-addr-{name}.json", ms=12)
    # step 5 compares the running network before the backup and after the restore: the routes
    # (synthesised in the format of the real capture tests/fixtures/lab/ip-j-route-*.json from
    # this node's addresses; no IPv6 route, `[]` as the real capture ip-j-6-route-empty-netns.json)
    cmd("ip -j route", stdout=ip_route_json(json.load(open(f"transcripts/synth/ip-j-addr-{name}.json")), "10.0.0.1"), ms=4)
    cmd("ip -j -6 route", stdout="[]\n", ms=4)
    # rdma
    cmd("rdma link", stdout_file=S+"rdma-link-dgx-spark.txt", ms=15)
    cmd("ibdev2netdev", stdout_file=F+"rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt", ms=60, note="REAL DGX Spark capture")
    cmd("ibv_devinfo", stdout_file=F+"rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt", ms=80, note="REAL DGX Spark capture")
    cmd("ofed_info -s", stdout="OFED-internal-25.07-0.9.7:\n", ms=200)
    cmd(KERNEL_LOG_CMD, stdout=kernel_log_text(name, boot_link_events([(i, BDF[i]) for i in ifaces])), ms=25,
        note="fabcheck health's link flaps: the boot id and the kernel log's link lines, each rail's first down-then-up at boot (SYNTHESISED, format of tests/fixtures/kernel-log/)")
    # rail alignment over LLDP (fabric_baseline): back to back, no switch and no lldpd on the Sparks
    cmd("if command -v lldpctl >/dev/null; then lldpctl -f json; else exit 127; fi", stdout="", exit_code=127, ms=3,
        note="synthesised: lldpd is not installed")
    # ping mesh and MTU pings: synthesised in the format of the real lab capture
    # tests/fixtures/lab/ping-4-ok.txt, with this address, packet count and size
    for cnt in [5, 3, 2]:
        for k, ip in enumerate(n["peer_ips"]):
            cmd(f"ping -n -c {cnt} -W 2 -I {ifaces[k]} {ip}", stdout=ping_text(ip, cnt, 56), ms=1000 * cnt,
                note="synthesised in the format of the real iputils capture tests/fixtures/lab/ping-4-ok.txt")
    # step 1 pings a peer's addresses at once (n.ping_all): the same answers in one command
    for cnt in [5, 3, 2]:
        pings = [f"ping -n -c {cnt} -W 2 -I {ifaces[k]} {ip}" for k, ip in enumerate(n["peer_ips"])]
        cmd(ping_all_cmd(pings), stdout=ping_all_out([(0, ping_text(ip, cnt, 56), "") for ip in n["peer_ips"]]),
            ms=1000 * cnt, note="n.ping_all: the two pings above at once, each answer under its delimiter line")
    for k, ip in enumerate(n["peer_ips"]):
        cmd(f"ping -n -c 3 -W 2 -M do -I {ifaces[k]} -s 8972 {ip}", stdout=ping_text(ip, 3, 8972), ms=2000,
            note="MTU 9000 end to end: 8972-byte don't-fragment ping (synthesised, format of the real capture)")
    mtu = [f"ping -n -c 3 -W 2 -M do -I {ifaces[k]} -s 8972 {ip}" for k, ip in enumerate(n["peer_ips"])]
    cmd(ping_all_cmd(mtu), stdout=ping_all_out([(0, ping_text(ip, 3, 8972), "") for ip in n["peer_ips"]]), ms=2000,
        note="n.ping_all: the two MTU pings above at once, each answer under its delimiter line")
    # five-step step 1 sends the pings and the jumbo don't-fragment pings in one command
    for cnt in [5, 3, 2]:
        pings = [f"ping -n -c {cnt} -W 2 -I {ifaces[k]} {ip}" for k, ip in enumerate(n["peer_ips"])]
        parts = [(0, ping_text(ip, cnt, 56), "") for ip in n["peer_ips"]] + [(0, ping_text(ip, 3, 8972), "") for ip in n["peer_ips"]]
        cmd(ping_all_cmd(pings + mtu), stdout=ping_all_out(parts), ms=max(1000 * cnt, 2000),
            note="n.ping_all: step 1's pings and its jumbo don't-fragment pings (both above) in one command")
    # ssh hops over the fabric (and to the peer's management address for step 5)
    for ip in n["peer_ips"] + [n["peer_host"]]:
        cmd(f"ssh -o BatchMode=yes -o ConnectTimeout=10 -o NumberOfPasswordPrompts=0 {ip} 'echo fabcheck-hop $(id -un) $(hostname)'",
            stdout=f"fabcheck-hop nvidia {n['peer']}\n", ms=180)

    # identity (issue 30 section 3): the host name each node gives itself, which a hop to one of
    # its addresses must answer (synthesised: the inventory's name, as the hops above answer)
    cmd("hostname", stdout=f"{name}\n", ms=3, note="synthesised: the node's host name, the one its hops answer")
    # the neighbour entry of each peer address pinged in step 1: the MAC of the peer interface
    # holding it (synthesised in the format of the real capture tests/fixtures/lab/ip-j-neigh-show-addr-dev-reachable.json)
    peer_mac = {a["local"]: i["address"] for i in json.load(open(f"transcripts/synth/ip-j-addr-{n['peer']}.json")) for a in i["addr_info"]}
    for k, ip in enumerate(n["peer_ips"]):
        cmd(f"ip -j neigh show {ip} dev {ifaces[k]}", stdout=json.dumps([{"dst": ip, "lladdr": peer_mac[ip], "state": ["REACHABLE"]}], separators=(",", ":")) + "\n", ms=4,
            note="synthesised in the format of the real capture tests/fixtures/lab/ip-j-neigh-show-addr-dev-reachable.json: the peer interface's MAC")

    # ib_write_bw per port: both rails at once (server answers: REAL RoCE server capture; client: synthesised)
    # (an inventory without `ports` measures each rail as a port of its own, on TCP port 18515)
    for k, d, port in [(k, d, p) for k, d in enumerate(devs) for p in sorted({18515 + k, 18515})]:
        cmd(f"ib_write_bw -d {d} -x 3 -p {port} -D 5 --report_gbits ; : fcsrv-ib_write_bw-{port}",
            stdout_file=F+"perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt", ms=6100,
            note="REAL ib_write_bw server capture (RoCE, --report_gbits, ~98 Gbit/s), another host's device name")
        cmd(f"ss -Hltn 'sport = :{port}'", stdout=f"LISTEN 0      5            0.0.0.0:{port}      0.0.0.0:*          \n", ms=6)
        cmd(f"pkill -TERM -f -- 'fcsrv-ib_write_bw-{str(port)[:-1]}[{str(port)[-1]}]'; true", stdout="", ms=6)
        cmd(f"ib_write_bw -d {d} -x 3 -p {port} -D 5 --report_gbits {n['peer_ips'][k]}",
            stdout_file=S+f"ib_write_bw-client-{d}.txt", ms=6050,
            note="synthesised client output in the format of the real RoCE perftest capture; ~95 Gbit/s per rail (NVIDIA's DGX Spark figure)")
    # fabcheck health's epilog: loopback RDMA on each rail, server and client on the same device,
    # the exchange over 127.0.0.1. SYNTHESISED: no real loopback capture exists (the client's
    # output in the format of the real RoCE capture above, both GIDs the rail's own; the figure,
    # 94.1 Gbit/s, is the per-rail figure, not a measured loopback one)
    for k, d in enumerate(devs):
        cmd(f"ib_write_bw -d {d} -x 3 -p 18515 -D 2 --report_gbits ; : fcsrv-ib_write_bw-18515",
            stdout_file=F+"perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt", ms=2600,
            note="the REAL ib_write_bw server capture, as above (only the client side is judged)")
        own = n["ips"][k].split(".")
        gid = "00:00:00:00:00:00:00:00:00:00:255:255:" + ":".join(own)
        text = open("transcripts/" + S + f"ib_write_bw-client-{d}.txt").read()
        text = re.sub(r"GID: [0-9:]+", "GID: " + gid, text).replace("95.21              94.97", "94.36              94.10").replace("905842 ", "358412 ")
        lb = synth(f"ib_write_bw-loopback-{name}-{d}.txt", text)
        cmd(f"ib_write_bw -d {d} -x 3 -p 18515 -D 2 --report_gbits 127.0.0.1", stdout_file=lb, ms=2550,
            note="SYNTHESISED loopback client (health --context epilog): no real capture of a loopback run")
    # ib_write_lat per rail (fabric_baseline "rdma: latency per rail"): server and client answers
    # synthesised from the REAL DGX Spark ib_write_lat capture (RoCE form: see ib_write_lat_text)
    for k, d in enumerate(devs):
        lat = synth(f"ib_write_lat-{d}.txt", ib_write_lat_text(d))
        cmd(f"ib_write_lat -d {d} -x 3 -p 18515 ; : fcsrv-ib_write_lat-18515", stdout_file=lat, ms=1100,
            note="synthesised from the REAL DGX Spark ib_write_lat capture (tests/fixtures/" + LAT_REAL + "): ib_write_lat prints its table on both sides")
        cmd("pkill -TERM -f -- 'fcsrv-ib_write_lat-1851[5]'; true", stdout="", ms=6)
        cmd(f"ib_write_lat -d {d} -x 3 -p 18515 {n['peer_ips'][k]}", stdout_file=lat, ms=1050,
            note="synthesised from the REAL DGX Spark ib_write_lat capture: typical 1.47 us, 99 % 1.57 us")
    # nccl-tests
    cmd("""command -v 'all_reduce_perf' || { for d in /usr/local/bin /usr/bin "$HOME/nccl-tests/build"; do [ -x "$d"/'all_reduce_perf' ] && echo "$d"/'all_reduce_perf' && break; done; }""",
        stdout="/home/nvidia/nccl-tests/build/all_reduce_perf\n", ms=5)
    cmd(f"mpirun -np 2 -H {n['ips'][0]}:1,{n['peer_ips'][0]}:1 --bind-to none -x NCCL_IB_HCA -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS /home/nvidia/nccl-tests/build/all_reduce_perf -b 8 -e 1G -f 2 -g 1",
        stdout_file=S+"all_reduce_perf-2sparks-roce.txt", ms=41000,
        note="synthesised 2-rank all_reduce_perf over RoCE (format of the real nccl-tests 2.19.6 captures)")
    # step 4 recipe files
    cmd("cat -- /home/nvidia/recipe/hostfile", stdout_file=inside("../recipes/hostfile-fabric", "recipes/hostfile-fabric"), ms=4)
    cmd("cat -- /home/nvidia/recipe/hostfile-wifi", stdout_file=inside("../recipes/hostfile-wifi", "recipes/hostfile-wifi"), ms=4)
    cmd("cat -- /home/nvidia/recipe/serve.yaml", stdout_file=inside("../recipes/serve.yaml", "recipes/serve.yaml"), ms=4)

    # --dry-run: `command -v TOOL` for every tool the primitives run (all present on a DGX Spark)
    for t in ["ping", "ethtool", "ip", "rdma", "ibdev2netdev", "ofed_info", "cat", "stat", "ib_write_bw",
              "ib_read_bw", "ib_send_bw", "ib_write_lat", "iperf3", "mpirun"]:
        cmd(f"command -v {t} >/dev/null", stdout="", ms=3, note=None)
    # --- BEGIN dry-run preflight (helper C, issue 20 item 12) ---
    # What `--dry-run`'s preflight asks besides the tools above: the programs every command and
    # pair needs (timeout: the node-side wrapper; ss/pkill: a pair's readiness probe and
    # cleanup; ssh: ssh_hop; sudo), nccl-tests at the path n.which found, and the RDMA devices
    # in sysfs (all four CX7 functions, as the real ibdev2netdev capture lists them).
    # `sudo -n true` is answered by the `true` below.
    for t in ["timeout", "ss", "pkill", "ssh", "sudo", "/home/nvidia/nccl-tests/build/all_reduce_perf",
              "ibv_devinfo", "show_gids", "lspci", "ls", "test", "uname", "mlnx_qos", "dpkg-query", "hostname"]:
        cmd(f"command -v {t} >/dev/null", stdout="", ms=3)
    cmd("ls -1 /sys/class/infiniband", stdout="rocep1s0f0\nrocep1s0f1\nroceP2p1s0f0\nroceP2p1s0f1\n", ms=3,
        note="synthesised: the four CX7 RDMA devices of the real DGX Spark ibdev2netdev capture")
    # --- END dry-run preflight ---
    # README examples: MTU from sysfs, kernel release (synthesised: DGX OS 7 values)
    for i in ifaces:
        cmd(f"cat /sys/class/net/{i}/mtu", stdout="9000\n", ms=3)
    cmd("uname -r", stdout="6.11.0-1016-nvidia\n", ms=3, note="synthesised: the kernel release naming of DGX OS 7")
    # README examples: ib_write_bw without a duration (perftest's default iterations)
    for k, d in enumerate(devs):
        port = 18515 + k
        cmd(f"ib_write_bw -d {d} -x 3 -p {port} --report_gbits ; : fcsrv-ib_write_bw-{port}",
            stdout_file=F+"perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt", ms=2100,
            note="REAL ib_write_bw server capture (as above)")
        cmd(f"ib_write_bw -d {d} -x 3 -p {port} --report_gbits {n['peer_ips'][k]}",
            stdout_file=S+f"ib_write_bw-client-{d}.txt", ms=2050, note="synthesised client output (as above)")
    # --set second_cable=true on this ONE-cable cluster: there is no bond, and iperf3 -P 16 over
    # the one port is what one cable gives (the pitfall checks then say so)
    cmd("cat /proc/net/bonding/bond0", stdout="", stderr="cat: /proc/net/bonding/bond0: No such file or directory\n", exit_code=1, ms=3,
        note="one cable: no bond (the answer of a real node without bonding)")
    cmd("iperf3 -s -1 -p 5201 ; : fcsrv-iperf3-5201", stdout="-----------------------------------------------------------\nServer listening on 5201 (test #1)\n-----------------------------------------------------------\n", ms=10200)
    cmd("ss -Hltn 'sport = :5201'", stdout="LISTEN 0      5            0.0.0.0:5201      0.0.0.0:*          \n", ms=6)
    cmd("pkill -TERM -f -- 'fcsrv-iperf3-520[1]'; true", stdout="", ms=6)
    cmd(f"iperf3 -c {n['peer_ips'][0]} -p 5201 -J -P 16 -t 10", stdout=iperf3_json(n['ips'][0], n['peer_ips'][0], 16, 10, 112.4e9), ms=10100,
        note="synthesised iperf3 -J in the format of the real captures in tests/fixtures/iperf3 (16 TCP streams over one 200G port)")

    # step 5 (only with --allow-changes): netplan backup and restore, synthesised answers
    nf = "/etc/netplan/40-cx7.yaml"
    bd = "/var/tmp/fabcheck-netplan.k3Qz8WbT"
    sha = "3f0c5e1b9a7d2c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e" if name == "spark-01" else "8e2d4c6a0b1f3e5d7c9a1b3d5f7e9c1a3b5d7f9e1c3a5b7d9f1e3c5a7b9d1f3e"
    stat = f"root root 600 412\n{sha}  {{}}\n"
    cmd(f"sh -c {shell_quote(backup_dir_script())} fabcheck-backup-dir /var/tmp", stdout=f"dir {bd}\n", ms=9, note="a fresh private backup directory per run, in a parent only root can change")
    cmd("ls -1d -- /etc/netplan/*.yaml", stdout=nf + "\n", ms=5)
    cmd(f"stat -c '%U %G %a %s' -- {nf} && sha256sum -- {nf}", stdout=stat.format(nf), ms=6)
    cmd(f"stat -c '%U %G %a %s' -- {bd}/40-cx7.yaml && sha256sum -- {bd}/40-cx7.yaml", stdout=stat.format(bd + "/40-cx7.yaml"), ms=6)
    cmd(f"cp -a -T -- {nf} {bd}/40-cx7.yaml", stdout="", ms=5)
    cmd(f"""t=$(mktemp -- {nf}.fabcheck.XXXXXXXX) && cp -a -T -- {bd}/40-cx7.yaml "$t" && mv -f -T -- "$t" {nf}""", stdout="", ms=7)
    cmd("true", stdout="", ms=3)
    # netplan generate on the restored file in a scratch root: silent, exit 0 (as the real
    # netplan.io 0.106 answers a valid file; seen on this project's CI machine)
    cmd(f"""d=$(mktemp -d /tmp/fabcheck-netplan-gen.XXXXXXXX) || exit 1; trap 'rm -rf -- "$d"' EXIT; mkdir -p "$d/etc/netplan" && cp -p -- {nf} "$d/etc/netplan/" && netplan generate --root-dir "$d\"""", stdout="", ms=120)
    # fabric health (issue 21): counters, GIDs, PCIe, GPUDirect; all synthesised in the formats of
    # the real captures named in the helpers above. After the RDMA load (`after`), the RDMA
    # counters show the load: write requests and congestion notifications grew, no error counter.
    for k, d in enumerate(devs):
        cmd(f"rdma statistic show link {d}/1", stdout=rdma_stat_text(d), ms=12,
            note="synthesised in the format of the real `rdma statistic show` capture: a fresh port, all zero")
        cmd(f"rdma statistic show link {d}/1", stdout=rdma_stat_text(d, rx_write_requests=52_428_800 + 977 * k, np_cnp_sent=1204, rp_cnp_handled=1187, np_ecn_marked_roce_packets=1204), ms=12,
            after="ib_write_bw", note="after the RDMA load: write requests and CNPs (congestion control at work) grew; no error counter")
        cmd(f"show_gids {d}", stdout=show_gids_text(d, NETDEV[d], n["ips"][k]), ms=25,
            note="synthesised in the format of the real show_gids capture: RoCE v2 fabric GID at index 3")
    for i in ifaces:
        cmd(f"ethtool -m {i}", stdout_file=F+"ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt", ms=60,
            note="REAL ethtool -m capture of a Mellanox passive copper QSFP cable (no diagnostics), as the Sparks' DAC")
        cmd(f"ethtool -I --show-fec {i}", stdout=show_fec_text(i, corrected=1187), ms=20,
            note="the real DGX Spark --show-fec capture (Auto, RS) with an -I Statistics block in the real capture's format (synthesised values)")
        cmd(f"ethtool -I --show-fec {i}", stdout=show_fec_text(i, corrected=4211), ms=20, after="ib_write_bw",
            note="after the RDMA load: corrected blocks grew (FEC at work on PAM4), no uncorrectable block")
        cmd(f"mlnx_qos -i {i}", stdout_file=F+"mlnx_qos/mlnx_qos-dscp-firmware-dcbx-pfc3-ets-50-50-max-buffer.txt", ms=90,
            note="REAL mlnx_qos capture of a ConnectX port: trust dscp, PFC on priority 3")
        cmd(f"cat /sys/class/net/{i}/ecn/roce_np/enable/3 /sys/class/net/{i}/ecn/roce_rp/enable/3", stdout="1\n1\n", ms=3,
            note="synthesised: RoCE ECN enabled (notification and reaction point) for priority 3, the mlx5 default")
    for i in ifaces:
        cmd(f"lspci -vv -s {BDF[i]}", stdout=lspci_text(BDF[i]), ms=40,
            note="the real CX7 lspci -vv capture at this address, LnkSta Gen5 x4 (synthesised)")
    cmd("dpkg-query -W -f='${Version}' libnccl2", stdout="2.28.3-1+cuda13.0", ms=30,
        note="synthesised: the libnccl2 package version in the format of the real `dpkg -l` capture (karpathy/llm.c#742: 2.22.3-1+cuda12.2)")
    cmd("dpkg-query -W -f='${Version}' perftest", stdout="24.01.0+0.38-1build2", ms=30,
        note="the perftest package version a public DGX Spark inventory reports (Ubuntu 24.04's perftest)")
    cmd("ls /proc/driver/nvidia/gpus", stdout="000f:01:00.0\n", ms=3, note="synthesised: the GB10 GPU")
    cmd("test -d /sys/module/nvidia_peermem", stdout="", ms=3, note="synthesised: nvidia_peermem loaded")
    # the HCAs' PCIe paths (health: gpu pcie errors on RoCE): each rail's function and its root
    # port, AER all 0 (synthesised, formats.py hca_aer_text)
    cmd(hca_readlink_cmd(devs), stdout=hca_readlink_text(devs), ms=5,
        note="synthesised: the RDMA devices' sysfs device paths (each rail its own root port, PCI domains 0000 and 0002)")
    cmd(hca_aer_cmd(devs), stdout=hca_aer_text(devs), ms=20,
        note="the AER statistics of each rail's PCIe function and the root port above it: all 0 (synthesised in the format of the real sysfs files)")
    # fabcheck discover (issue 30 section 2): the sysfs listing (synthesised, see formats.py)
    cmd(sysfs_command(), stdout=sysfs_text(), ms=30,
        note="fabcheck discover's sysfs listing: SYNTHESISED DGX Spark values (formats.py sysfs_text)")
    cmd(gpu_command(), stdout=gpu_text(), ms=40,
        note="platform profile detection: SYNTHESISED nvidia-smi csv answer, the GB10's name as public DGX Spark logs show it")
    open(f"transcripts/{name}.toml", "w").write("\n".join(out))

# ---------------------------------------------------------------------------------------------
# Second cable (issue 20 item 6): RDMA port counters for measure_utilization=true (the bond
# scenarios are made by scenarios.py).
def counters_cmd(devs, window):
    files = "".join(f" /sys/class/infiniband/{d}/ports/1/counters/port_xmit_data /sys/class/infiniband/{d}/ports/1/counters/port_rcv_data" for d in devs)
    return f"cat{files} && sleep {window} && cat{files}"
def counters_text(start, pct, speed_mbps, window, rails):
    # port_xmit_data / port_rcv_data count octets / 4; the workload sends pct % of the port's
    # expected speed summed over its rails (receives a little less), shared evenly by the rails.
    words_tx = int(pct / 100 * speed_mbps * 1e6 * window / 8 / 4)
    words_rx = int(words_tx * 0.97)
    before = [v for i in range(rails) for v in (start[0] + i * 7919, start[1] + i * 104729)]
    after = [v + (words_tx if k % 2 == 0 else words_rx) // rails for k, v in enumerate(before)]
    return "\n".join(str(v) for v in before + after) + "\n"
with open("transcripts/spark-01.toml", "a") as f:
    f.write("\n# measure_utilization=true (second_cable_checklist): RDMA port counters of qsfp1's two rails over 30 s while a\n"
            "# workload runs at 85 % of 200 Gbit/s (synthesised: sysfs prints one decimal per file)\n")
    f.write(f"[[command]]\ncommand = {q(counters_cmd(devs, 30))}\nstdout = {q(counters_text((918273645123, 907162534987), 85, 200000, 30, 2))}\nexit_code = 0\nduration_ms = 30010\n")
