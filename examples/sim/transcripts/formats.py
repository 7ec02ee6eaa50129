# Answers of the fabric health commands (issue 21) in the formats of the real captures in
# tests/fixtures/, with synthesised values; used by generate.py (healthy) and scenarios.py
# (faults). Run from examples/sim/.
def lspci_text(bdf, sta="Speed 32GT/s (ok), Width x4 (downgraded)"):
    """The real ConnectX-7 PF capture (tests/fixtures/lspci/lspci-vv-cx7-pf-gen4-x8-...), its
    first device only, at this bus address, LnkSta replaced: a DGX Spark rail is Gen5 x4 of the
    card's x16 capability (synthesised values)."""
    t = open("../../tests/fixtures/lspci/lspci-vv-cx7-pf-gen4-x8-downgraded-and-vf-speed-unknown-x0.txt").read()
    first = t.split("\nb1:00.2 ")[0].rstrip("\n") + "\n"
    addr = bdf[5:] if bdf.startswith("0000:") else bdf
    first = first.replace("b1:00.1 Ethernet", f"{addr} Ethernet", 1)
    return first.replace("LnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)", f"LnkSta:\t{sta}")
def ipv4_gid(ip):
    a, b, c, d = (int(x) for x in ip.split("."))
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"
def show_gids_text(dev, netdev, ip, v2_at=3):
    """show_gids as the real mlx5 capture tests/fixtures/rdma/show_gids-mlx5_bond_0-tabs-...:
    link-local v1/v2 at 0/1, the IPv4-mapped fabric address v1/v2 at 2/3 (synthesised values;
    v2_at=2 swaps the IPv4 pair: a RoCE v1 GID at index 3)."""
    ll = "fe80:0000:0000:0000:4ebb:47ff:fe2d:1a17"
    g = ipv4_gid(ip)
    v1, v2 = ("v2", "v1") if v2_at == 2 else ("v1", "v2")
    rows = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
            "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---",
            f"{dev}\t1\t0\t{ll}\t\t\tv1\t{netdev}",
            f"{dev}\t1\t1\t{ll}\t\t\tv2\t{netdev}",
            f"{dev}\t1\t2\t{g}\t{ip}  \t{v1}\t{netdev}",
            f"{dev}\t1\t3\t{g}\t{ip}  \t{v2}\t{netdev}",
            "n_gids_found=4", ""]
    return "\n".join(rows)
HW = ["rx_write_requests", "rx_read_requests", "rx_atomic_requests", "out_of_buffer", "out_of_sequence",
      "duplicate_request", "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err",
      "rx_dct_connect", "resp_local_length_error", "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request",
      "req_remote_access_errors", "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error",
      "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
      "roce_slow_restart_trans", "rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent",
      "rx_icrc_encapsulated"]
def rdma_stat_text(dev, **vals):
    """`rdma statistic show link DEV/1` as the real capture tests/fixtures/rdma/rdma-statistic-show-4x-cx4lx-...
    (one line, the mlx5 counter list), synthesised values: zero unless given."""
    return f"link {dev}/1 " + " ".join(f"{k} {vals.get(k, 0)}" for k in HW) + "\n"

# Reply times (ms) of the real lab capture tests/fixtures/lab/ping-4-ok.txt, reused in order.
PING_MS = [0.324, 0.070, 0.068, 0.070]
def ping_text(ip, count, size):
    t = [PING_MS[i % len(PING_MS)] for i in range(count)]
    lines = [f"PING {ip} ({ip}) {size}({size + 28}) bytes of data."]
    lines += [f"{size + 8} bytes from {ip}: icmp_seq={i + 1} ttl=64 time={x:.3f} ms" for i, x in enumerate(t)]
    avg = sum(t) / count
    mdev = (sum((x - avg) ** 2 for x in t) / count) ** 0.5
    lines += ["", f"--- {ip} ping statistics ---",
              f"{count} packets transmitted, {count} received, 0% packet loss, time {200 * (count - 1)}ms",
              f"rtt min/avg/max/mdev = {min(t):.3f}/{avg:.3f}/{max(t):.3f}/{mdev:.3f} ms", ""]
    return "\n".join(lines)
# n.ping_all (issue 22): several pings at once in one command, as src/primitives/ping_all.rs
# `command` builds it (keep the two alike: the replay answers exact commands), and its output:
# each ping's own answer (stdout, stderr, exit status) under a delimiter line.
def ping_all_cmd(cmds):
    s = "d=$(mktemp -d) || exit 125; trap 'rm -rf -- \"$d\"' EXIT; trap 'exit 143' HUP INT TERM; "
    for k, c in enumerate(cmds, 1):
        s += f'{{ {c} >"$d/{k}" 2>"$d/{k}e"; echo $? >"$d/{k}x"; }} & '
    ks = " ".join(str(k) for k in range(1, len(cmds) + 1))
    s += "until " + " && ".join(f'[ -e "$d/{k}x" ]' for k in range(1, len(cmds) + 1)) + "; do sleep 0.2; printf . >&2; done; "
    s += (f"wait; for i in {ks}; do printf '@@fabcheck-ping %s exit %s\\n' \"$i\" \"$(cat \"$d/${{i}}x\" 2>/dev/null)\"; "
          "cat \"$d/$i\"; printf '@@fabcheck-ping %s stderr\\n' \"$i\"; cat \"$d/${i}e\"; done; printf '@@fabcheck-ping end\\n'")
    return s
def ping_all_out(parts):
    """parts: (exit status, stdout, stderr) per ping, in order."""
    out = ""
    for k, (code, stdout, stderr) in enumerate(parts, 1):
        out += f"@@fabcheck-ping {k} exit {code}\n{stdout}@@fabcheck-ping {k} stderr\n{stderr}"
    return out + "@@fabcheck-ping end\n"
def show_fec_text(iface, active="RS", corrected=0, uncorrectable=0):
    """`ethtool -I --show-fec`: the first three lines as the real DGX Spark capture
    tests/fixtures/ethtool/ethtool-show-fec-dgx-spark-cx7-enp1s0f1np1-auto-rs.txt (Auto, RS),
    this interface; the Statistics block as the real -I capture
    tests/fixtures/ethtool/ethtool-I-show-fec-ice-e810-rs-supported-configured-zero-blocks.txt
    (synthesised values; `active` replaces RS for a fault)."""
    t = open("../../tests/fixtures/ethtool/ethtool-show-fec-dgx-spark-cx7-enp1s0f1np1-auto-rs.txt").read()
    t = t.replace("enp1s0f1np1", iface).replace("Active FEC encoding: RS", f"Active FEC encoding: {active}")
    assert f"Active FEC encoding: {active}" in t
    return t + f"Statistics:\n  corrected_blocks: {corrected}\n  uncorrectable_blocks: {uncorrectable}\n"

# `fabcheck discover` (issue 30 section 2): its sysfs listing, the command read from
# src/primitives/discover.rs (one source: the replay answers exact commands), and the answer of
# a DGX Spark in the listing's format (parse/sysfs_net.rs). SYNTHESISED values: PCI functions
# 0000:01:00.0/.1 and 0002:01:00.0/.1 of the ConnectX-7 (the two PCIe Gen5 x4 paths ServeTheHome
# shows on GB10 systems, and the real ibdev2netdev capture's names), the GUIDs of the real
# DGX Spark ibv_devinfo capture (one sys_image_guid for all four functions), the management
# NIC, Wi-Fi and DMI product name written for this simulation.
def sysfs_command():
    import re
    src = open("../../src/primitives/discover.rs").read()
    body = re.split(r"pub(?:\(crate\))? const SYSFS_COMMAND: &str = concat!\(", src, maxsplit=1)[1].split("\n);", 1)[0]
    return "".join(re.findall(r'r#"(.*?)"#', body, re.S))
SPARK_GUIDS = {"rocep1s0f0": "4cbb:4703:002d:1a16", "rocep1s0f1": "4cbb:4703:002d:1a17",
               "roceP2p1s0f0": "4cbb:4703:002d:1a1a", "roceP2p1s0f1": "4cbb:4703:002d:1a1b"}
def sysfs_text(down=(), rename=None, dmi="NVIDIA_DGX_Spark", gpus=("000f:01:00.0",)):
    """The Spark's listing: rails with carrier at 200G unless in `down`; `rename` maps a netdev
    name to the name it has now (a rail renamed). `dmi`: the DMI product name, as Canonical's
    engineers report real DGX Sparks write it (canonical/secboot#560: `NVIDIA_DGX_Spark`);
    `gpus`: the NVIDIA GPUs' PCI addresses."""
    rn = rename or {}
    net = [("lo", "", "", "", "1", "", "")]
    net.append(("enP7s7", "0007:01:00.0", "r8127", "", "1", "10000", ""))
    for dom in ["", "P2"]:
        for f in [0, 1]:
            name = f"en{dom}p1s0f{f}np{f}"
            up = f == 1 and name not in down
            pci = f"{'0002' if dom else '0000'}:01:00.{f}"
            net.append((rn.get(name, name), pci, "mlx5_core", "", "1" if up else "0", "200000" if up else "", f"p{f}"))
    net.append(("wlP9s9", "0009:01:00.0", "mt7925e", "wireless", "1", "", ""))
    out = [f"net {n} pci={p} driver={d} kind={k} master= carrier={c} speed={sp} port_name={pn}" for n, p, d, k, c, sp, pn in net]
    for dev, g in SPARK_GUIDS.items():
        f = dev[-1]
        dom = "0002" if "P2" in dev else "0000"
        nd = f"en{'P2' if 'P2' in dev else ''}p1s0f{f}np{f}"
        out.append(f"rdma {dev} pci={dom}:01:00.{f} sys_image_guid=4cbb:4703:002d:1a16 node_guid={g} netdevs={rn.get(nd, nd)},")
    out += [f"dmi product_name={dmi}"] + [f"gpu {g}" for g in gpus] + [""]
    return "\n".join(out)

# Platform profile detection (issue 30 section 1, src/primitives/profile.rs): the GPU names, the
# command read from the source (the replay answers exact commands). The answer is SYNTHESISED
# in nvidia-smi's csv,noheader format (one name per line); "NVIDIA GB10" is the name public
# DGX Spark logs show (docs/profiles.md).
def gpu_command():
    import re
    src = open("../../src/primitives/profile.rs").read()
    return re.split(r'pub(?:\(crate\))? const GPU_COMMAND: &str = "', src, maxsplit=1)[1].split('";', 1)[0]
def gpu_text(names=("NVIDIA GB10",)):
    return "".join(f"{n}\n" for n in names)


def ip_route_json(addr_doc, mgmt_gateway):
    """`ip -j route` of a node whose `ip -j addr` answer is addr_doc (issue 30 section 3, step 5):
    a kernel route per address of an UP interface, a DHCP default route via mgmt_gateway on the
    interface holding an address in its subnet. Synthesised in the format of the real captures
    tests/fixtures/lab/ip-j-route-*.json (iproute2 6.1.0): key order dst, gateway, dev, protocol,
    scope, prefsrc, metric, flags; one line."""
    import ipaddress, json
    default, kernel = [], []
    for i in addr_doc:
        if i.get("operstate") != "UP":
            continue
        for a in i.get("addr_info", []):
            if a.get("family") != "inet":
                continue
            net = ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False)
            kernel.append({"dst": str(net), "dev": i["ifname"], "protocol": "kernel", "scope": "link",
                           "prefsrc": a["local"], "flags": []})
            if ipaddress.ip_address(mgmt_gateway) in net:
                default.append({"dst": "default", "gateway": mgmt_gateway, "dev": i["ifname"], "protocol": "dhcp",
                                "prefsrc": a["local"], "metric": 100, "flags": []})
    return json.dumps(default + kernel, separators=(",", ":")) + "\n"
def lat_scaled(text, typical):
    """An ib_write_lat answer (format of the real DGX Spark capture tests/fixtures/perftest/
    ib_write_lat-client-rdma_cm-force-link-IB-dgx-spark.txt) with every latency column of its
    2-byte row times typical/t_typical (used by both simulations' latency faults)."""
    lines = text.split("\n")
    i = max(k for k, l in enumerate(lines) if l.startswith(" 2 "))
    cols = lines[i].split()
    f = typical / float(cols[4])
    cols[2:] = [f"{float(c) * f:.2f}" for c in cols[2:]]
    lines[i] = " " + "       ".join(cols[:2]) + "          " + "           ".join(cols[2:])
    return "\n".join(lines)
def iperf3_json(local, remote, streams, secs, bps):
    """`iperf3 -J` client answer, synthesised in the format of the real captures in
    tests/fixtures/iperf3 (used by both Spark simulations)."""
    import json
    total = int(bps * secs / 8)
    doc = {"start": {"connected": [{"socket": 5 + i, "local_host": local, "local_port": 40000 + i,
                                     "remote_host": remote, "remote_port": 5201} for i in range(streams)],
                     "version": "iperf 3.16",
                     "test_start": {"protocol": "TCP", "num_streams": streams, "blksize": 131072, "omit": 0,
                                    "duration": secs, "bytes": 0, "blocks": 0, "reverse": 0, "tos": 0}},
           "end": {"sum_sent": {"start": 0, "end": secs, "seconds": secs, "bytes": total,
                                "bits_per_second": bps, "retransmits": 412, "sender": True},
                   "sum_received": {"start": 0, "end": secs, "seconds": secs, "bytes": total - 65536,
                                    "bits_per_second": bps * 0.9995, "sender": True}}}
    return json.dumps(doc, indent="\t") + "\n"


def nccl_scaled(text, factor):
    """The healthy synthesised all_reduce_perf answer with every time multiplied by 1/factor
    (bandwidths times factor), the average recomputed: the format is unchanged."""
    out, bws = [], []
    for line in text.split("\n"):
        f = line.split()
        if len(f) == 13 and f[0].isdigit():
            size = int(f[0])
            t1, t2 = float(f[5]) / factor, float(f[9]) / factor
            a1, a2 = size / t1 / 1e3, size / t2 / 1e3
            bws.append(a1)
            line = (f"{f[0]:>12} {f[1]:>13} {f[2]:>9} {f[3]:>7} {f[4]:>7} {t1:8.2f} {a1:7.2f} {a1:7.2f} {f[8]:>7} "
                    f"{t2:8.2f} {a2:7.2f} {a2:7.2f} {f[12]:>7}")
        elif line.startswith("# Avg bus bandwidth"):
            line = f"# Avg bus bandwidth    : {sum(bws) / len(bws):.4f} "
        out.append(line)
    return "\n".join(out)


# fabcheck health's link-flap count (src/primitives/link_flaps.rs COMMAND): the boot's id, then
# the kernel log's link lines. SYNTHESISED in the format of the real captures under
# tests/fixtures/kernel-log/ (mlx5_core's "Link down"/"Link up", dmesg's [seconds] stamp).
KERNEL_LOG_CMD = "cat /proc/sys/kernel/random/boot_id && dmesg >/dev/null && { dmesg | grep -iE 'link (is )?(up|down)'; true; }"


def boot_id(name):
    """A boot id (a UUID, as the kernel gives) fixed per simulated node."""
    import uuid
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, name + ".boot.fabcheck.sim"))


def kernel_log_text(name, events):
    """events: [(seconds since boot, bus id, netdev, "down" or "up")]."""
    lines = "".join(f"[{t:12.6f}] mlx5_core {bdf} {nd}: Link {w}\n" for t, bdf, nd, w in events)
    return boot_id(name) + "\n" + lines


def boot_link_events(bdfs, start=14.037558):
    """mlx5's first carrier report per netdev at boot, down then up 33 ms later (as the real
    capture dmesg-mlx5-boot-down-then-up-cx-40g.txt): not a flap."""
    out = []
    for k, (nd, bdf) in enumerate(bdfs):
        t = start + 0.42 * k
        out += [(t, bdf, nd, "down"), (t + 0.033332, bdf, nd, "up")]
    return out


# The HCAs' PCIe paths (health: gpu pcie errors on RoCE): each rail's RDMA device is its own
# PCIe function below its own root port (a DGX Spark: two Gen5 x4 paths, PCI domains 0000 and
# 0002; SYNTHESISED sysfs paths in the kernel's form /sys/devices/pciDDDD:BB/<root port>/<function>).
SPARK_PCIE = {"rocep1s0f1": "/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.1",
              "roceP2p1s0f1": "/sys/devices/pci0002:00/0002:00:00.0/0002:01:00.1"}
def hca_readlink_cmd(devs):
    """The check's `readlink -f` of every inventory RDMA device's sysfs device (stdlib infiniband
    gpu_pcie_snapshot: no GPU read on a Spark, gdr = false)."""
    return "for p in  " + " ".join(f"/sys/class/infiniband/{d}/device" for d in devs) + '; do readlink -f "$p"; done'
def hca_readlink_text(devs):
    return "".join(SPARK_PCIE[d] + "\n" for d in devs)
# The kernel's AER statistics (sysfs aer_dev_*) with the names of current kernels, in the format
# of the real files tests/fixtures/aer/aer_dev_*-node-exporter-* (as examples/sim-ib's generator);
# `head -v` prints a `==> PATH <==` line before each file and a blank line between (coreutils).
AER_NAMES = {
    "correctable": ["RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr", "CorrIntErr", "HeaderOF"],
    "nonfatal": ["Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP", "ECRC", "UnsupReq",
                 "ACSViol", "UncorrIntErr", "BlockedTLP", "AtomicOpBlocked", "TLPBlockedErr", "PoisonTLPBlocked"],
}
AER_NAMES["fatal"] = AER_NAMES["nonfatal"]
AER_TOTAL = {"correctable": "TOTAL_ERR_COR", "nonfatal": "TOTAL_ERR_NONFATAL", "fatal": "TOTAL_ERR_FATAL"}
def hca_aer_dirs(devs):
    """The directories the check reads, in its order: each RDMA device's function, then the root port above it."""
    return [d for dev in devs for d in (SPARK_PCIE[dev], SPARK_PCIE[dev].rsplit("/", 1)[0])]
def hca_aer_cmd(devs):
    return aer_cmd_of(hca_aer_dirs(devs))
def hca_aer_text(devs, over=None):
    return aer_text_of(hca_aer_dirs(devs), over)
def aer_cmd_of(dirs):
    return "head -v -n 40 " + " ".join(f"{d}/aer_dev_{s}" for d in dirs for s in ["correctable", "nonfatal", "fatal"])
def aer_text_of(dirs, over=None):
    """`head -v -n 40` of every directory's three aer_dev_* files: every count 0 (synthesised);
    `over`: {device address: {severity: {name: count}}} replacing some."""
    files = []
    for d in dirs:
        for sev in ["correctable", "nonfatal", "fatal"]:
            c = (over or {}).get(d.rsplit("/", 1)[1], {}).get(sev, {})
            body = "".join(f"{n} {c.get(n, 0)}\n" for n in AER_NAMES[sev]) + f"{AER_TOTAL[sev]} {sum(c.values())}\n"
            files.append(f"==> {d}/aer_dev_{sev} <==\n{body}")
    return "\n".join(files)
