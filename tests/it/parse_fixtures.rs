//! Every real fixture in tests/fixtures/ is parsed here and checked against concrete values read
//! from the fixture by hand. `FIXTURES` maps each fixture file to the test that uses it;
//! `every_fixture_is_referenced` fails when a file in the directory is not listed (or a listed
//! test does not exist), so new fixtures cannot be added without a test.

use fabcheck::parse::{self, ParseError};
use std::path::Path;

fn fx(path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn close(a: Option<f64>, b: f64) {
    let a = a.unwrap_or_else(|| panic!("expected {b}, got None"));
    assert!(
        (a - b).abs() <= 1e-6_f64.max(b.abs() * 1e-6),
        "expected {b}, got {a}"
    );
}

/// Every KIND must reject `text` with a ParseError naming the kind and a real line.
fn rejected_by_all(text: &str) -> Vec<ParseError> {
    parse::parsers()
        .iter()
        .map(|p| (p.kind, parse::parse(p.kind, text)))
        .map(|(kind, r)| match r {
            Ok(v) => panic!("`{kind}` accepted a foreign fixture: {v}"),
            Err(e) => {
                assert_eq!(e.kind, kind);
                assert!(e.line >= 1, "{e}");
                e
            }
        })
        .collect()
}

/// (fixture path, test function that uses it).
const FIXTURES: &[(&str, &str)] = &[
    ("kernel-log/dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt", "dmesg_link_lines"),
    ("kernel-log/dmesg-mlx5-boot-down-then-up-cx-40g.txt", "dmesg_link_lines"),
    ("kernel-log/dmesg-tail-ixgbe-up-mlx5-down.txt", "dmesg_link_lines"),
    ("kernel-log/dmesg-arm64-caller-id-mlx5-link-down.txt", "dmesg_link_lines"),
    ("lldp/lldpctl-f-json-1.0.16-two-interfaces-list-portid-ifname.json", "lldpctl_shapes"),
    ("lldp/lldpctl-f-json-1.0.16-one-interface-neighbour-portid-mac.json", "lldpctl_shapes"),
    ("lldp/lldpctl-f-json-1.0.16-no-neighbour.json", "lldpctl_shapes"),
    ("lldp/lldpctl-1.0.16-no-daemon-stderr.txt", "lldpctl_shapes"),
    ("ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt", "perfquery_extended_two_ports"),
    ("ibdiags/perfquery-classic-mlx4-fdr-lid7-capmask-0x1400-32bit-data.txt", "perfquery_classic"),
    ("ibdiags/iblinkinfo-hdr-quantum-21ca-sharp-aggregation-node-down-polling.txt", "iblinkinfo_hdr_sections"),
    ("ibdiags/iblinkinfo-edr-grep-up-sb7700-no-section-headers.txt", "iblinkinfo_edr_grep"),
    ("ibdiags/ibdiagnet-routing-ar-dump-fabric-summary-15-nodes-stage-table-discovery-3-warnings.txt", "ibdiagnet_summary"),
    ("lspci/lspci-vv-s-cx7-osfp-ndr-gen5-x16-ok-markers-spaces-vpd-trailing-spaces.txt", "lspci_cx7_ok_markers"),
    ("rdma/show_counters-mlx5_bond_0-hw-counters-nonzero-cnp-ecn-out_of_sequence.txt", "rdma_statistic_show_counters"),
    ("ethtool/ethtool-show-fec-dgx-spark-cx7-enp1s0f1np1-auto-rs.txt", "show_fec_dgx_spark"),
    ("lspci/lspci-vvv-s-0000-00-00.0-grep-lnk-dgx-spark-root-port-trained-2.5gts-x4-aspm.txt", "lspci_dgx_spark_root_port_grep"),
    ("lspci/lspci-vvv-s-0002-00-00.0-grep-lnk-dgx-spark-root-port-trained-2.5gts-x4-no-marker.txt", "lspci_dgx_spark_root_port_grep"),
    ("lspci/lspci-vvv-s-0002-00-00.0-grep-lnk-dgx-spark-root-port-gen5-x4-healthy.txt", "lspci_dgx_spark_root_port_grep"),
    ("ethtool-m/ethtool-m-sfp-10g-sr-boyang-single-lane-rx-minus-13.57-dbm-hash-prefix-stripped.txt", "ethtool_module_sfp"),
    ("ethtool-m/ethtool-m-qsfp28-100g-sr4-mellanox-mma1b00-per-channel-tabs-thresholds.txt", "ethtool_module_qsfp28_sr4"),
    ("ethtool-m/ethtool-m-qsfp-plus-40g-sr4-finisar-laser-off-minus-inf-dbm-zero-thresholds.txt", "ethtool_module_laser_off"),
    ("ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt", "ethtool_module_dac"),
    ("mlnx_qos/mlnx_qos-dscp-firmware-dcbx-pfc3-ets-50-50-max-buffer.txt", "mlnx_qos_dscp_pfc3"),
    ("mlnx_qos/mlnx_qos-pcp-os-dcbx-no-pfc-tsa-vendor-default.txt", "mlnx_qos_pcp_default"),
    ("ethtool/ethtool-S-mlx5-phy-section-crc-symbol-pcs-errors-fec-corrected-bits-lane3-comments-stripped.txt", "ethtool_stats_phy_counters"),
    ("ethtool/ethtool-S-cx6dx-100g-grep-err-nonzero-crc-symbol-all-lanes-power-budget.txt", "ethtool_stats_phy_counters"),
    ("ethtool/ethtool-I-show-fec-per-lane-stats-cover-letter-one-space-indent.txt", "show_fec_statistics"),
    ("ethtool/ethtool-I-show-fec-ice-e810-rs-supported-configured-zero-blocks.txt", "show_fec_statistics"),
    ("ethtool/ethtool-I-show-fec-6.18-histogram-per-lane-brackets-uncorrectable-4.txt", "show_fec_statistics"),
    ("ethtool/ethtool-show-fec-virtio-netlink-operation-not-supported.txt", "show_fec_not_supported"),
    ("rdma/rdma-statistic-show-4x-cx4lx-ofed-iproute2-nonzero-out_of_buffer-cqe-errors.txt", "rdma_statistic_nonzero"),
    ("rdma/rdma-statistic-show-link-rocep8s0f0-wrapped-optional-set-cc-counters.txt", "rdma_statistic_wrapped_optional"),
    ("rdma/show_gids-mlx5_bond_0-tabs-ipv4-v1-v2-n_gids_found.txt", "show_gids_tabs"),
    ("rdma/show_gids-hrn3-only-v2-and-mlx5-bond-tabs.txt", "show_gids_tabs"),
    ("rdma/show_gids-6x-mlx5-cx-spaces-ipv4-on-two-devices-no-trailer.txt", "show_gids_spaces"),
    ("rdma/show_gids-cx4-roce-plus-ib-port-empty-netdev-n_gids_found.txt", "show_gids_spaces"),
    ("lspci/lspci-vv-cx7-pf-gen4-x8-downgraded-and-vf-speed-unknown-x0.txt", "lspci_cx7_downgraded"),
    ("lspci/lspci-vv-h200-firecracker-vm-virtio-gen5-x16.txt", "lspci_h200_vm"),
    ("nccl-tests/all_reduce-v2.19.6-nccl2.28.9-1xH200-g1-debug-info-netib-nodevice-socket-firecracker.txt", "nccl_h200_2_28_socket"),
    ("nccl-tests/reduce_scatter-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt", "nccl_other_collectives_one_h100"),
    ("nccl-tests/all_gather-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt", "nccl_other_collectives_one_h100"),
    ("nccl-tests/alltoall-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt", "nccl_other_collectives_one_h100"),
    ("nccl-tests/sendrecv-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt", "nccl_other_collectives_one_h100"),
    ("nccl-tests/nccl-info-gdrdma-channels-a100-roce-nccl707.txt", "nccl_gdr_info_lines"),
    ("nccl-tests/nccl-info-gdr-disabled-for-hca-roce-nccl1537.txt", "nccl_gdr_info_lines"),
    ("nccl-tests/nccl-info-channels-via-net-ibext-no-gdrdma-nccl1814.txt", "nccl_gdr_info_lines"),
    ("bonding/8023ad-2x25g-healthy-layer3+4-v3.7.1.txt", "bonding_8023ad_healthy"),
    ("bonding/8023ad-2x25g-lacp-fast-flapping-slave-sm_vars-v4.18.txt", "bonding_8023ad_flapping"),
    ("bonding/8023ad-3slaves-all-down-no-partner-lacp-active-fc41.txt", "bonding_8023ad_all_down"),
    ("bonding/8023ad-2x1g-slave-up-no-lacp-partner-state-79-other-down-split-aggregators-v3.7.1.txt", "bonding_8023ad_no_partner"),
    ("bonding/8023ad-ubuntu-6.8-no-lacpdu-sent-partner-zero-state-77-double-blank-lines.txt", "bonding_8023ad_no_partner"),
    ("bonding/8023ad-old-v3.2.4-rhel5-no-speed-duplex-partner-mac-zero-split-aggregators.txt", "bonding_8023ad_old_split"),
    ("bonding/active-backup-1g-old-blank-lines-with-space.txt", "bonding_active_backup_blank_space"),
    ("bonding/active-backup-2x25g-iscsi-v3.7.1-peer-notif.txt", "bonding_active_backup_25g"),
    ("bonding/active-backup-primary-reselect-always-ubuntu-6.8.txt", "bonding_active_backup_primary"),
    ("bonding/balance-rr-no-slaves-mii-down-v4.18.txt", "bonding_no_slaves"),
    ("bonding/balance-xor-no-slaves-patched-kernel-hash-vlansrc-5.txt", "bonding_no_slaves"),
    ("ethtool/ethtool-S-cx4lx-25g-grep-discards-prio-no-header.txt", "ethtool_stats_grep"),
    ("ethtool/ethtool-S-cx4lx-25g-grep-pause-pci-no-header-tx-pause-nonzero.txt", "ethtool_stats_grep"),
    ("ethtool/ethtool-S-mlx5-grep-rdma-vport-counters-bond-member.txt", "ethtool_stats_grep"),
    ("ethtool/ethtool-S-mlx5-kernel5.15-xdp-heavy-discards-partial.txt", "ethtool_stats_mlx5_kernels"),
    ("ethtool/ethtool-S-mlx5-kernel6.5-xdp-page-pool-counters-partial.txt", "ethtool_stats_mlx5_kernels"),
    ("ethtool/ethtool-cx4lx-25g-link-down-training-failure.txt", "ethtool_link_down_training_failure"),
    ("ethtool/ethtool-cx4lx-25g-nic-at-10g-lanes-link-up.txt", "ethtool_25g_at_10g_lanes"),
    ("ethtool/ethtool-grep-A3-speed-400g-lanes8-mlxsw-spectrum-swp1.txt", "ethtool_grep_400g"),
    ("ethtool/ethtool-i-cx6dx-empty-expansion-rom-trailing-space.txt", "ethtool_driver_cx6dx"),
    ("ethtool/ethtool-i-cx6dx-inbox-kernel-driver-version-5.0-0.txt", "ethtool_driver_cx6dx"),
    ("ethtool/ethtool-i-ipoib-mlx5_core-ib_ipoib-azure-cx6-ofed24.07.txt", "ethtool_driver_ipoib"),
    ("ethtool/ethtool-mlx4-cx3-10g-dac-tabs-autoneg-off.txt", "ethtool_mlx4_tabs"),
    ("ethtool/ethtool-mlx5-25g-fibre-at-10g-older-ethtool-msglevel.txt", "ethtool_older_msglevel"),
    ("ethtool/ethtool-pathological-all-link-modes-800G-half-duplex-no-link.txt", "ethtool_pathological"),
    ("ethtool/ethtool-show-eee-disabled-supported-modes-igc-2.5g.txt", "eee_disabled"),
    ("ethtool/ethtool-show-eee-not-supported-igc-before-fix.txt", "eee_not_supported"),
    ("ethtool/ethtool-show-eee-old-capital-Settings-enabled-active-imx8.txt", "eee_enabled_active"),
    ("iperf3/client-text-P3-t30-sum-lines-virtio-bond.txt", "iperf3_plain_text_rejected"),
    ("iperf3/client-text-single-stream-1g-retrans.txt", "iperf3_plain_text_rejected"),
    ("iperf3/json-3.16-client-udp-unlimited-92pct-loss-azure.json", "iperf3_udp"),
    ("iperf3/json-3.9-client-tiny-10KB-sender-field.json", "iperf3_tiny"),
    ("iproute2/ip-br-c-a-gpu-node-8-roce-rails-slash31-bond0.txt", "ip_brief_rejected"),
    ("iproute2/ip-br-c-a-gpu-node-ens-naming-bond-members-no-addr.txt", "ip_brief_rejected"),
    ("iproute2/ip-brief-link-show-laptop-no-carrier-no-trailing-space.txt", "ip_brief_rejected"),
    ("iproute2/ip-c-br-link-veth-at-ifN-bridges-trailing-space.txt", "ip_brief_rejected"),
    ("iproute2/ip-c-br-link-veth-pairs-M-DOWN-partial.txt", "ip_brief_rejected"),
    ("iproute2/ip-d-j-addr-laptop-wg-wwan-sit-netplan-testdata.json", "ip_addr_details_laptop"),
    ("netplan/netplan-generate-root-dir-invalid-yaml-unclosed-flow-sequence-0.106.txt", "netplan_generate_error_reaches_the_simulation_unchanged"),
    ("slurm/scontrol-22.05-show-node-o-idle.txt", "scontrol_show_node_state_and_reason"),
    ("slurm/scontrol-22.05-show-node-o-drained-by-fabcheck.txt", "scontrol_show_node_state_and_reason"),
    ("slurm/scontrol-22.05-show-node-o-not-found.txt", "scontrol_show_node_state_and_reason"),
    ("slurm/srun-22.05-v-step-of-allocation.txt", "srun_step_of_an_allocation"),
    ("slurm/srun-22.05-v-new-job-outside-allocation.txt", "srun_new_job_outside_an_allocation"),
    ("slurm/srun-22.05-v-queued-killed-by-timeout.txt", "srun_new_job_outside_an_allocation"),
    ("slurm/srun-22.05-v-other-users-job-access-denied.txt", "srun_refusals_and_failures"),
    ("slurm/srun-22.05-v-node-not-in-allocation.txt", "srun_refusals_and_failures"),
    ("slurm/srun-22.05-v-step-program-missing-execve.txt", "srun_refusals_and_failures"),
    ("lab/ethtool-S-veth.txt", "lab_ethtool_veth"),
    ("lab/ethtool-i-veth.txt", "lab_ethtool_veth"),
    ("lab/ethtool-show-eee-veth-unsupported.txt", "lab_ethtool_veth"),
    ("lab/ethtool-veth.txt", "lab_ethtool_veth"),
    ("lab/ip-j-addr-netns.json", "lab_ip_addr"),
    ("lab/ip-j-addr-neigh-peer-idvb.json", "lab_ip_neigh"),
    ("lab/ip-j-neigh-show-addr-dev-incomplete.json", "lab_ip_neigh"),
    ("lab/ip-j-neigh-show-addr-dev-no-entry.json", "lab_ip_neigh"),
    ("lab/ip-j-neigh-show-addr-dev-reachable.json", "lab_ip_neigh"),
    ("lab/ip-j-neigh-show-all-two-entries.json", "lab_ip_neigh"),
    ("lab/iperf3-3.12-J-P4-t2.json", "lab_iperf3_p4"),
    ("lab/iperf3-3.12-J-connection-refused.json", "lab_iperf3_refused"),
    ("lab/iperf3-3.12-text-P2.txt", "iperf3_plain_text_rejected"),
    ("lab/ping-3-unreachable-100pct-loss.txt", "lab_ping"),
    ("lab/ping-4-ok.txt", "lab_ping"),
    ("lab/ping-unknown-host.txt", "lab_ping"),
    (
        "lab/sysfs-net-listing-lab-node-veth-no-rdma.txt",
        "lab_sysfs_listing",
    ),
    (
        "lab/sysfs-net-listing-vm-host-bridges-veth.txt",
        "lab_sysfs_listing",
    ),
    ("nccl-real/h200-all_gather_1gpu.txt", "nccl_real_all_gather"),
    ("nccl-real/h200-all_reduce_1gpu.json", "nccl_json_matches_text"),
    ("nccl-real/h200-all_reduce_1gpu.txt", "nccl_real_all_reduce"),
    ("nccl-real/h200-all_reduce_2.19.1_plain.txt", "nccl_real_2_19_1_flags"),
    ("nccl-real/h200-all_reduce_I1.txt", "nccl_real_2_19_1_flags"),
    ("nccl-real/h200-all_reduce_C1.txt", "nccl_real_2_19_1_flags"),
    ("nccl-real/h200-all_reduce_S1.txt", "nccl_real_2_19_1_flags"),
    ("nccl-real/h200-all_gather_I1.txt", "nccl_real_2_19_1_flags"),
    ("nccl-real/h200-all_reduce_nccl-debug-init-net.txt", "nccl_real_2_19_1_debug"),
    ("nccl-real/h200-all_reduce_1gpu_json_run.txt", "nccl_json_matches_text"),
    ("nccl-real/h200-all_reduce_alltypes.txt", "nccl_real_alltypes_failure"),
    ("nccl-real/h200-all_reduce_g2_error.txt", "nccl_real_invalid_gpus"),
    ("nccl-real/h200-alltoall_1gpu-size-0-row-NA-inplace.txt", "nccl_real_alltoall_na"),
    ("nccl-real/h200-mpirun-np1-tag-output-nccl-debug.txt", "nccl_real_tag_output_socket"),
    ("nccl-real/h200-mpirun-np2-invalid-gpus-openmpi-trailer.txt", "nccl_real_invalid_gpus"),
    ("nccl-tests/all_gather-2node-16xB200-gke-rdma-nccl2.26.txt", "nccl_all_gather_b200"),
    ("nccl-tests/all_gather-dgx2-12xV100-old-no-redop-error-col-FAILED.txt", "nccl_old_all_gather_failed"),
    ("nccl-tests/all_reduce-1node-2xA100-g2-nccl2.20-debug-info-netib-nodevice-socket-indented.txt", "nccl_indented_socket"),
    ("nccl-tests/all_reduce-2node-16xA100-oci-roce-sriov-8B-8G.txt", "nccl_oci_roce"),
    ("nccl-tests/all_reduce-2node-16xH100-k8s-mpijob-512M-8G.txt", "nccl_h100_k8s"),
    ("nccl-tests/all_reduce-2node-V100-efa-nccl2.6-old-ring-info-lines.txt", "nccl_efa_libfabric"),
    ("nccl-tests/all_reduce-4xK80-azureml-error-col-nccl-info-in-table.txt", "nccl_k80_info_in_table"),
    ("nccl-tests/all_reduce-dgx2-12xV100-old-error-col-single-process-g12.txt", "nccl_old_all_reduce_error_col"),
    ("nccl-tests/all_reduce_mpi-v2.18.0-socket-2rank-1gpu-tag-output-collective-concluded.txt", "nccl_v218_tag_output"),
    ("nccl-tests/alltoall-1rank-rtx5090-avg-busbw-zero-integer-huge-algbw.txt", "nccl_alltoall_one_rank"),
    ("nccl-tests/alltoall-v2.18.3-2node-16xRTX6000D-cx8-spcx-mpi-help-in-header-NA.txt", "nccl_alltoall_mpi_help"),
    ("nccl-tests/rccl-tests-all_reduce-FAILURE-unhandled-cuda-error-nThreads-colon-header-rx7900xtx.txt", "nccl_rccl_failure"),
    ("nvidia-smi/topo-m-1xH200-ansi-underline-header.txt", "topo_single_gpu_ansi"),
    ("nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt", "topo_b200_spaces"),
    ("nvidia-smi/topo-m-tabs-8gpu-12nic-single-numa-bond-nics.txt", "topo_tabs_12_nics"),
    ("nvidia-smi/topo-mp-8xH100-12nic-2numa-gpu-numa-id-NA-tabs.txt", "topo_tabs_12_nics"),
    ("perftest/ib_read_bw-cx7-ndr-ib-gbits-cpufreq-warning.txt", "perftest_read_bw_cx7_gbits"),
    ("perftest/ib_read_bw-mlx4-fdr-ib-all-sizes-mbsec.txt", "perftest_read_bw_mlx4_mbsec"),
    ("perftest/ib_read_lat-server-roce-mlx5-no-result-table.txt", "perftest_read_lat_server_no_table"),
    ("perftest/ib_send_bw-error-ib-device-not-found.txt", "perftest_error_outputs"),
    ("perftest/ib_send_bw-softroce-rxe-client.txt", "perftest_send_bw_rxe_client_server"),
    ("perftest/ib_send_bw-softroce-rxe-server-waiting-banner-peak-warning.txt", "perftest_send_bw_rxe_client_server"),
    ("perftest/ib_send_lat-cx7-ndr-ib-cpufreq-warning.txt", "perftest_send_lat_cx7"),
    ("perftest/ib_send_lat-softroce-rxe-server-merged-columns.txt", "perftest_send_lat_fused_columns"),
    ("perftest/ib_write_bw-bidir-all-sizes-gbits-roce-rocm-doc-indented.txt", "perftest_write_bw_bidir_indented"),
    ("perftest/ib_write_bw-client-bidir-q4-all-sizes-ionic-older-perftest-enhanced-reorder.txt", "perftest_ionic_client_server_agree"),
    ("perftest/ib_send_lat-error-port-state-down-couldnt-set-link-layer.txt", "perftest_error_outputs"),
    ("perftest/ib_write_bw-error-couldnt-connect-client.txt", "perftest_error_outputs"),
    ("perftest/ib_write_bw-error-rdmacm-client-modify-qp-rts.txt", "perftest_error_outputs"),
    ("perftest/ib_write_bw-error-rdmacm-server-read-keys.txt", "perftest_error_outputs"),
    ("perftest/ib_write_bw-mlx4-fdr-ib-all-sizes-mbsec-old-no-trailer.txt", "perftest_write_bw_mlx4_no_trailer"),
    ("perftest/ib_write_bw-newest-server-bidir-q4-all-sizes-ionic-400g-connected-completed.txt", "perftest_ionic_client_server_agree"),
    ("perftest/ib_write_bw-run_perftest_loopback-interleaved-server-client-azure-hdr.txt", "perftest_loopback_interleaved"),
    ("perftest/ib_write_bw-server-gdr-use_rocm-mi355x-ionic-bidir.txt", "perftest_server_rocm"),
    ("perftest/ib_write_bw-server-roce-duration-header-MBsec-but-value-Gbps.txt", "perftest_server_unit_mismatch"),
    ("perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt", "perftest_server_uc_single_row"),
    ("perftest/ib_write_lat-client-rdma_cm-force-link-IB-dgx-spark.txt", "perftest_write_lat_rdma_cm"),
    ("perftest/ib_write_lat-mlx4-fdr-ib-all-sizes.txt", "perftest_write_lat_mlx4_all_sizes"),
    ("rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt", "ibdev2netdev_dgx_spark"),
    ("rdma/ibdev2netdev-roce-lag-bond-mlx5_bond_0-and-huawei-hrn3.txt", "ibdev2netdev_roce_lag"),
    ("rdma/ibstat-11ca-mixed-cx8-down-cx7-rate100-b300-host.txt", "ibstat_b300_mixed"),
    ("rdma/ibstat-12ca-h100-roce-cx7-cx6dx-down-polling-disabled-tabs.txt", "ibstat_h100_roce_tabs"),
    ("rdma/ibstat-8ca-azure-a100-hdr-then-ibpanic-exit255.txt", "ibstat_ibpanic_partial"),
    ("rdma/ibstatus-9dev-azure-a100-hdr-plus-eth-vf.txt", "ibstatus_azure_hdr"),
    ("rdma/ibv_devices-dgx-spark-rocep-naming.txt", "foreign_tools_rejected"),
    ("rdma/ibv_devinfo-8xcx7-ndr-ib-dell-psid-noncontiguous-names.txt", "ibv_devinfo_8x_cx7_ib"),
    ("rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt", "ibv_devinfo_dgx_spark"),
    ("rdma/ibv_devinfo-mlx4-connectx3-2port-port2-down.txt", "ibv_devinfo_mlx4_two_ports"),
    ("rdma/ibv_devinfo-v-softroce-rxe0.txt", "ibv_devinfo_verbose_rxe"),
    ("rdma/ofed_info-s-doca-ofed-internal-23.07-indented.txt", "ofed_info_doca"),
    ("rdma/rdma-link-show-old-format-bf3-roce-lag-mlx5_bond-indented.txt", "rdma_link_old_format"),
    ("rdma/rdma-link-softroce-rxe-renamed-rocep-trailing-space.txt", "rdma_link_new_format"),
    ("rdma/rdma-link-ib-cx5-subnet-prefix-lid-sm_lid-no-netdev.txt", "rdma_link_infiniband"),
    ("nccl-tests/nccl-info-net-ib-merged-nics-ibext_v8-roce-nccl-tests373.txt", "nccl_net_using_lines"),
    ("iproute2/ip-json-4-route-show-ubuntu-container-multiline.json", "ip_route_container_multiline"),
    ("lab/ip-j-route-host-default-kernel.json", "ip_route_host_default"),
    ("lab/ip-j-route-netns-static-dhcp-blackhole-linkdown.json", "ip_route_static_dhcp_blackhole_linkdown"),
    ("lab/ip-j-6-route-netns-ra-expires-kernel.json", "ip_route_v6_ra_expires"),
    ("lab/ip-j-6-route-empty-netns.json", "ip_route_v6_empty"),
    ("ibdiags/sminfo-master-lid37-hca-prio14.txt", "sminfo_masters"),
    ("ibdiags/sminfo-master-lid15-sun-dcs-switch-short-guid.txt", "sminfo_masters"),
    ("ibdiags/sminfo-master-lid4-qdr-opensmd-short-guid.txt", "sminfo_masters"),
    ("lspci/lspci-vvv-s-amd-matisse-gpp-bridge-acsctl-reqredir-cmpltredir-on.txt", "lspci_bridge_acs_on"),
    ("nvidia-smi/proc-driver-nvidia-version-open-kernel-module-580.txt", "nvidia_version_open_and_proprietary"),
    ("nvidia-smi/proc-driver-nvidia-version-proprietary-515.txt", "nvidia_version_open_and_proprietary"),
    ("rdma/sysfs-pkeys-azure-hpc-tenant-0x800b-default-limited-0x7fff.txt", "ib_pkeys_azure"),
    ("ibdiags/mlxlink-m-c-bluefield3-100g-dac-fs-q28-pc03-ber-15e-255.txt", "mlxlink_dac_counters_and_module"),
    ("ibdiags/mlxlink-show-module-cx7-ndr-osfp-passive-dac-fs-osfpfl-400g-pc01-zero-thresholds.txt", "mlxlink_ndr_dac_module_zero_thresholds"),
    ("ibdiags/mlxlink-m-grep-dbm-rx-tx-power-4-lanes-alarm-thresholds.txt", "mlxlink_optical_power_lanes_and_thresholds"),
    ("ibdiags/mlxlink-port-type-pcie-e-cx6-gen3-x16-eye-opening-16-lanes.txt", "mlxlink_eye_opening_and_errors"),
    ("ibdiags/mlxlink-port-type-pcie-e-cx6-gen1-x4-errors-no-eye-below-gen3.txt", "mlxlink_eye_opening_and_errors"),
    ("ibdiags/ibtracert-llnl-hype-qib-3-switch-hops-through-core-s205a.txt", "ibtracert_paths"),
    ("ibdiags/ibtracert-ibsim-rail-leaf-spine-leaf-cross-su-5-to-12.txt", "ibtracert_paths"),
    ("iommu/proc-cmdline-fdio-csit-denverton-intel_iommu-on-iommu-pt.txt", "iommu_modes"),
    ("iommu/iommu-group-type-firecracker-vm-no-iommu-none.txt", "iommu_modes"),
    ("ibdiags/ibqueryerrors-sx6036-switch-8-ports-hcas-xmitwait-mailing-list.txt", "ibqueryerrors_sections"),
    ("ibdiags/ibqueryerrors-ibsim-leaf-uplink-symbol-errors-link-downed.txt", "ibqueryerrors_sections"),
    ("ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt", "ibnetdiscover_links"),
    ("aer/aer_dev_correctable-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt", "aer_statistics_short_and_long_names"),
    ("aer/aer_dev_nonfatal-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt", "aer_statistics_short_and_long_names"),
    ("aer/aer_dev_fatal-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt", "aer_statistics_short_and_long_names"),
    ("aer/aer_dev_correctable-kernel-abi-doc-sample-long-names-receiver-error-2.txt", "aer_statistics_short_and_long_names"),
    ("aer/aer_dev_fatal-kernel-abi-doc-sample-long-names.txt", "aer_statistics_short_and_long_names"),
    ("aer/head-v-aer-dev-stderr-firecracker-vm-h100-no-aer-files.txt", "aer_files_absent_in_a_vm"),
    ("nvidia-smi/q-1xH100-pcie-gen5-x16-replays-0-firecracker-580.txt", "nvidia_smi_q_replay_counters"),
    ("nvidia-smi/q-8xV100-sxm2-550-pci-sections-excerpt.txt", "nvidia_smi_q_replay_counters"),
];

#[test]
fn every_fixture_is_referenced() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut on_disk = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("fixture dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(&root)
                    .expect("under root")
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel != "SOURCES.tsv" {
                    on_disk.push(rel);
                }
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|(p, _)| p.to_string()).collect();
    listed.sort();
    let missing: Vec<_> = on_disk.iter().filter(|p| !listed.contains(p)).collect();
    let stale: Vec<_> = listed.iter().filter(|p| !on_disk.contains(p)).collect();
    assert!(missing.is_empty(), "fixtures without a test: {missing:?}");
    assert!(
        stale.is_empty(),
        "listed fixtures that do not exist: {stale:?}"
    );
    // Each listed test exists and really reads the fixture.
    let src = include_str!("parse_fixtures.rs");
    for (path, test) in FIXTURES {
        assert!(
            src.contains(&format!("fn {test}()")),
            "no test fn {test} for {path}"
        );
        assert!(
            src.matches(path).count() >= 2,
            "{path} is listed but never read by {test}"
        );
    }
    // SOURCES.tsv describes every fixture.
    let sources = fx("SOURCES.tsv");
    for p in &on_disk {
        assert!(
            sources
                .lines()
                .any(|l| l.split('\t').next() == Some(p.as_str())),
            "{p} missing from SOURCES.tsv"
        );
    }
}

/// `fabcheck discover`'s sysfs listing, captured on a lab node (veths, no RDMA, no DMI) and on
/// the lab's host (virtio NIC, bridges and the veth ends enslaved to them).
#[test]
fn lab_sysfs_listing() {
    use fabcheck::parse::sysfs_net::parse;
    let s = parse(&fx("lab/sysfs-net-listing-lab-node-veth-no-rdma.txt")).unwrap();
    let names: Vec<&str> = s.netdevs.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["fab0", "fab1", "lo", "mgmt0"]);
    assert_eq!(s.netdevs[0].carrier, Some(true));
    assert_eq!(s.netdevs[0].speed_mbps, Some(10000));
    assert_eq!(s.netdevs[0].pci, None);
    assert_eq!(s.netdevs[2].speed_mbps, None);
    assert!(s.rdma.is_empty() && s.gpus.is_empty());
    assert_eq!(s.dmi_product_name, None);
    let h = parse(&fx("lab/sysfs-net-listing-vm-host-bridges-veth.txt")).unwrap();
    let eth0 = &h.netdevs[0];
    assert_eq!(eth0.name, "eth0");
    assert_eq!(eth0.driver.as_deref(), Some("virtio_net"));
    assert_eq!(eth0.pci.as_deref(), Some("virtio2"));
    assert_eq!(eth0.speed_mbps, None, "speed -1: no speed");
    let veth = h.netdevs.iter().find(|n| n.name == "fcf0-lab01").unwrap();
    assert_eq!(veth.master.as_deref(), Some("fclabf0"));
    let br = h.netdevs.iter().find(|n| n.name == "fclabf0").unwrap();
    assert_eq!(br.kind.as_deref(), Some("bridge"));
    assert_eq!(br.master, None);
}

// ---------------------------------------------------------------- ethtool

#[test]
fn ethtool_link_down_training_failure() {
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-cx4lx-25g-link-down-training-failure.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("nic_pve02_stor"));
    assert_eq!(e.speed_mbps, None);
    assert_eq!(e.duplex, None);
    assert_eq!(e.link_detected, Some(false));
    assert_eq!(
        e.link_detected_reason.as_deref(),
        Some("Link training failure, Remote side is not ready yet")
    );
    assert_eq!(e.auto_negotiation, Some(true));
    assert_eq!(e.port.as_deref(), Some("Direct Attach Copper"));
    assert_eq!(e.lanes, None);
    assert_eq!(e.supported_link_modes.len(), 5);
    assert_eq!(
        e.advertised_link_modes.last().map(String::as_str),
        Some("25000baseSR/Full")
    );
    assert_eq!(e.supported_fec_modes, ["None", "RS", "BASER"]);
    assert!(e.advertised_fec_modes.is_empty()); // "Not reported"
}

#[test]
fn ethtool_25g_at_10g_lanes() {
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-cx4lx-25g-nic-at-10g-lanes-link-up.txt",
    ))
    .unwrap();
    assert_eq!(e.speed_mbps, Some(10000));
    assert_eq!(e.lanes, Some(1));
    assert_eq!(e.duplex.as_deref(), Some("full"));
    assert_eq!(e.link_detected, Some(true));
    assert_eq!(e.link_detected_reason, None);
    assert!(e
        .supported_link_modes
        .contains(&"25000baseSR/Full".to_string()));
    assert_eq!(e.advertised_fec_modes, ["None"]);
}

/// `Settings for IFACE:` behind a fan-out tool's prefix: pdsh / clush `node01: ` and mpirun
/// `--tag-output` `[1,0]<stdout>:` put it before every line. The input is each real fixture
/// with that prefix added to every line, as those tools print it; the result must equal the
/// unprefixed parse.
#[test]
fn ethtool_prefixed_by_fanout_tool() {
    for f in [
        "ethtool/ethtool-cx4lx-25g-nic-at-10g-lanes-link-up.txt",
        "ethtool/ethtool-mlx4-cx3-10g-dac-tabs-autoneg-off.txt",
        "ethtool/ethtool-cx4lx-25g-link-down-training-failure.txt",
    ] {
        let text = fx(f);
        let plain = parse::ethtool::parse(&text).unwrap();
        assert!(plain.interface.is_some(), "{f}");
        for prefix in ["node01: ", "gpu-a17.cluster: ", "[1,0]<stdout>:"] {
            let tagged: String = text.lines().map(|l| format!("{prefix}{l}\n")).collect();
            let e = parse::ethtool::parse(&tagged).unwrap_or_else(|e| panic!("{f} {prefix}: {e}"));
            assert_eq!(e, plain, "{f} with prefix {prefix:?}");
        }
    }
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-cx4lx-25g-nic-at-10g-lanes-link-up.txt",
    ))
    .unwrap();
    assert_eq!(e.speed_mbps, Some(10000));
}

#[test]
fn ethtool_grep_400g() {
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-grep-A3-speed-400g-lanes8-mlxsw-spectrum-swp1.txt",
    ))
    .unwrap();
    assert_eq!(e.interface, None);
    assert_eq!(e.speed_mbps, Some(400000));
    assert_eq!(e.lanes, Some(8));
    assert_eq!(e.duplex.as_deref(), Some("full"));
    assert_eq!(e.auto_negotiation, Some(true));
    assert_eq!(e.link_detected, None);
}

#[test]
fn ethtool_mlx4_tabs() {
    let e = parse::ethtool::parse(&fx("ethtool/ethtool-mlx4-cx3-10g-dac-tabs-autoneg-off.txt"))
        .unwrap();
    assert_eq!(e.interface.as_deref(), Some("enp3s0"));
    assert_eq!(e.speed_mbps, Some(10000));
    assert_eq!(e.auto_negotiation, Some(false));
    assert_eq!(e.supports_auto_negotiation, Some(false));
    assert_eq!(
        e.supported_link_modes,
        ["1000baseKX/Full", "10000baseKR/Full"]
    );
    assert_eq!(
        e.advertised_link_modes,
        ["1000baseKX/Full", "10000baseKR/Full"]
    );
    assert_eq!(e.supported_ports, ["FIBRE"]);
    assert_eq!(e.link_detected, Some(true));
}

#[test]
fn ethtool_older_msglevel() {
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-mlx5-25g-fibre-at-10g-older-ethtool-msglevel.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("p4p2"));
    assert_eq!(e.speed_mbps, Some(10000));
    assert_eq!(e.port.as_deref(), Some("FIBRE"));
    assert_eq!(e.supported_fec_modes, ["None", "BaseR"]);
    // the message-level continuation "link" must not leak into a mode list
    assert_eq!(e.advertised_link_modes.len(), 5);
    assert!(!e.supported_link_modes.iter().any(|m| m == "link"));
    assert_eq!(e.link_detected, Some(true));
}

#[test]
fn ethtool_pathological() {
    let e = parse::ethtool::parse(&fx(
        "ethtool/ethtool-pathological-all-link-modes-800G-half-duplex-no-link.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("eno0"));
    assert_eq!(e.speed_mbps, None);
    assert_eq!(e.duplex.as_deref(), Some("half"));
    assert_eq!(e.port.as_deref(), Some("MII"));
    assert_eq!(e.link_detected, Some(false));
    assert_eq!(
        e.supported_ports,
        ["TP", "AUI", "MII", "FIBRE", "BNC", "Backplane"]
    );
    assert_eq!(
        e.supported_link_modes.first().map(String::as_str),
        Some("10baseT/Half")
    );
    assert_eq!(
        e.supported_link_modes.last().map(String::as_str),
        Some("10baseT1S_P2MP/Half")
    );
    assert!(e
        .supported_link_modes
        .contains(&"10000baseR_FEC".to_string()));
    assert!(e
        .supported_link_modes
        .contains(&"800000baseVR8/Full".to_string()));
    assert!(e.advertised_link_modes.is_empty());
    assert_eq!(e.supported_fec_modes, ["None", "RS", "BASER", "LLRS"]);
}

#[test]
fn ethtool_driver_cx6dx() {
    for f in [
        "ethtool/ethtool-i-cx6dx-empty-expansion-rom-trailing-space.txt",
        "ethtool/ethtool-i-cx6dx-inbox-kernel-driver-version-5.0-0.txt",
    ] {
        let d = parse::ethtool_driver::parse(&fx(f)).unwrap();
        assert_eq!(d.driver.as_deref(), Some("mlx5_core"));
        assert_eq!(d.version.as_deref(), Some("5.0-0"));
        assert_eq!(d.firmware_psid.as_deref(), Some("MT_0000000430"));
        assert_eq!(d.expansion_rom_version, None);
        assert_eq!(d.supports_priv_flags, Some(true));
    }
    let a = parse::ethtool_driver::parse(&fx(
        "ethtool/ethtool-i-cx6dx-empty-expansion-rom-trailing-space.txt",
    ))
    .unwrap();
    // The whole value as printed, PSID kept (two boards on the same version with different
    // PSIDs must not compare equal).
    assert_eq!(
        a.firmware_version.as_deref(),
        Some("22.29.1016 (MT_0000000430)")
    );
    assert_eq!(a.bus_info.as_deref(), Some("0000:b3:00.0"));
    let b = parse::ethtool_driver::parse(&fx(
        "ethtool/ethtool-i-cx6dx-inbox-kernel-driver-version-5.0-0.txt",
    ))
    .unwrap();
    assert_eq!(
        b.firmware_version.as_deref(),
        Some("22.28.1002 (MT_0000000430)")
    );
    assert_eq!(b.bus_info.as_deref(), Some("0000:07:00.1"));
}

#[test]
fn ethtool_driver_ipoib() {
    let d = parse::ethtool_driver::parse(&fx(
        "ethtool/ethtool-i-ipoib-mlx5_core-ib_ipoib-azure-cx6-ofed24.07.txt",
    ))
    .unwrap();
    assert_eq!(d.driver.as_deref(), Some("mlx5_core[ib_ipoib]"));
    assert_eq!(d.version.as_deref(), Some("24.07-0.6.1"));
    assert_eq!(
        d.firmware_version.as_deref(),
        Some("20.31.1014 (MT_0000000223)")
    );
    assert_eq!(d.firmware_psid.as_deref(), Some("MT_0000000223"));
    assert_eq!(d.bus_info.as_deref(), Some("0101:00:00.0"));
}

#[test]
fn ethtool_stats_grep() {
    let a = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-cx4lx-25g-grep-discards-prio-no-header.txt",
    ))
    .unwrap();
    assert_eq!(a.interface, None);
    assert_eq!(a.counters.len(), 14);
    assert_eq!(a.counters["rx_steer_missed_packets"], 24627);
    assert_eq!(a.counters["rx_prio7_discards"], 0);
    let b = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-cx4lx-25g-grep-pause-pci-no-header-tx-pause-nonzero.txt",
    ))
    .unwrap();
    assert_eq!(b.counters.len(), 17);
    assert_eq!(b.counters["tx_pause_ctrl_phy"], 1266552);
    assert_eq!(b.counters["tx_global_pause_duration"], 555665182);
    assert_eq!(b.counters["tx_pci_signal_integrity"], 3);
    let c = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-mlx5-grep-rdma-vport-counters-bond-member.txt",
    ))
    .unwrap();
    assert_eq!(c.counters.len(), 8);
    assert_eq!(c.counters["rx_vport_rdma_unicast_bytes"], 343918719286);
    assert_eq!(c.counters["tx_vport_rdma_unicast_packets"], 321535216);
}

#[test]
fn ethtool_stats_mlx5_kernels() {
    let old = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-mlx5-kernel5.15-xdp-heavy-discards-partial.txt",
    ))
    .unwrap();
    assert_eq!(old.counters["rx_bytes_phy"], 6211329423080);
    assert_eq!(old.counters["rx_discards_phy"], 58591428329);
    assert_eq!(old.counters["rx_cache_reuse"], 9369255040);
    assert!(!old.counters.contains_key("rx_pp_alloc_fast"));
    let new = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-mlx5-kernel6.5-xdp-page-pool-counters-partial.txt",
    ))
    .unwrap();
    assert_eq!(new.counters["rx_bytes_phy"], 46609758231313);
    assert_eq!(new.counters["rx_pp_alloc_fast"], 3641784);
    assert_eq!(new.counters["ch0_poll"], 855423025);
    assert!(!new.counters.contains_key("rx_cache_reuse"));
}

#[test]
fn eee_disabled() {
    let e = parse::eee::parse(&fx(
        "ethtool/ethtool-show-eee-disabled-supported-modes-igc-2.5g.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("enp174s0"));
    assert!(e.supported && !e.enabled && !e.active);
    assert_eq!(e.tx_lpi_us, None);
    assert_eq!(
        e.supported_link_modes,
        ["100baseT/Full", "1000baseT/Full", "2500baseT/Full"]
    );
}

#[test]
fn eee_not_supported() {
    let e = parse::eee::parse(&fx(
        "ethtool/ethtool-show-eee-not-supported-igc-before-fix.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("enp174s0"));
    assert!(!e.supported && !e.enabled && !e.active);
    assert_eq!(e.status.as_deref(), Some("not supported"));
}

#[test]
fn eee_enabled_active() {
    let e = parse::eee::parse(&fx(
        "ethtool/ethtool-show-eee-old-capital-Settings-enabled-active-imx8.txt",
    ))
    .unwrap();
    assert_eq!(e.interface.as_deref(), Some("eth0"));
    assert!(e.supported && e.enabled && e.active);
    assert_eq!(e.tx_lpi_us, Some(5000));
    assert_eq!(e.advertised_link_modes, ["100baseT/Full", "1000baseT/Full"]);
    assert_eq!(e.link_partner_advertised_link_modes, ["100baseT/Full"]);
}

#[test]
fn lab_ethtool_veth() {
    let e = parse::ethtool::parse(&fx("lab/ethtool-veth.txt")).unwrap();
    assert_eq!(e.interface.as_deref(), Some("fab0"));
    assert_eq!(e.speed_mbps, Some(10000));
    assert_eq!(e.port.as_deref(), Some("Twisted Pair"));
    assert!(e.supported_link_modes.is_empty() && e.supported_ports.is_empty());
    assert_eq!(e.link_detected, Some(true));
    let d = parse::ethtool_driver::parse(&fx("lab/ethtool-i-veth.txt")).unwrap();
    assert_eq!(d.driver.as_deref(), Some("veth"));
    assert_eq!(d.version.as_deref(), Some("1.0"));
    assert_eq!(d.firmware_version, None);
    assert_eq!(d.bus_info, None);
    let s = parse::ethtool_stats::parse(&fx("lab/ethtool-S-veth.txt")).unwrap();
    assert_eq!(s.counters["peer_ifindex"], 84);
    assert_eq!(s.counters.len(), 10);
    let eee = parse::eee::parse(&fx("lab/ethtool-show-eee-veth-unsupported.txt")).unwrap();
    assert!(!eee.supported);
    assert_eq!(
        eee.error.as_deref(),
        Some("netlink error: Operation not supported")
    );
    // and the same text is not mistaken for other ethtool outputs
    assert!(parse::ethtool::parse(&fx("lab/ethtool-show-eee-veth-unsupported.txt")).is_err());
    assert!(parse::ethtool_stats::parse(&fx("lab/ethtool-S-veth.txt")).is_ok());
    assert!(parse::ethtool_driver::parse(&fx("lab/ethtool-S-veth.txt")).is_err());
}

// ---------------------------------------------------------------- bonding

#[test]
fn bonding_8023ad_healthy() {
    let b = parse::bonding::parse(&fx("bonding/8023ad-2x25g-healthy-layer3+4-v3.7.1.txt")).unwrap();
    assert_eq!(b.mode.as_deref(), Some("802.3ad"));
    assert_eq!(b.mii_status.as_deref(), Some("up"));
    assert_eq!(b.transmit_hash_policy.as_deref(), Some("layer3+4"));
    assert_eq!(b.lacp_rate.as_deref(), Some("slow"));
    assert_eq!(b.active_aggregator_id, Some(1));
    assert_eq!(b.partner_mac.as_deref(), Some("3c:c7:86:43:ac:f1"));
    assert_eq!(b.slaves.len(), 2);
    let s = &b.slaves[1];
    assert_eq!(s.name, "lan04");
    assert_eq!(s.speed_mbps, Some(25000));
    assert_eq!(s.duplex.as_deref(), Some("full"));
    assert_eq!(s.aggregator_id, Some(1));
    assert_eq!(s.permanent_hw_addr.as_deref(), Some("5c:6f:69:c8:32:c1"));
    assert_eq!(s.actor_churn_state.as_deref(), Some("none"));
    assert_eq!(s.partner_port_state, Some(61));
}

#[test]
fn bonding_8023ad_flapping() {
    let b = parse::bonding::parse(&fx(
        "bonding/8023ad-2x25g-lacp-fast-flapping-slave-sm_vars-v4.18.txt",
    ))
    .unwrap();
    assert_eq!(b.lacp_rate.as_deref(), Some("fast"));
    assert_eq!(b.partner_mac.as_deref(), Some("00:00:5e:00:01:01"));
    let s = &b.slaves[1];
    assert_eq!(s.name, "eth1");
    assert_eq!(s.link_failure_count, Some(17));
    assert_eq!(s.actor_churn_state.as_deref(), Some("monitoring"));
    assert_eq!(s.partner_churn_state.as_deref(), Some("monitoring"));
    assert_eq!(s.actor_port_state, Some(15));
    assert_eq!(s.partner_port_state, Some(31));
    assert_eq!(b.slaves[0].actor_port_state, Some(63));
}

#[test]
fn bonding_8023ad_all_down() {
    let b = parse::bonding::parse(&fx(
        "bonding/8023ad-3slaves-all-down-no-partner-lacp-active-fc41.txt",
    ))
    .unwrap();
    assert_eq!(b.driver_version.as_deref(), Some("v6.14.6-200.fc41.x86_64"));
    assert_eq!(b.lacp_active.as_deref(), Some("on"));
    assert_eq!(b.partner_mac.as_deref(), Some("00:00:00:00:00:00"));
    assert_eq!(b.slaves.len(), 3);
    let aggs: Vec<_> = b.slaves.iter().map(|s| s.aggregator_id).collect();
    assert_eq!(aggs, [Some(1), Some(2), Some(3)]);
    for s in &b.slaves {
        assert_eq!(s.mii_status.as_deref(), Some("down"));
        assert_eq!(s.speed_mbps, None);
        assert_eq!(s.duplex, None);
        assert_eq!(s.partner_churn_state.as_deref(), Some("churned"));
    }
}

/// LACP not negotiated: a slave with MII up in the active aggregator whose partner is all
/// zeros and whose port states lack collecting/distributing (per-slave LACP fields).
#[test]
fn bonding_8023ad_no_partner() {
    let b = parse::bonding::parse(&fx(
        "bonding/8023ad-2x1g-slave-up-no-lacp-partner-state-79-other-down-split-aggregators-v3.7.1.txt",
    ))
    .unwrap();
    assert_eq!(b.active_aggregator_id, Some(2));
    assert_eq!(b.partner_mac.as_deref(), Some("00:00:00:00:00:00"));
    assert_eq!(b.lacp_rate.as_deref(), Some("fast"));
    let s = &b.slaves[1];
    assert_eq!(s.name, "enp1s0f1");
    assert_eq!(s.mii_status.as_deref(), Some("up"));
    assert_eq!(s.aggregator_id, Some(2));
    assert_eq!(s.actor_port_state, Some(79));
    assert_eq!(s.partner_port_state, Some(1));
    assert_eq!(s.partner_system_mac.as_deref(), Some("00:00:00:00:00:00"));
    assert_eq!(b.slaves[0].actor_port_state, Some(71));
    assert_eq!(b.slaves[0].aggregator_id, Some(1));

    let b = parse::bonding::parse(&fx(
        "bonding/8023ad-ubuntu-6.8-no-lacpdu-sent-partner-zero-state-77-double-blank-lines.txt",
    ))
    .unwrap();
    assert_eq!(b.driver_version.as_deref(), Some("v6.8.0-39-generic"));
    assert_eq!(b.transmit_hash_policy.as_deref(), Some("layer2"));
    assert_eq!(b.lacp_active.as_deref(), Some("on"));
    assert_eq!(b.slaves.len(), 1);
    assert_eq!(b.slaves[0].actor_port_state, Some(77));
    assert_eq!(b.slaves[0].partner_port_state, Some(1));
    assert_eq!(
        b.slaves[0].partner_system_mac.as_deref(),
        Some("00:00:00:00:00:00")
    );
}

#[test]
fn bonding_8023ad_old_split() {
    let b = parse::bonding::parse(&fx(
        "bonding/8023ad-old-v3.2.4-rhel5-no-speed-duplex-partner-mac-zero-split-aggregators.txt",
    ))
    .unwrap();
    assert_eq!(
        b.driver_version.as_deref(),
        Some("v3.2.4 (January 28, 2008)")
    );
    assert_eq!(b.mode.as_deref(), Some("802.3ad"));
    assert_eq!(b.transmit_hash_policy.as_deref(), Some("layer2"));
    assert_eq!(b.miimon_ms, Some(500));
    assert_eq!(b.active_aggregator_id, Some(3));
    assert_eq!(b.partner_mac.as_deref(), Some("00:00:00:00:00:00"));
    assert_eq!(b.slaves[0].aggregator_id, Some(3));
    assert_eq!(b.slaves[1].aggregator_id, Some(2));
    assert_eq!(b.slaves[1].speed_mbps, None);
    assert_eq!(b.slaves[1].actor_churn_state, None);
}

#[test]
fn bonding_active_backup_blank_space() {
    let b = parse::bonding::parse(&fx(
        "bonding/active-backup-1g-old-blank-lines-with-space.txt",
    ))
    .unwrap();
    assert_eq!(b.mode.as_deref(), Some("active-backup"));
    assert_eq!(b.active_slave.as_deref(), Some("p1p1"));
    assert_eq!(b.primary_slave, None);
    assert_eq!(b.slaves.len(), 2);
    assert_eq!(b.slaves[1].link_failure_count, Some(1));
    assert_eq!(b.slaves[1].speed_mbps, Some(1000));
}

#[test]
fn bonding_active_backup_25g() {
    let b = parse::bonding::parse(&fx(
        "bonding/active-backup-2x25g-iscsi-v3.7.1-peer-notif.txt",
    ))
    .unwrap();
    assert_eq!(b.mode.as_deref(), Some("active-backup"));
    assert_eq!(b.active_slave.as_deref(), Some("ens5f0"));
    let names: Vec<_> = b.slaves.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ens5f0", "ens6f1"]);
    assert!(b.slaves.iter().all(|s| s.speed_mbps == Some(25000)));
    assert_eq!(b.active_aggregator_id, None);
}

#[test]
fn bonding_active_backup_primary() {
    let b = parse::bonding::parse(&fx(
        "bonding/active-backup-primary-reselect-always-ubuntu-6.8.txt",
    ))
    .unwrap();
    assert_eq!(b.driver_version.as_deref(), Some("v6.8.0-90-generic"));
    assert_eq!(b.primary_slave.as_deref(), Some("enp0s8"));
    assert_eq!(b.active_slave.as_deref(), Some("enp0s8"));
    assert_eq!(
        b.slaves[1].permanent_hw_addr.as_deref(),
        Some("08:00:27:d8:e3:fa")
    );
}

#[test]
fn bonding_no_slaves() {
    let rr = parse::bonding::parse(&fx("bonding/balance-rr-no-slaves-mii-down-v4.18.txt")).unwrap();
    assert_eq!(rr.mode.as_deref(), Some("balance-rr"));
    assert_eq!(rr.mii_status.as_deref(), Some("down"));
    assert_eq!(rr.miimon_ms, Some(0));
    assert!(rr.slaves.is_empty());
    let xor = parse::bonding::parse(&fx(
        "bonding/balance-xor-no-slaves-patched-kernel-hash-vlansrc-5.txt",
    ))
    .unwrap();
    assert_eq!(xor.mode.as_deref(), Some("balance-xor"));
    assert_eq!(xor.transmit_hash_policy.as_deref(), Some("vlansrc"));
    assert_eq!(
        xor.driver_version.as_deref(),
        Some("v4.18.0-272.el8.vstx.x86_64")
    );
    assert!(xor.slaves.is_empty());
}

// ---------------------------------------------------------------- perftest

#[test]
fn perftest_read_bw_cx7_gbits() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_read_bw-cx7-ndr-ib-gbits-cpufreq-warning.txt",
    ))
    .unwrap();
    assert_eq!(p.test.as_deref(), Some("RDMA_Read BW Test"));
    assert_eq!(p.side.as_deref(), Some("client"));
    assert_eq!(p.device.as_deref(), Some("mlx5_0"));
    assert_eq!(p.link_type.as_deref(), Some("IB"));
    assert_eq!(p.mtu, Some(4096));
    assert_eq!(p.units_reported.as_deref(), Some("Gb/sec"));
    assert_eq!(p.rows.len(), 1);
    assert_eq!(p.rows[0].bytes, 65536);
    close(p.bw_avg_gbps, 328.61);
    close(p.bw_peak_gbps, 328.64);
    close(p.rows[0].msg_rate_mpps, 0.626777);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].starts_with("Conflicting CPU frequency"));
    assert!(p.errors.is_empty());
}

#[test]
fn perftest_read_bw_mlx4_mbsec() {
    let p =
        parse::perftest::parse(&fx("perftest/ib_read_bw-mlx4-fdr-ib-all-sizes-mbsec.txt")).unwrap();
    assert_eq!(p.device.as_deref(), Some("mlx4_0"));
    assert_eq!(p.mtu, Some(2048));
    assert_eq!(p.units_reported.as_deref(), Some("MB/sec"));
    assert_eq!(p.rows.len(), 23);
    assert_eq!(p.rows[0].bytes, 2);
    assert_eq!(p.rows[22].bytes, 8388608);
    close(p.bw_avg_gbps, 3666.47 * 0.008388608);
    close(p.bw_peak_gbps, 0.0);
}

#[test]
fn perftest_read_lat_server_no_table() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_read_lat-server-roce-mlx5-no-result-table.txt",
    ))
    .unwrap();
    assert_eq!(p.test.as_deref(), Some("RDMA_Read Latency Test"));
    assert_eq!(p.side.as_deref(), Some("server"));
    assert_eq!(p.link_type.as_deref(), Some("Ethernet"));
    assert_eq!(p.gid_index, Some(3));
    assert!(p.rows.is_empty());
    assert_eq!(p.bw_avg_gbps, None);
    assert!(p.errors.is_empty());
}

#[test]
fn perftest_error_outputs() {
    let cases: &[(&str, &[&str])] = &[
        ("perftest/ib_send_bw-error-ib-device-not-found.txt", &["IB device rxe2 not found", "Unable to find the Infiniband/RoCE device"]),
        ("perftest/ib_write_bw-error-couldnt-connect-client.txt", &["Couldn't connect to 192.168.125.211:18515", "Unable to open file descriptor for socket connection Unable to init the socket connection"]),
        ("perftest/ib_write_bw-error-rdmacm-client-modify-qp-rts.txt", &["Failed to modify QP to RTS", "Unable to Connect the HCA's through the link"]),
        ("perftest/ib_write_bw-error-rdmacm-server-read-keys.txt", &["ethernet_read_keys: Couldn't read remote address", "Unable to read to socket/rdma_cm", "Failed to exchange data between server and clients"]),
        ("perftest/ib_send_lat-error-port-state-down-couldnt-set-link-layer.txt", &["Port number 1 state is Down", "Couldn't set the link layer", "Couldn't get context for the device"]),
    ];
    for (f, errors) in cases {
        let p = parse::perftest::parse(&fx(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(&p.errors, errors, "{f}");
        assert!(p.rows.is_empty() && p.bw_avg_gbps.is_none(), "{f}");
    }
}

#[test]
fn perftest_send_bw_rxe_client_server() {
    let c = parse::perftest::parse(&fx("perftest/ib_send_bw-softroce-rxe-client.txt")).unwrap();
    let s = parse::perftest::parse(&fx(
        "perftest/ib_send_bw-softroce-rxe-server-waiting-banner-peak-warning.txt",
    ))
    .unwrap();
    assert_eq!(c.side.as_deref(), Some("client"));
    assert_eq!(s.side.as_deref(), Some("server"));
    assert_eq!(c.tx_depth, Some(128));
    assert_eq!(s.rx_depth, Some(512));
    for p in [&c, &s] {
        assert_eq!(p.test.as_deref(), Some("Send BW Test"));
        assert_eq!(p.device.as_deref(), Some("rxe0"));
        assert_eq!(p.mtu, Some(1024));
        assert_eq!(p.gid_index, Some(1));
        close(p.bw_avg_gbps, 3.06 * 0.008388608);
    }
    close(c.bw_peak_gbps, 3.75 * 0.008388608);
    close(s.bw_peak_gbps, 0.0);
    assert_eq!(
        s.warnings,
        ["WARNING: BW peak won't be measured in this run."]
    );
}

#[test]
fn perftest_send_lat_cx7() {
    let p =
        parse::perftest::parse(&fx("perftest/ib_send_lat-cx7-ndr-ib-cpufreq-warning.txt")).unwrap();
    assert_eq!(p.test.as_deref(), Some("Send Latency Test"));
    assert_eq!(p.side.as_deref(), Some("client"));
    assert_eq!(p.units_reported.as_deref(), Some("usec"));
    assert_eq!(p.rows.len(), 1);
    let r = &p.rows[0];
    assert_eq!((r.bytes, r.iterations), (2, 1000));
    close(r.t_min_usec, 1.24);
    close(r.t_max_usec, 5.19);
    close(r.t_typical_usec, 1.27);
    close(r.t_avg_usec, 1.27);
    close(r.t_stdev_usec, 0.0);
    close(r.t_p99_usec, 1.37);
    close(r.t_p999_usec, 5.19);
    // the result's summary is the largest size's row: typical, 99 % and max
    close(p.t_typical_usec, 1.27);
    close(p.t_p99_usec, 1.37);
    close(p.t_max_usec, 5.19);
    assert_eq!(p.warnings.len(), 2);
    assert_eq!(p.bw_avg_gbps, None);
}

#[test]
fn perftest_send_lat_fused_columns() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_send_lat-softroce-rxe-server-merged-columns.txt",
    ))
    .unwrap();
    assert_eq!(p.side.as_deref(), Some("server"));
    assert_eq!(p.device.as_deref(), Some("rxe0"));
    assert_eq!(p.transport_type.as_deref(), Some("IB"));
    let r = &p.rows[0];
    close(r.t_typical_usec, 692.41);
    close(r.t_avg_usec, 928.05);
    close(r.t_stdev_usec, 2465.90);
    close(r.t_p99_usec, 1216.65);
    close(r.t_p999_usec, 37330.73);
}

#[test]
fn perftest_write_bw_bidir_indented() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-bidir-all-sizes-gbits-roce-rocm-doc-indented.txt",
    ))
    .unwrap();
    assert_eq!(p.test.as_deref(), Some("RDMA_Write Bidirectional BW Test"));
    assert_eq!(p.device.as_deref(), Some("<RDMA-NIC-2>"));
    assert_eq!(p.link_type.as_deref(), Some("Ethernet"));
    assert_eq!(p.gid_index, Some(3));
    assert_eq!(p.rows.len(), 23);
    close(p.rows[0].bw_peak_gbps, 0.142947);
    close(p.rows[0].bw_avg_gbps, 0.012281);
    close(p.bw_avg_gbps, 204.59);
}

#[test]
fn perftest_ionic_client_server_agree() {
    let c = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-client-bidir-q4-all-sizes-ionic-older-perftest-enhanced-reorder.txt",
    ))
    .unwrap();
    let s = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-newest-server-bidir-q4-all-sizes-ionic-400g-connected-completed.txt",
    ))
    .unwrap();
    assert_eq!(c.side.as_deref(), Some("client"));
    assert_eq!(s.side.as_deref(), Some("server"));
    assert_eq!(c.device.as_deref(), Some("ionic_1"));
    assert_eq!(s.device.as_deref(), Some("ionic_7"));
    assert_eq!((c.qps, s.qps), (Some(4), Some(4)));
    assert_eq!(c.rows, s.rows);
    assert_eq!(c.rows.len(), 23);
    close(s.bw_avg_gbps, 779.21);
    assert_eq!(
        s.warnings,
        ["Using sampled CPU speed 3295 MHz over reported speed 5037 MHz"]
    );
}

#[test]
fn perftest_write_bw_mlx4_no_trailer() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-mlx4-fdr-ib-all-sizes-mbsec-old-no-trailer.txt",
    ))
    .unwrap();
    assert_eq!(p.test.as_deref(), Some("RDMA_Write BW Test"));
    assert_eq!(p.rows.len(), 23);
    close(p.bw_avg_gbps, 3662.02 * 0.008388608);
    close(p.rows[0].msg_rate_mpps, 5.467546);
}

#[test]
fn perftest_loopback_interleaved() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-run_perftest_loopback-interleaved-server-client-azure-hdr.txt",
    ))
    .unwrap();
    assert_eq!(p.device.as_deref(), Some("mlx5_ib0"));
    assert_eq!(p.units_reported.as_deref(), Some("MiB/sec"));
    assert_eq!(p.rows.len(), 2);
    assert!(p.rows.iter().all(|r| r.bytes == 1000));
    close(p.bw_avg_gbps, 4020.54 * 0.008388608);
    assert!(p.warnings.iter().any(|w| w.contains("interleaved")));
}

#[test]
fn perftest_server_rocm() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-server-gdr-use_rocm-mi355x-ionic-bidir.txt",
    ))
    .unwrap();
    assert_eq!(p.side.as_deref(), Some("server"));
    assert_eq!(p.device.as_deref(), Some("ionic_1"));
    assert_eq!(p.rows.len(), 23);
    close(p.bw_avg_gbps, 697.97);
    close(p.bw_peak_gbps, 698.41);
    assert!(p.errors.is_empty());
}

#[test]
fn perftest_server_unit_mismatch() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-server-roce-duration-header-MBsec-but-value-Gbps.txt",
    ))
    .unwrap();
    assert_eq!(p.side.as_deref(), Some("server"));
    assert_eq!(p.units_reported.as_deref(), Some("MB/sec"));
    assert_eq!(p.rows[0].iterations, 1101500);
    close(p.bw_avg_gbps, 96.25); // not 96.25 MB/s = 0.8 Gb/s
    assert!(p.warnings.iter().any(|w| w.contains("--report_gbits")));
}

#[test]
fn perftest_server_uc_single_row() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_bw-server-uc-roce-gid5-gbits-all-sizes-flag-single-row-5hex-qpn.txt",
    ))
    .unwrap();
    assert_eq!(p.connection.as_deref(), Some("UC"));
    assert_eq!(p.gid_index, Some(5));
    assert_eq!(p.device.as_deref(), Some("mlx5_1"));
    assert_eq!(p.rows.len(), 1);
    assert_eq!(p.rows[0].bytes, 8388608);
    close(p.bw_avg_gbps, 98.03);
}

#[test]
fn perftest_write_lat_rdma_cm() {
    let p = parse::perftest::parse(&fx(
        "perftest/ib_write_lat-client-rdma_cm-force-link-IB-dgx-spark.txt",
    ))
    .unwrap();
    assert_eq!(p.device.as_deref(), Some("rocep1s0f1"));
    assert_eq!(p.rdma_cm, Some(true));
    assert_eq!(p.link_type.as_deref(), Some("IB"));
    close(p.t_typical_usec, 1.47);
    close(p.rows[0].t_p99_usec, 1.57);
}

#[test]
fn perftest_write_lat_mlx4_all_sizes() {
    let p = parse::perftest::parse(&fx("perftest/ib_write_lat-mlx4-fdr-ib-all-sizes.txt")).unwrap();
    assert_eq!(p.rows.len(), 23);
    close(p.rows[0].t_typical_usec, 0.98);
    close(p.rows[0].t_p999_usec, 5.42);
    assert_eq!(p.rows[22].bytes, 8388608);
    close(p.t_typical_usec, 2302.01);
    assert!(p.warnings.is_empty());
}

// ---------------------------------------------------------------- nccl

#[test]
fn nccl_json_matches_text() {
    let j = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_1gpu.json")).unwrap();
    let t = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_1gpu_json_run.txt")).unwrap();
    assert_eq!(j.format, "json");
    assert_eq!(t.format, "text");
    assert_eq!(j.collective.as_deref(), Some("all_reduce"));
    assert_eq!(j.collective, t.collective);
    assert_eq!(j.nccl_version.as_deref(), Some("2.28.9"));
    assert_eq!(j.nccl_version, t.nccl_version);
    assert_eq!(j.nranks, Some(1));
    assert_eq!(j.devices, t.devices);
    assert_eq!(j.rows.len(), 25);
    assert_eq!(j.rows.len(), t.rows.len());
    for (a, b) in j.rows.iter().zip(&t.rows) {
        assert_eq!(a.size_bytes, b.size_bytes);
        assert_eq!(a.count, b.count);
        assert_eq!((&a.r#type, &a.redop, a.root), (&b.r#type, &b.redop, b.root));
        for (x, y) in [
            (&a.out_of_place, &b.out_of_place),
            (&a.in_place, &b.in_place),
        ] {
            let (xb, yb) = (x.busbw_gbs.unwrap(), y.busbw_gbs.unwrap());
            assert!(
                (xb - yb).abs() < 0.006,
                "busbw {xb} vs {yb} at {}",
                a.size_bytes
            );
            let (xa, ya) = (x.algbw_gbs.unwrap(), y.algbw_gbs.unwrap());
            assert!(
                (xa - ya).abs() <= 0.006 + ya * 5e-4,
                "algbw {xa} vs {ya} at {}",
                a.size_bytes
            );
            assert_eq!(x.wrong, y.wrong);
        }
    }
    assert_eq!(j.out_of_bounds, t.out_of_bounds);
    assert_eq!(j.avg_busbw_gbs, t.avg_busbw_gbs);
    assert_eq!(j.max_busbw_gbs, t.max_busbw_gbs);
    assert!(j.errors.is_empty() && t.errors.is_empty());
}

#[test]
fn nccl_real_all_gather() {
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_gather_1gpu.txt")).unwrap();
    assert_eq!(n.collective.as_deref(), Some("all_gather"));
    assert_eq!(n.nccl_tests_version.as_deref(), Some("2.19.6"));
    assert_eq!(n.rows.len(), 26);
    assert_eq!(n.rows.last().unwrap().size_bytes, 268435456);
    close(n.rows.last().unwrap().out_of_place.algbw_gbs, 2075.5);
    close(n.avg_busbw_gbs, 0.0);
    assert_eq!(n.transport, None);
}

#[test]
fn nccl_real_all_reduce() {
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_1gpu.txt")).unwrap();
    assert_eq!(n.rows.len(), 28);
    let last = n.rows.last().unwrap();
    assert_eq!(last.size_bytes, 1073741824);
    assert_eq!(last.redop.as_deref(), Some("sum"));
    assert_eq!(last.root, Some(-1));
    assert_eq!(n.devices[0].name, "NVIDIA H200");
    assert_eq!(n.devices[0].bus_id, "0000:00:06");
    assert_eq!(n.out_of_bounds, Some(0));
}

#[test]
fn nccl_real_alltypes_failure() {
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_alltypes.txt")).unwrap();
    assert!(n.rows.len() > 1000, "{}", n.rows.len());
    assert!(n.rows.iter().any(|r| r.r#type == "int8"));
    let last = n.rows.last().unwrap();
    assert_eq!(last.r#type, "f8e4m3");
    assert_eq!(last.redop.as_deref(), Some("min"));
    close(last.in_place.algbw_gbs, 2e6);
    assert_eq!(n.avg_busbw_gbs, None);
    assert!(n.errors[0].contains("Test NCCL failure all_reduce.cu:507 'invalid argument"));
    assert_eq!(n.errors.len(), 7);
}

#[test]
fn nccl_real_invalid_gpus() {
    for f in [
        "nccl-real/h200-all_reduce_g2_error.txt",
        "nccl-real/h200-mpirun-np2-invalid-gpus-openmpi-trailer.txt",
    ] {
        let n = parse::nccl::parse(&fx(f)).unwrap();
        assert!(n.rows.is_empty());
        assert_eq!(
            n.errors[0],
            "Invalid number of GPUs: 2 requested but only 1 were found."
        );
        assert!(n.errors[1].contains("Test failure common.cu:1454"));
        assert_eq!(n.nranks, None);
    }
}

#[test]
fn nccl_real_alltoall_na() {
    let n = parse::nccl::parse(&fx(
        "nccl-real/h200-alltoall_1gpu-size-0-row-NA-inplace.txt",
    ))
    .unwrap();
    assert_eq!(n.collective.as_deref(), Some("alltoall"));
    assert_eq!(n.rows.len(), 26);
    assert_eq!(n.rows[0].size_bytes, 0);
    assert_eq!(n.rows[0].redop.as_deref(), Some("none"));
    assert!(n
        .rows
        .iter()
        .all(|r| r.in_place.wrong.is_none() && r.out_of_place.wrong == Some(0.0)));
}

#[test]
fn nccl_real_tag_output_socket() {
    let n = parse::nccl::parse(&fx("nccl-real/h200-mpirun-np1-tag-output-nccl-debug.txt")).unwrap();
    assert_eq!(n.collective.as_deref(), Some("all_reduce"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.28.9+cuda13.0"));
    assert_eq!(n.transport.as_deref(), Some("Socket"));
    assert_eq!(n.net_devices, ["eth0:192.0.2.2<0>"]);
    assert_eq!(n.rows.len(), 25);
    close(n.rows.last().unwrap().out_of_place.algbw_gbs, 2030.7);
}

#[test]
fn nccl_all_gather_b200() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_gather-2node-16xB200-gke-rdma-nccl2.26.txt",
    ))
    .unwrap();
    assert_eq!(n.nccl_version.as_deref(), Some("2.26.6+cuda12.8"));
    assert_eq!(n.nranks, Some(16));
    assert_eq!(n.devices[15].host, "nccl-gib-test-1");
    assert_eq!(n.devices[15].bus_id, "0000:cc:00");
    assert_eq!(n.rows.len(), 24);
    assert_eq!(n.rows.last().unwrap().size_bytes, 8589934592);
    close(n.avg_busbw_gbs, 59.3638);
    close(n.max_busbw_gbs, 268.59);
    assert_eq!(n.transport, None);
}

/// Abridged init output: only some `#  Rank N ...` lines kept (as a log trimmed by a wrapper
/// or cut at nccl-tests' 2048-byte rank buffer), and no NCCL INFO `nranks` line. The input is
/// the real B200 fixture with rank lines 1..=14 dropped.
#[test]
fn nccl_nranks_from_abridged_rank_lines() {
    let full = fx("nccl-tests/all_gather-2node-16xB200-gke-rdma-nccl2.26.txt");
    assert!(!full.contains("nranks"));
    let kept: Vec<&str> = full
        .lines()
        .filter(|l| {
            !regex::Regex::new(r"^#\s+Rank\s+([1-9]|1[0-4])\s+Group")
                .unwrap()
                .is_match(l)
        })
        .collect();
    assert_eq!(full.lines().count() - kept.len(), 14);
    let n = parse::nccl::parse(&kept.join("\n")).unwrap();
    assert_eq!(n.devices.len(), 2);
    assert_eq!(n.devices[1].rank, 15);
    assert_eq!(n.nranks, Some(16));
}

/// NCCL INFO `rank R nranks N` wins over the rank lines when present (real np1 capture:
/// nranks 1 in INFO, one rank line).
#[test]
fn nccl_nranks_from_info_line() {
    let text = fx("nccl-real/h200-mpirun-np1-tag-output-nccl-debug.txt");
    let n = parse::nccl::parse(&text).unwrap();
    assert_eq!(n.nranks, Some(1));
    // Rank lines dropped entirely: the INFO line still gives nranks.
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("#  Rank")).collect();
    let n = parse::nccl::parse(&kept.join("\n")).unwrap();
    assert!(n.devices.is_empty());
    assert_eq!(n.nranks, Some(1));
}

/// A row that does not fit the header's columns is an error naming its line; when no row
/// fits, parsing fails. Input: the real H200 all_reduce capture with its last column cut.
#[test]
fn nccl_row_not_matching_header() {
    let text = fx("nccl-real/h200-all_reduce_1gpu.txt");
    let cut = |l: &str| l.trim_end().rsplit_once(' ').unwrap().0.to_string();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 10 { cut(l) } else { l.to_string() })
        .collect();
    let n = parse::nccl::parse(&lines.join("\n")).unwrap();
    assert_eq!(n.rows.len(), 27);
    assert_eq!(n.errors.len(), 1, "{:?}", n.errors);
    assert!(
        n.errors[0].starts_with("line 11: table row does not match"),
        "{}",
        n.errors[0]
    );
    let all_cut: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(' ') {
                cut(l)
            } else {
                l.to_string()
            }
        })
        .collect();
    let e = parse::nccl::parse(&all_cut.join("\n")).unwrap_err();
    assert_eq!(e.line, 11, "{e}");
    assert!(e.text.contains("float"), "{e}");
}

#[test]
fn nccl_old_all_gather_failed() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_gather-dgx2-12xV100-old-no-redop-error-col-FAILED.txt",
    ))
    .unwrap();
    assert_eq!(n.nranks, Some(12));
    assert_eq!(n.ngpus, Some(12));
    assert_eq!(n.devices[0].group, None);
    assert_eq!(n.devices[0].bus_id, "0x36");
    assert_eq!(n.rows.len(), 31);
    assert_eq!(n.rows[0].size_bytes, 0);
    assert_eq!(n.rows[0].redop, None);
    assert_eq!(n.rows[0].root, None);
    let last = n.rows.last().unwrap();
    assert_eq!(last.out_of_place.wrong, Some(1.0));
    assert_eq!(n.out_of_bounds, Some(4));
    assert_eq!(n.errors, ["Out of bounds values : 4 FAILED"]);
    close(n.avg_busbw_gbs, 30.2993);
}

#[test]
fn nccl_indented_socket() {
    let n = parse::nccl::parse(&fx("nccl-tests/all_reduce-1node-2xA100-g2-nccl2.20-debug-info-netib-nodevice-socket-indented.txt")).unwrap();
    assert_eq!(n.nccl_version.as_deref(), Some("2.20.5+cuda12.4"));
    assert_eq!(n.transport.as_deref(), Some("Socket"));
    assert_eq!(n.net_devices, ["eth0:172.17.0.2<0>"]);
    assert_eq!(n.rows.len(), 3);
    close(n.rows[2].out_of_place.busbw_gbs, 192.43);
    close(n.avg_busbw_gbs, 179.465);
}

#[test]
fn nccl_oci_roce() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-2node-16xA100-oci-roce-sriov-8B-8G.txt",
    ))
    .unwrap();
    assert_eq!(n.nranks, Some(16));
    assert_eq!(n.rows.len(), 31);
    assert_eq!(n.rows[0].size_bytes, 8);
    close(n.max_busbw_gbs, 237.94);
    close(n.avg_busbw_gbs, 66.4834);
}

#[test]
fn nccl_h100_k8s() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-2node-16xH100-k8s-mpijob-512M-8G.txt",
    ))
    .unwrap();
    assert_eq!(n.rows.len(), 5);
    assert_eq!(n.rows[0].size_bytes, 536870912);
    close(n.rows[0].out_of_place.busbw_gbs, 193.50);
    close(n.avg_busbw_gbs, 194.675);
    assert_eq!(n.devices[0].name, "NVIDIA H100 80GB HBM3");
}

#[test]
fn nccl_efa_libfabric() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-2node-V100-efa-nccl2.6-old-ring-info-lines.txt",
    ))
    .unwrap();
    assert_eq!(n.transport.as_deref(), Some("AWS Libfabric"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.6.4+cuda10.2"));
    assert_eq!(n.nranks, Some(2));
    assert_eq!(n.rows.len(), 29);
    assert_eq!(n.rows[0].root, None);
    assert_eq!(n.rows[0].redop.as_deref(), Some("sum"));
    close(n.avg_busbw_gbs, 1.16154);
}

#[test]
fn nccl_k80_info_in_table() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-4xK80-azureml-error-col-nccl-info-in-table.txt",
    ))
    .unwrap();
    assert_eq!(n.nranks, Some(4));
    assert_eq!(n.devices[0].host, "2e3f9af7241040529530e810ce60fe5d000002");
    assert_eq!(n.rows.len(), 7);
    assert_eq!(n.rows[0].out_of_place.wrong, Some(2e-7));
    close(n.rows.last().unwrap().out_of_place.time_us, 1258554.0);
    close(n.avg_busbw_gbs, 2.54225);
}

#[test]
fn nccl_old_all_reduce_error_col() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-dgx2-12xV100-old-error-col-single-process-g12.txt",
    ))
    .unwrap();
    assert_eq!(n.nranks, Some(12));
    assert_eq!(n.rows.len(), 31);
    assert_eq!(n.rows[2].in_place.wrong, Some(6e-8));
    close(n.max_busbw_gbs, 123.57);
    close(n.avg_busbw_gbs, 42.5578);
    assert!(n.errors.is_empty());
}

#[test]
fn nccl_v218_tag_output() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce_mpi-v2.18.0-socket-2rank-1gpu-tag-output-collective-concluded.txt",
    ))
    .unwrap();
    assert_eq!(n.nccl_tests_version.as_deref(), Some("2.18.0"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.29.7"));
    assert_eq!(n.collective.as_deref(), Some("all_reduce"));
    assert_eq!(n.nranks, Some(2));
    assert_eq!(n.rows.len(), 8);
    close(n.rows[5].out_of_place.time_us, 14977.1);
    close(n.rows[0].out_of_place.time_us, 4366.46);
    close(n.avg_busbw_gbs, 1.57614);
}

#[test]
fn nccl_alltoall_one_rank() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/alltoall-1rank-rtx5090-avg-busbw-zero-integer-huge-algbw.txt",
    ))
    .unwrap();
    assert_eq!(n.rows.len(), 1);
    close(n.rows[0].in_place.algbw_gbs, 43046.10);
    assert_eq!(n.rows[0].in_place.wrong, None);
    close(n.avg_busbw_gbs, 0.0);
    close(n.max_busbw_gbs, 0.0);
}

#[test]
fn nccl_alltoall_mpi_help() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/alltoall-v2.18.3-2node-16xRTX6000D-cx8-spcx-mpi-help-in-header-NA.txt",
    ))
    .unwrap();
    assert_eq!(n.collective.as_deref(), Some("alltoall"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.30.3+cuda13.0"));
    assert_eq!(n.nranks, Some(16));
    assert_eq!(n.rows.len(), 24);
    assert_eq!(n.rows[0].size_bytes, 1024);
    close(n.avg_busbw_gbs, 9.04853);
    assert!(n.errors.is_empty());
}

#[test]
fn nccl_rccl_failure() {
    let n = parse::nccl::parse(&fx("nccl-tests/rccl-tests-all_reduce-FAILURE-unhandled-cuda-error-nThreads-colon-header-rx7900xtx.txt")).unwrap();
    assert_eq!(n.library.as_deref(), Some("RCCL"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.17.1+hip5.7"));
    assert_eq!(n.ngpus, Some(2));
    assert_eq!(n.devices[1].bus_id, "0000:06:00.0");
    assert!(n.rows.is_empty());
    assert_eq!(n.warnings.len(), 4);
    assert_eq!(
        n.errors[0],
        "catalyst-convoy: Test NCCL failure common.cu:1285 'unhandled cuda error'"
    );
    assert_eq!(n.errors.len(), 2);
}

// ---------------------------------------------------------------- iperf3

#[test]
fn iperf3_plain_text_rejected() {
    for f in [
        "iperf3/client-text-P3-t30-sum-lines-virtio-bond.txt",
        "iperf3/client-text-single-stream-1g-retrans.txt",
        "lab/iperf3-3.12-text-P2.txt",
    ] {
        let e = parse::iperf3::parse(&fx(f)).unwrap_err();
        assert_eq!(e.kind, "iperf3");
        assert_eq!(e.line, 1);
        assert!(e.text.starts_with("Connecting to host"), "{e}");
        assert!(e.reason.contains("-J"), "{e}");
    }
}

#[test]
fn iperf3_udp() {
    let i = parse::iperf3::parse(&fx(
        "iperf3/json-3.16-client-udp-unlimited-92pct-loss-azure.json",
    ))
    .unwrap();
    assert_eq!(i.protocol.as_deref(), Some("UDP"));
    assert_eq!(i.version.as_deref(), Some("iperf 3.16"));
    assert_eq!(i.streams, Some(1));
    close(i.duration_s, 20.001315);
    close(i.sent_bps, 1667402400.2921805);
    close(i.received_bps, 131580149.06754848);
    close(i.lost_percent, 92.0263853304538);
    assert_eq!(i.retransmits, None);
    assert_eq!(i.error, None);
}

#[test]
fn iperf3_tiny() {
    let i =
        parse::iperf3::parse(&fx("iperf3/json-3.9-client-tiny-10KB-sender-field.json")).unwrap();
    assert_eq!(i.protocol.as_deref(), Some("TCP"));
    assert_eq!(i.sent_bytes, Some(39424));
    assert_eq!(i.received_bytes, Some(14080));
    close(i.received_bps, 486923.44270090346);
    assert_eq!(i.retransmits, Some(0));
    close(i.duration_s, 0.001049);
}

#[test]
fn lab_iperf3_p4() {
    let i = parse::iperf3::parse(&fx("lab/iperf3-3.12-J-P4-t2.json")).unwrap();
    assert_eq!(i.streams, Some(4));
    assert_eq!(i.retransmits, Some(5517));
    close(i.sent_bps, 41224345262.13482);
    close(i.received_bps, 41222655279.451866);
    close(i.duration_s, 2.000173);
    assert_eq!(i.lost_percent, None);
}

#[test]
fn lab_iperf3_refused() {
    let v = parse::parse("iperf3", &fx("lab/iperf3-3.12-J-connection-refused.json")).unwrap();
    assert_eq!(
        v["error"],
        "unable to connect to server: Connection refused"
    );
    assert!(v["sent_bps"].is_null() && v["received_bps"].is_null());
}

// ---------------------------------------------------------------- ip-addr

#[test]
fn ip_brief_rejected() {
    for f in [
        "iproute2/ip-br-c-a-gpu-node-8-roce-rails-slash31-bond0.txt",
        "iproute2/ip-br-c-a-gpu-node-ens-naming-bond-members-no-addr.txt",
        "iproute2/ip-brief-link-show-laptop-no-carrier-no-trailing-space.txt",
        "iproute2/ip-c-br-link-veth-at-ifN-bridges-trailing-space.txt",
        "iproute2/ip-c-br-link-veth-pairs-M-DOWN-partial.txt",
    ] {
        let e = parse::ip_addr::parse(&fx(f)).unwrap_err();
        assert_eq!(e.line, 1, "{f}");
        assert!(e.reason.contains("ip -j addr"), "{e}");
        rejected_by_all(&fx(f));
    }
}

#[test]
fn ip_addr_details_laptop() {
    let ifs = parse::ip_addr::parse(&fx(
        "iproute2/ip-d-j-addr-laptop-wg-wwan-sit-netplan-testdata.json",
    ))
    .unwrap();
    let names: Vec<_> = ifs.iter().map(|i| i.ifname.as_str()).collect();
    assert_eq!(names.first(), Some(&"lo"));
    assert!(
        names.contains(&"wwan0") && names.contains(&"tun0"),
        "{names:?}"
    );
    let wwan = ifs.iter().find(|i| i.ifname == "wwan0").unwrap();
    assert_eq!(wwan.operstate.as_deref(), Some("DOWN"));
    assert!(wwan.addresses.is_empty());
    let tun = ifs.iter().find(|i| i.ifname == "tun0").unwrap();
    assert!(
        tun.addresses
            .iter()
            .any(|a| a.local.as_deref() == Some("2001:dead:beef::2")),
        "{tun:?}"
    );
}

#[test]
fn lab_ip_addr() {
    let ifs = parse::ip_addr::parse(&fx("lab/ip-j-addr-netns.json")).unwrap();
    assert_eq!(ifs.len(), 2);
    let fab = &ifs[1];
    assert_eq!(fab.ifname, "fab0");
    assert_eq!(fab.operstate.as_deref(), Some("UP"));
    assert_eq!(fab.mtu, Some(1500));
    assert_eq!(fab.link_index, Some(84));
    assert_eq!(fab.addresses[0].family.as_deref(), Some("inet"));
    assert_eq!(fab.addresses[0].local.as_deref(), Some("10.213.0.11"));
    assert_eq!(fab.addresses[0].prefixlen, Some(24));
    assert_eq!(fab.addresses[1].family.as_deref(), Some("inet6"));
    assert_eq!(ifs[0].mtu, Some(65536));
}

/// The identity check's two answers, captured together: the neighbour entry one namespace
/// host has for its peer's address, and the peer's own `ip -j addr`, whose interface holding
/// that address has the same MAC.
#[test]
fn lab_ip_neigh() {
    let n = parse::ip_neigh::parse(&fx("lab/ip-j-neigh-show-addr-dev-reachable.json")).unwrap();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].dst, "10.77.0.2");
    assert_eq!(
        n[0].dev, None,
        "`dev` named on the command line is left out"
    );
    assert_eq!(n[0].lladdr.as_deref(), Some("3a:f1:30:0e:75:2d"));
    assert_eq!(n[0].state, ["REACHABLE"]);
    assert!(!n[0].router);
    let peer = parse::ip_addr::parse(&fx("lab/ip-j-addr-neigh-peer-idvb.json")).unwrap();
    let holder = peer
        .iter()
        .find(|i| {
            i.addresses
                .iter()
                .any(|a| a.local.as_deref() == Some("10.77.0.2"))
        })
        .unwrap();
    assert_eq!(holder.ifname, "idvb");
    assert_eq!(holder.address, n[0].lladdr);
    // an address that never answered: no MAC
    let n = parse::ip_neigh::parse(&fx("lab/ip-j-neigh-show-addr-dev-incomplete.json")).unwrap();
    assert_eq!(
        (n[0].dst.as_str(), n[0].lladdr.as_deref()),
        ("10.77.0.9", None)
    );
    assert_eq!(n[0].state, ["INCOMPLETE"]);
    // no entry at all (never asked, or behind a router): an empty list
    let n = parse::ip_neigh::parse(&fx("lab/ip-j-neigh-show-addr-dev-no-entry.json")).unwrap();
    assert!(n.is_empty());
    let n = parse::ip_neigh::parse(&fx("lab/ip-j-neigh-show-all-two-entries.json")).unwrap();
    assert_eq!(n.len(), 2);
    assert_eq!(n[0].dev.as_deref(), Some("idva"));
    assert_eq!(n[0].lladdr, None);
    assert_eq!(n[1].lladdr.as_deref(), Some("3a:f1:30:0e:75:2d"));
    // the text form is refused naming the JSON one
    let e = parse::ip_neigh::parse("10.77.0.2 dev idva lladdr 3a:f1:30:0e:75:2d REACHABLE\n")
        .unwrap_err();
    assert!(e.reason.contains("ip -j neigh"), "{e}");
}

// ---------------------------------------------------------------- rdma / ofed / ping

#[test]
fn ibdev2netdev_dgx_spark() {
    let m = parse::ibdev2netdev::parse(&fx(
        "rdma/ibdev2netdev-dgx-spark-rocep-roceP2-capital-P-domain.txt",
    ))
    .unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(m[2].rdma_device, "roceP2p1s0f0");
    assert_eq!(m[2].netdev, "enP2p1s0f0np0");
    assert_eq!(m[2].state, "Down");
    assert_eq!(m[3].state, "Up");
    assert!(m.iter().all(|x| x.port == 1));
}

#[test]
fn ibdev2netdev_roce_lag() {
    let m = parse::ibdev2netdev::parse(&fx(
        "rdma/ibdev2netdev-roce-lag-bond-mlx5_bond_0-and-huawei-hrn3.txt",
    ))
    .unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(
        (m[0].rdma_device.as_str(), m[0].netdev.as_str()),
        ("hrn3_bond_0", "bond0")
    );
    assert_eq!(
        (m[1].rdma_device.as_str(), m[1].netdev.as_str()),
        ("mlx5_bond_0", "bond1")
    );
}

#[test]
fn rdma_link_old_format() {
    let l = parse::rdma_link::parse(&fx(
        "rdma/rdma-link-show-old-format-bf3-roce-lag-mlx5_bond-indented.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 4);
    assert_eq!(l[3].rdma_device, "mlx5_bond_3");
    assert_eq!(l[3].port, 1);
    assert_eq!(l[3].netdev.as_deref(), Some("reth6"));
    assert!(l
        .iter()
        .all(|x| x.state.as_deref() == Some("ACTIVE")
            && x.physical_state.as_deref() == Some("LINK_UP")));
}

#[test]
fn rdma_link_new_format() {
    let l = parse::rdma_link::parse(&fx(
        "rdma/rdma-link-softroce-rxe-renamed-rocep-trailing-space.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].rdma_device, "rocep0s8");
    assert_eq!(l[0].netdev.as_deref(), Some("enp0s8"));
    assert_eq!(l[0].state.as_deref(), Some("ACTIVE"));
}

/// An InfiniBand port's `rdma link` line (real, a ConnectX-5 in IB mode): subnet prefix, LID and
/// SM LID, no netdev.
#[test]
fn rdma_link_infiniband() {
    let l = parse::rdma_link::parse(&fx(
        "rdma/rdma-link-ib-cx5-subnet-prefix-lid-sm_lid-no-netdev.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 1);
    assert_eq!((l[0].rdma_device.as_str(), l[0].port), ("mlx5_0", 1));
    assert_eq!(l[0].subnet_prefix.as_deref(), Some("fe80:0000:0000:0000"));
    assert_eq!((l[0].lid, l[0].sm_lid), (Some(2), Some(2)));
    assert_eq!(l[0].state.as_deref(), Some("ACTIVE"));
    assert_eq!(l[0].physical_state.as_deref(), Some("LINK_UP"));
    assert_eq!(l[0].netdev, None);
}

/// NCCL's `NET/<transport> : Using` line, read per line (the fixtures are INFO logs, not whole
/// nccl-tests outputs): a merged virtual NIC list (NCCL 2.20+, `[0]={[0] mlx5_2:1/RoCE, ...}`,
/// real log of NVIDIA/nccl-tests#373) gives each member device; the plain form of the real
/// nccl#1537 log gives its two devices with the host of the line's prefix; a socket list its
/// entry.
#[test]
fn nccl_net_using_lines() {
    let using = |f: &str| -> Vec<parse::nccl::NetUsing> {
        fx(f)
            .lines()
            .filter_map(parse::nccl::net_using_line)
            .collect()
    };
    let u = using("nccl-tests/nccl-info-net-ib-merged-nics-ibext_v8-roce-nccl-tests373.txt");
    assert_eq!(u.len(), 1);
    assert_eq!(
        (u[0].host.as_deref(), u[0].transport.as_str()),
        (Some("bigo"), "IB")
    );
    assert_eq!(
        u[0].devices,
        [
            "mlx5_2:1/RoCE",
            "mlx5_3:1/RoCE",
            "mlx5_0:1/RoCE",
            "mlx5_1:1/RoCE"
        ]
    );
    let u = using("nccl-tests/nccl-info-gdr-disabled-for-hca-roce-nccl1537.txt");
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].host.as_deref(), Some("hostname1"));
    assert_eq!(u[0].devices, ["mlx5_0:1/RoCE", "mlx5_1:1/RoCE"]);
    let u = using("nccl-tests/all_reduce-v2.19.6-nccl2.28.9-1xH200-g1-debug-info-netib-nodevice-socket-firecracker.txt");
    let socket: Vec<_> = u.iter().filter(|x| x.transport == "Socket").collect();
    assert_eq!(socket[0].devices, ["eth0:192.0.2.2<0>"]);
    assert!(
        u.iter()
            .any(|x| x.transport == "IB" && x.devices.is_empty()),
        "{u:?}"
    );
}

#[test]
fn ofed_info_doca() {
    let o = parse::ofed_info::parse(&fx(
        "rdma/ofed_info-s-doca-ofed-internal-23.07-indented.txt",
    ))
    .unwrap();
    assert_eq!(o.raw, "OFED-internal-23.07-0.5.0:");
    assert_eq!(o.version, "23.07-0.5.0");
    assert_eq!(o.flavor, "DOCA");
    let m = parse::ofed_info::parse("MLNX_OFED_LINUX-24.10-1.1.4.0:\n").unwrap();
    assert_eq!(
        (m.version.as_str(), m.flavor.as_str()),
        ("24.10-1.1.4.0", "MLNX_OFED")
    );
}

#[test]
fn lab_ping() {
    let ok = parse::ping::parse(&fx("lab/ping-4-ok.txt")).unwrap();
    assert_eq!((ok.transmitted, ok.received), (Some(4), Some(4)));
    close(ok.loss_pct, 0.0);
    close(ok.rtt_min_ms, 0.068);
    close(ok.rtt_avg_ms, 0.133);
    close(ok.rtt_max_ms, 0.324);
    let lost = parse::ping::parse(&fx("lab/ping-3-unreachable-100pct-loss.txt")).unwrap();
    assert_eq!((lost.transmitted, lost.received), (Some(3), Some(0)));
    close(lost.loss_pct, 100.0);
    assert_eq!(lost.rtt_avg_ms, None);
    let unknown = parse::ping::parse(&fx("lab/ping-unknown-host.txt")).unwrap();
    assert_eq!(
        unknown.error.as_deref(),
        Some("ping: nosuchhost.invalid: Temporary failure in name resolution")
    );
    assert_eq!(unknown.transmitted, None);
}

// ---------------------------------------------------------------- ibv-devinfo (extra KIND)

#[test]
fn ibv_devinfo_8x_cx7_ib() {
    let d = parse::ibv_devinfo::parse(&fx(
        "rdma/ibv_devinfo-8xcx7-ndr-ib-dell-psid-noncontiguous-names.txt",
    ))
    .unwrap();
    let names: Vec<_> = d.iter().map(|d| d.hca_id.as_str()).collect();
    assert_eq!(
        names,
        ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    );
    assert!(d
        .iter()
        .all(|d| d.fw_ver.as_deref() == Some("28.41.1000") && d.vendor_part_id == Some(4129)));
    assert_eq!(d[0].board_id.as_deref(), Some("DEL0000000036"));
    let p = &d[0].ports[0];
    assert_eq!(p.state.as_deref(), Some("PORT_ACTIVE"));
    assert_eq!(p.link_layer.as_deref(), Some("InfiniBand"));
    assert_eq!(
        (p.sm_lid, p.port_lid, p.active_mtu),
        (Some(5790), Some(3697), Some(4096))
    );
}

#[test]
fn ibv_devinfo_dgx_spark() {
    let d = parse::ibv_devinfo::parse(&fx(
        "rdma/ibv_devinfo-dgx-spark-cx7-4dev-rocep-2down-active_mtu-1024.txt",
    ))
    .unwrap();
    assert_eq!(d.len(), 4);
    assert_eq!(d[2].hca_id, "roceP2p1s0f0");
    let states: Vec<_> = d
        .iter()
        .map(|d| d.ports[0].state.as_deref().unwrap())
        .collect();
    assert_eq!(states.iter().filter(|s| **s == "PORT_DOWN").count(), 2);
    assert_eq!(d[0].ports[0].state.as_deref(), Some("PORT_DOWN"));
    assert_eq!(d[0].ports[0].active_mtu, Some(1024));
    assert_eq!(d[1].ports[0].active_mtu, Some(4096));
    // The RoCE-MTU check compares active_mtu with max_mtu and the netdev MTU: 4096 everywhere.
    assert!(d.iter().all(|d| d.ports[0].max_mtu == Some(4096)));
    assert!(d
        .iter()
        .all(|d| d.ports[0].link_layer.as_deref() == Some("Ethernet")));
    assert_eq!(d[0].fw_ver.as_deref(), Some("28.45.4028"));
}

#[test]
fn ibv_devinfo_mlx4_two_ports() {
    let d = parse::ibv_devinfo::parse(&fx("rdma/ibv_devinfo-mlx4-connectx3-2port-port2-down.txt"))
        .unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].fw_ver.as_deref(), Some("2.42.5000"));
    assert_eq!(d[0].vendor_part_id, Some(4099));
    assert_eq!(d[0].phys_port_cnt, Some(2));
    assert_eq!(d[0].ports.len(), 2);
    assert_eq!(d[0].ports[0].link_layer.as_deref(), Some("InfiniBand"));
    assert_eq!(d[0].ports[1].state.as_deref(), Some("PORT_DOWN"));
    assert_eq!(d[0].ports[1].link_layer.as_deref(), Some("Ethernet"));
}

#[test]
fn ibv_devinfo_verbose_rxe() {
    let d = parse::ibv_devinfo::parse(&fx("rdma/ibv_devinfo-v-softroce-rxe0.txt")).unwrap();
    assert_eq!(d[0].hca_id, "rxe0");
    assert_eq!(d[0].vendor_id.as_deref(), Some("0xffffff"));
    assert_eq!(d[0].fw_ver.as_deref(), Some("0.0.0"));
    let p = &d[0].ports[0];
    assert_eq!(p.active_speed.as_deref(), Some("2.5 Gbps"));
    assert_eq!(p.active_width.as_deref(), Some("1X"));
    assert_eq!(p.phys_state.as_deref(), Some("LINK_UP"));
    assert_eq!(p.active_mtu, Some(1024));
    assert!(p.gids.iter().any(|g| g == "::ffff:10.0.0.1, RoCE v2"));
}

// ---------------------------------------------------------------- tools without a KIND

#[test]
fn foreign_tools_rejected() {
    for f in ["rdma/ibv_devices-dgx-spark-rocep-naming.txt"] {
        let errs = rejected_by_all(&fx(f));
        // the nearest parsers point at the first line of the foreign output
        let first = fx(f).lines().position(|l| !l.trim().is_empty()).unwrap() + 1;
        for e in errs
            .iter()
            .filter(|e| matches!(e.kind, "rdma-link" | "ibdev2netdev" | "ethtool"))
        {
            assert_eq!(e.line, first, "{f}: {e}");
        }
    }
}

/// The kernel log's link lines (issue 47, the healthcheck's link flaps): mlx5's "Link down" /
/// "Link up" with and without printk caller ids, ixgbe's "NIC Link is Up ...", IPv6's
/// "link is not ready" / "link becomes ready" not taken for the driver's.
#[test]
fn dmesg_link_lines() {
    let k =
        parse::dmesg::parse(&fx("kernel-log/dmesg-mlx5-lag-flapping-ens1f0-ens1f1.txt")).unwrap();
    let downs = |n: &str| k.events.iter().filter(|e| e.netdev == n && !e.up).count();
    assert_eq!(
        (downs("ens1f0"), downs("ens1f1"), k.events.len()),
        (6, 4, 20)
    );
    assert_eq!(k.events[0].driver, "mlx5_core");
    let k = parse::dmesg::parse(&fx("kernel-log/dmesg-mlx5-boot-down-then-up-cx-40g.txt")).unwrap();
    let seq: Vec<(&str, bool)> = k.events.iter().map(|e| (e.netdev.as_str(), e.up)).collect();
    assert_eq!(
        seq,
        [
            ("enp65s0f0", false),
            ("enp65s0f0", true),
            ("enp65s0f1", false),
            ("enp65s0f1", true)
        ]
    );
    let k = parse::dmesg::parse(&fx("kernel-log/dmesg-tail-ixgbe-up-mlx5-down.txt")).unwrap();
    assert_eq!(
        (k.events[0].driver.as_str(), k.events[0].up),
        ("ixgbe", true)
    );
    assert_eq!(k.last_time_s, Some(36409.742619));
    let k =
        parse::dmesg::parse(&fx("kernel-log/dmesg-arm64-caller-id-mlx5-link-down.txt")).unwrap();
    assert_eq!(k.events[0].bus, "0000:0b:00.1");
}

// ---------------------------------------------------------------- generic behaviour

#[test]
fn random_text_is_an_error_for_every_kind() {
    for text in [
        "",
        "   \n\n",
        "hello world\nthis is not tool output\n",
        "foo: bar\n",
        "{}",
        "[1,2,3]",
        "null",
    ] {
        for kind in parse::parsers().iter().map(|p| &p.kind) {
            let r = parse::parse(kind, text);
            // ibdev2netdev and `rdma link` print nothing on a node without RDMA devices: empty
            // input is their "no device" answer, an empty list.
            // dmesg's link lines (grepped on the node) are empty where none was logged.
            if text.trim().is_empty() && matches!(*kind, "ibdev2netdev" | "rdma-link") {
                assert_eq!(r.unwrap(), serde_json::json!([]), "`{kind}` on empty input");
                continue;
            }
            if text.trim().is_empty() && *kind == "dmesg" {
                assert_eq!(
                    r.unwrap()["events"],
                    serde_json::json!([]),
                    "`dmesg` on empty input"
                );
                continue;
            }
            assert!(r.is_err(), "`{kind}` accepted {text:?}: {r:?}");
        }
    }
    let e = parse::parse("ethtool", "\nhello world\n").unwrap_err();
    assert_eq!(
        (e.kind, e.line, e.text.as_str()),
        ("ethtool", 2, "hello world")
    );
    assert!(e.to_string().contains("ethtool"));
}

#[test]
fn unknown_kind_lists_known_kinds() {
    let e = parse::parse("nope", "x").unwrap_err();
    assert!(e.reason.contains("ethtool-driver") && e.reason.contains("ping"));
}

#[test]
fn dispatcher_covers_every_kind() {
    // Each parser's declaration names a real capture it reads (`parser!(…, sample: …)`).
    let samples: Vec<(&str, &str)> = parse::parsers()
        .iter()
        .map(|p| (p.kind, p.sample))
        .collect();
    assert!(samples.len() >= 28, "{} parsers", samples.len());
    for (kind, f) in samples {
        let v = parse::parse(kind, &fx(f)).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(v.is_object() || v.is_array(), "{kind}");
    }
    let v = parse::parse(
        "perftest",
        &fx("perftest/ib_read_bw-cx7-ndr-ib-gbits-cpufreq-warning.txt"),
    )
    .unwrap();
    assert_eq!(v["bw_avg_gbps"], 328.61);
    assert_eq!(v["rows"][0]["bytes"], 65536);
    let v = parse::parse("nccl", &fx("nccl-real/h200-all_reduce_1gpu.json")).unwrap();
    assert_eq!(v["rows"][0]["type"], "float");
    assert!(v["rows"][0]["out_of_place"]["wrong"].is_number());
}

/// Real nccl-tests 2.19.1 runs on one H200 with each table-changing flag (-I 1, -C 1, -S 1):
/// every row maps by the header, 25 rows, the new columns land in their fields.
#[test]
fn nccl_real_2_19_1_flags() {
    for f in [
        "nccl-real/h200-all_reduce_2.19.1_plain.txt",
        "nccl-real/h200-all_reduce_I1.txt",
        "nccl-real/h200-all_reduce_C1.txt",
        "nccl-real/h200-all_reduce_S1.txt",
    ] {
        let n = parse::nccl::parse(&fx(f)).unwrap();
        assert_eq!(n.rows.len(), 25, "{f}");
        assert!(n.errors.is_empty(), "{f}: {:?}", n.errors);
        assert_eq!(n.nccl_tests_version.as_deref(), Some("2.19.1"), "{f}");
        assert_eq!(n.rows.last().unwrap().size_bytes, 134217728, "{f}");
    }
    // -I 1: per-iteration min/max/p99/cv% after each half.
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_I1.txt")).unwrap();
    let last = n.rows.last().unwrap();
    close(last.out_of_place.time_us, 67.60);
    close(last.out_of_place.algbw_gbs, 1985.4);
    close(last.out_of_place.iter_min_us, 64.83);
    close(last.out_of_place.iter_max_us, 69.50);
    close(last.out_of_place.iter_cv_pct, 1.96);
    close(last.in_place.time_us, 2.79);
    close(last.in_place.algbw_gbs, 48054.0);
    close(last.in_place.iter_min_us, 1.28);
    close(last.in_place.iter_cv_pct, 64.10);
    // -C 1: the time columns are CPU time.
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_C1.txt")).unwrap();
    assert!(n.cpu_time);
    close(n.rows.last().unwrap().out_of_place.time_us, 4.96);
    // -S 1: a timestamp (date and time) ends each row.
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_S1.txt")).unwrap();
    assert_eq!(
        n.rows.last().unwrap().timestamp.as_deref(),
        Some("2026-12-03 12:30:04")
    );
    close(n.rows.last().unwrap().in_place.time_us, 0.38);
    // all_gather with -I 1: a 0-byte first row, redop none.
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_gather_I1.txt")).unwrap();
    assert_eq!(n.rows.len(), 25);
    assert_eq!(n.rows[0].size_bytes, 0);
    assert_eq!(n.rows[0].redop.as_deref(), Some("none"));
    close(n.rows.last().unwrap().out_of_place.iter_p99_us, 70.11);
}

/// The same H200 run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: version, transport and
/// network device from the INFO lines (no RDMA devices there: Socket).
#[test]
fn nccl_real_2_19_1_debug() {
    let n = parse::nccl::parse(&fx("nccl-real/h200-all_reduce_nccl-debug-init-net.txt")).unwrap();
    assert_eq!(n.rows.len(), 25);
    assert_eq!(n.nccl_version.as_deref(), Some("2.28.9+cuda13.0"));
    assert_eq!(n.transport.as_deref(), Some("Socket"));
    assert_eq!(n.net_devices, vec!["eth0:192.0.2.2<0>".to_string()]);
}

/// The simulation's `netplan-config-invalid` scenario answers step 5's `netplan generate` with
/// this real capture, unchanged (the generator copies it into the transcript directory), and
/// the capture says where the file is broken (path:line:col), which step 5's failure repeats.
#[test]
fn netplan_generate_error_reaches_the_simulation_unchanged() {
    let f = "netplan/netplan-generate-root-dir-invalid-yaml-unclosed-flow-sequence-0.106.txt";
    let real = fx(f);
    let first = real.lines().next().unwrap();
    assert!(
        first.contains("/etc/netplan/40-cx7.yaml:7:1: Invalid YAML"),
        "{first}"
    );
    let sim = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/sim/transcripts/real")
            .join(f),
    )
    .unwrap();
    assert_eq!(sim, real);
}

/// `rdma statistic show` on four ConnectX-4 Lx ports (MLNX_OFED iproute2): one line per port,
/// mlx5_0 with non-zero out_of_buffer and CQE error counters, the others all zero.
#[test]
fn rdma_statistic_nonzero() {
    let p = parse::rdma_statistic::parse(&fx(
        "rdma/rdma-statistic-show-4x-cx4lx-ofed-iproute2-nonzero-out_of_buffer-cqe-errors.txt",
    ))
    .unwrap();
    let names: Vec<_> = p.iter().map(|l| (l.device.as_str(), l.port)).collect();
    assert_eq!(
        names,
        [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_2", 1), ("mlx5_3", 1)]
    );
    let c = &p[0].counters;
    assert_eq!(c.len(), 29);
    assert_eq!(c["out_of_buffer"], 135);
    assert_eq!(c["resp_cqe_error"], 1009);
    assert_eq!(c["req_cqe_error"], 22);
    assert_eq!(c["resp_cqe_flush_error"], 998);
    assert_eq!(c["req_cqe_flush_error"], 11);
    assert_eq!(c["out_of_sequence"], 0);
    assert_eq!(c["np_cnp_sent"], 0);
    assert!(p[0].optional_counters.is_empty());
    assert!(p[1..]
        .iter()
        .all(|l| l.counters.len() == 29 && l.counters.values().all(|v| *v == 0)));
}

/// `rdma statistic show link rocep8s0f0/1` as wrapped in the mlx5 optional-counters patch
/// cover letter: the counters continue over 7 lines, then an `Optional-set:` line.
#[test]
fn rdma_statistic_wrapped_optional() {
    let p = parse::rdma_statistic::parse(&fx(
        "rdma/rdma-statistic-show-link-rocep8s0f0-wrapped-optional-set-cc-counters.txt",
    ))
    .unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].device.as_str(), p[0].port), ("rocep8s0f0", 1));
    assert_eq!(p[0].counters.len(), 28);
    assert!(p[0].counters.contains_key("local_ack_timeout_err"));
    assert!(p[0].counters.contains_key("rx_icrc_encapsulated"));
    assert!(!p[0].counters.contains_key("rx_dct_connect"));
    let opt: Vec<_> = p[0]
        .optional_counters
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(opt, [("cc_rx_ce_pkts", 0), ("cc_tx_cnp_pkts", 0)]);
}

/// `show_gids` as printed (tabs): a RoCE LAG bond with v1 and v2 GIDs for the link-local and the
/// IPv4 address; a Huawei hrn3 device that has only RoCE v2 GIDs beside a ConnectX bond.
#[test]
fn show_gids_tabs() {
    let g = parse::show_gids::parse(&fx(
        "rdma/show_gids-mlx5_bond_0-tabs-ipv4-v1-v2-n_gids_found.txt",
    ))
    .unwrap();
    assert_eq!(g.len(), 4);
    assert!(g.iter().all(|x| x.device == "mlx5_bond_0" && x.port == 1));
    assert_eq!(g[0].gid, "fe80:0000:0000:0000:0e42:a1ff:fead:479a");
    assert_eq!(
        (g[0].index, g[0].ipv4.as_deref(), g[0].roce_version.as_str()),
        (0, None, "v1")
    );
    assert_eq!(g[2].ipv4.as_deref(), Some("10.96.83.26"));
    assert_eq!(
        (g[2].roce_version.as_str(), g[3].roce_version.as_str()),
        ("v1", "v2")
    );
    assert_eq!(g[3].index, 3);
    assert_eq!(g[3].netdev.as_deref(), Some("bond0"));
    let g =
        parse::show_gids::parse(&fx("rdma/show_gids-hrn3-only-v2-and-mlx5-bond-tabs.txt")).unwrap();
    assert_eq!(g.len(), 4);
    assert_eq!(
        (g[0].device.as_str(), g[0].roce_version.as_str()),
        ("hrn3_bond_0", "v2")
    );
    assert_eq!(
        (g[1].index, g[1].ipv4.as_deref()),
        (1, Some("27.105.180.3"))
    );
    assert_eq!(g[1].gid, "0000:0000:0000:0000:0000:ffff:1b69:b403");
    assert_eq!(
        (g[2].device.as_str(), g[2].roce_version.as_str()),
        ("mlx5_bond_0", "v1")
    );
    assert_eq!(g[3].netdev.as_deref(), Some("bond1"));
}

/// `show_gids` terminal copies with spaces: six ConnectX ports of which two carry an IPv4 GID;
/// a ConnectX-4 with a RoCE port and an InfiniBand port (no netdev column) and the trailer.
#[test]
fn show_gids_spaces() {
    let g = parse::show_gids::parse(&fx(
        "rdma/show_gids-6x-mlx5-cx-spaces-ipv4-on-two-devices-no-trailer.txt",
    ))
    .unwrap();
    assert_eq!(g.len(), 16);
    let v2_ipv4: Vec<_> = g
        .iter()
        .filter(|x| x.roce_version == "v2" && x.ipv4.is_some())
        .map(|x| {
            (
                x.device.as_str(),
                x.index,
                x.ipv4.as_deref().unwrap(),
                x.netdev.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        v2_ipv4,
        [
            ("mlx5_1", 3, "10.200.0.28", "ens1f1"),
            ("mlx5_2", 3, "10.200.0.52", "ens2f0")
        ]
    );
    assert_eq!(g[15].netdev.as_deref(), Some("enp65s0f1np1"));
    let g = parse::show_gids::parse(&fx(
        "rdma/show_gids-cx4-roce-plus-ib-port-empty-netdev-n_gids_found.txt",
    ))
    .unwrap();
    assert_eq!(g.len(), 3);
    assert_eq!(g[1].netdev.as_deref(), Some("ens11f0"));
    assert_eq!(
        (g[2].device.as_str(), g[2].netdev.as_deref()),
        ("mlx5_1", None)
    );
    assert_eq!(g[2].gid, "fe80:0000:0000:0000:248a:0703:00b1:bc05");
}

/// `lspci -vv` of a ConnectX-7 PF (capable Gen5 x16) trained at 16GT/s x8, both marked
/// `(downgraded)`, and one of its SR-IOV VFs (`Speed unknown`, `Width x0`).
#[test]
fn lspci_cx7_downgraded() {
    let d = parse::lspci::parse(&fx(
        "lspci/lspci-vv-cx7-pf-gen4-x8-downgraded-and-vf-speed-unknown-x0.txt",
    ))
    .unwrap();
    assert_eq!(d.len(), 2);
    let pf = &d[0];
    assert_eq!(
        (pf.address.as_str(), pf.class.as_str()),
        ("b1:00.1", "Ethernet controller")
    );
    assert_eq!(pf.name, "Mellanox Technologies MT2910 Family [ConnectX-7]");
    assert_eq!(
        (pf.lnk_cap_speed_gts, pf.lnk_cap_width),
        (Some(32.0), Some(16))
    );
    assert_eq!(
        (pf.lnk_sta_speed_gts, pf.lnk_sta_width),
        (Some(16.0), Some(8))
    );
    assert!(pf.lnk_sta_speed_downgraded && pf.lnk_sta_width_downgraded);
    assert_eq!(pf.part_number.as_deref(), Some("MCX713106AC-VEAT"));
    assert!(pf
        .product_name
        .as_deref()
        .unwrap()
        .starts_with("NVIDIA ConnectX-7 Ethernet adapter card, 200 GbE"));
    assert_eq!(pf.kernel_driver.as_deref(), Some("mlx5_core"));
    let vf = &d[1];
    assert_eq!(vf.address, "b1:00.2");
    assert_eq!(
        vf.name,
        "Mellanox Technologies ConnectX Family mlx5Gen Virtual Function"
    );
    assert_eq!((vf.lnk_sta_speed_gts, vf.lnk_sta_width), (None, Some(0)));
    assert!(vf.lnk_sta_speed_downgraded && vf.lnk_sta_width_downgraded);
    assert_eq!(
        (vf.part_number.as_deref(), vf.kernel_driver.as_deref()),
        (None, Some("mlx5_vfio_pci"))
    );
}

/// Whole `lspci -vv` captured on the H200 machine (Firecracker VM): six virtio/bridge functions
/// without a PCIe link and the H200 at 32GT/s x16 of 32GT/s x16, no markers (pciutils 3.9.0).
#[test]
fn lspci_h200_vm() {
    let d = parse::lspci::parse(&fx(
        "lspci/lspci-vv-h200-firecracker-vm-virtio-gen5-x16.txt",
    ))
    .unwrap();
    let addrs: Vec<_> = d.iter().map(|x| x.address.as_str()).collect();
    assert_eq!(
        addrs,
        ["00:00.0", "00:01.0", "00:02.0", "00:03.0", "00:04.0", "00:05.0", "00:06.0"]
    );
    assert_eq!(
        (d[0].class.as_str(), d[0].name.as_str()),
        ("Host bridge", "Intel Corporation Device 0d57")
    );
    assert_eq!(d[4].class, "Unassigned class [ffff]");
    assert!(d[..6]
        .iter()
        .all(|x| x.lnk_cap_width.is_none() && x.lnk_sta_width.is_none()));
    let gpu = &d[6];
    assert_eq!(
        (gpu.class.as_str(), gpu.name.as_str()),
        ("3D controller", "NVIDIA Corporation Device 2335 (rev a1)")
    );
    assert_eq!(
        (gpu.lnk_cap_speed_gts, gpu.lnk_cap_width),
        (Some(32.0), Some(16))
    );
    assert_eq!(
        (gpu.lnk_sta_speed_gts, gpu.lnk_sta_width),
        (Some(32.0), Some(16))
    );
    assert!(!gpu.lnk_sta_speed_downgraded && !gpu.lnk_sta_width_downgraded);
    assert_eq!(gpu.kernel_driver.as_deref(), Some("nvidia"));
}

/// NCCL_DEBUG=INFO all_reduce_perf -g 1 captured on the H200 machine (nccl-tests 2.19.6 built
/// there against the nvidia-nccl-cu13 wheel, NCCL 2.28.9): no IB device, NET/Socket on eth0.
#[test]
fn nccl_h200_2_28_socket() {
    let n = parse::nccl::parse(&fx(
        "nccl-tests/all_reduce-v2.19.6-nccl2.28.9-1xH200-g1-debug-info-netib-nodevice-socket-firecracker.txt",
    ))
    .unwrap();
    assert_eq!(n.nccl_tests_version.as_deref(), Some("2.19.6"));
    assert_eq!(n.nccl_version.as_deref(), Some("2.28.9+cuda13.0"));
    assert_eq!(n.transport.as_deref(), Some("Socket"));
    assert_eq!(n.rows.len(), 25);
    assert_eq!(n.rows.last().unwrap().size_bytes, 134217728);
    assert_eq!(n.devices[0].name, "NVIDIA H200");
    assert_eq!(n.out_of_bounds, Some(0));
    // `vm:829:829 [0] NCCL INFO NET/Socket : Using [0]eth0:192.0.2.2<0>`: the transport's
    // device line, per host (the `NET/IB : Using [RO]` line lists no device and is not the
    // transport's)
    assert_eq!(n.net_devices, vec!["eth0:192.0.2.2<0>".to_string()]);
    let by: Vec<(&str, Vec<&str>)> = n
        .net_devices_by_host
        .iter()
        .map(|(h, d)| (h.as_str(), d.iter().map(|x| x.as_str()).collect()))
        .collect();
    assert_eq!(by, vec![("vm", vec!["eth0:192.0.2.2<0>"])]);
}

/// The four other collectives of nccl-tests 2.19.6 on one H100 (real, captured by this project,
/// 8 B to 8 GiB, one rank): reduce_scatter, all_gather and alltoall print busbw 0.00 on every
/// row (their bus factor is (n-1)/n), sendrecv prints busbw = algbw (factor 1: one rank is NOT
/// 0 for it); alltoall's and sendrecv's in-place rows print algbw `2e+06`, `8e+06` (no copy is made), which
/// is a number, not a parse failure.
#[test]
fn nccl_other_collectives_one_h100() {
    let p = |c: &str| {
        let path = [
            "nccl-tests/reduce_scatter-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt",
            "nccl-tests/all_gather-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt",
            "nccl-tests/alltoall-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt",
            "nccl-tests/sendrecv-v2.19.6-nccl2.28.9-1xH100-g1-8B-8G-debug-info-socket-firecracker.txt",
        ]
        .into_iter()
        .find(|f| f.starts_with(&format!("nccl-tests/{c}-")))
        .unwrap();
        parse::nccl::parse(&fx(path)).unwrap()
    };
    for c in ["reduce_scatter", "all_gather", "alltoall"] {
        let n = p(c);
        assert_eq!(n.collective.as_deref(), Some(c));
        assert_eq!(n.transport.as_deref(), Some("Socket"), "{c}");
        assert_eq!(n.out_of_bounds, Some(0), "{c}");
        assert_eq!(n.avg_busbw_gbs, Some(0.0), "{c}");
        assert_eq!(n.max_busbw_gbs, Some(0.0), "{c}");
        assert!(n.rows.len() >= 28, "{c}: {}", n.rows.len());
    }
    let a = p("alltoall");
    let last = a.rows.last().unwrap();
    assert_eq!(last.redop.as_deref(), Some("none"));
    assert_eq!(last.in_place.algbw_gbs, Some(8e6));
    let s = p("sendrecv");
    assert_eq!(s.rows.last().unwrap().size_bytes, 8589934592);
    assert_eq!(s.rows.last().unwrap().out_of_place.busbw_gbs, Some(1433.0));
    assert_eq!(s.avg_busbw_gbs, Some(91278.7));
    assert_eq!(s.max_busbw_gbs, Some(2e6));
}

/// GPUDirect RDMA in NCCL's INFO log (real job logs from NVIDIA/nccl issues): 12 channel lines
/// all `via NET/IB/N/GDRDMA`; `GPU Direct RDMA Disabled for HCA 0 'mlx5_0'` and HCA 1 on a RoCE
/// job; 6 channel lines over the IBext_v8 plugin without `/GDRDMA`.
#[test]
fn nccl_gdr_info_lines() {
    let g = parse::nccl::gdr(&fx(
        "nccl-tests/nccl-info-gdrdma-channels-a100-roce-nccl707.txt",
    ));
    assert_eq!((g.net_channels, g.gdrdma_channels), (12, 12));
    assert!(g.disabled.is_empty() && g.enabled_hcas.is_empty(), "{g:?}");
    let g = parse::nccl::gdr(&fx(
        "nccl-tests/nccl-info-gdr-disabled-for-hca-roce-nccl1537.txt",
    ));
    assert_eq!(g.disabled, vec!["mlx5_0".to_string(), "mlx5_1".to_string()]);
    assert_eq!(g.net_channels, 0);
    let g = parse::nccl::gdr(&fx(
        "nccl-tests/nccl-info-channels-via-net-ibext-no-gdrdma-nccl1814.txt",
    ));
    assert_eq!((g.net_channels, g.gdrdma_channels), (6, 0));
}

/// The mlx5 physical-layer counters the fabric-health checks read, by their real names: a
/// ConnectX port with CRC/symbol/PCS errors and FEC-corrected bits mostly on lane 3 (comments of
/// the annotated capture stripped), and a ConnectX-6 Dx 100G port with millions of errors on all
/// four lanes (`ethtool -S | grep err | grep -v ' 0'`).
#[test]
fn ethtool_stats_phy_counters() {
    let s = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-mlx5-phy-section-crc-symbol-pcs-errors-fec-corrected-bits-lane3-comments-stripped.txt",
    ))
    .unwrap();
    let c = &s.counters;
    assert_eq!(c.len(), 59);
    assert_eq!(c["link_down_events_phy"], 0);
    assert_eq!(c["rx_crc_errors_phy"], 386);
    assert_eq!(c["rx_symbol_err_phy"], 386);
    assert_eq!(c["rx_pcs_symbol_err_phy"], 386);
    assert_eq!(c["rx_corrected_bits_phy"], 17750739);
    assert_eq!(c["rx_err_lane_0_phy"], 28116);
    assert_eq!(c["rx_err_lane_3_phy"], 17722623);
    assert_eq!(c["tx_pci_signal_integrity"], 2);
    assert_eq!(c["module_high_temp"], 0);
    let s = parse::ethtool_stats::parse(&fx(
        "ethtool/ethtool-S-cx6dx-100g-grep-err-nonzero-crc-symbol-all-lanes-power-budget.txt",
    ))
    .unwrap();
    assert_eq!(s.counters.len(), 6);
    assert_eq!(s.counters["rx_crc_errors_phy"], 13147323);
    assert_eq!(s.counters["rx_symbol_err_phy"], 13115284);
    assert!((0..4).all(|l| s.counters[&format!("rx_err_lane_{l}_phy")] == 13115284));
}

/// `ethtool -I --show-fec`: per-lane `Lane N:` lines (one-space indented as in the ethtool
/// patch cover letter), Intel E810 RS with zero blocks, and the 6.18 histogram with
/// `[ per_lane: ... ]` brackets.
#[test]
fn show_fec_statistics() {
    let f = parse::show_fec::parse(&fx(
        "ethtool/ethtool-I-show-fec-per-lane-stats-cover-letter-one-space-indent.txt",
    ))
    .unwrap();
    assert_eq!(f.interface, "eth0");
    assert_eq!(f.configured_encodings, ["None"]);
    assert_eq!(f.active_encoding.as_deref(), Some("None"));
    assert_eq!(
        (f.corrected_blocks, f.uncorrectable_blocks),
        (Some(256), Some(145))
    );
    assert_eq!(f.per_lane["corrected_blocks"], [255, 1]);
    assert_eq!(f.per_lane["uncorrectable_blocks"], [128, 17]);
    let f = parse::show_fec::parse(&fx(
        "ethtool/ethtool-I-show-fec-ice-e810-rs-supported-configured-zero-blocks.txt",
    ))
    .unwrap();
    assert_eq!(f.interface, "ens21f0np0");
    assert_eq!(f.configured_encodings, ["Auto", "RS", "BaseR"]);
    assert_eq!(f.active_encoding.as_deref(), Some("RS"));
    assert_eq!(
        (f.corrected_blocks, f.uncorrectable_blocks),
        (Some(0), Some(0))
    );
    assert!(f.per_lane.is_empty());
    let f = parse::show_fec::parse(&fx(
        "ethtool/ethtool-I-show-fec-6.18-histogram-per-lane-brackets-uncorrectable-4.txt",
    ))
    .unwrap();
    assert_eq!(f.interface, "eni8np1");
    assert_eq!(
        (f.corrected_blocks, f.uncorrectable_blocks),
        (Some(123), Some(4))
    );
    assert_eq!(f.statistics["fec_symbol_err_0"], 445);
    assert_eq!(f.statistics["fec_symbol_err_4_to_7"], 2);
    assert_eq!(f.per_lane["fec_symbol_err_0"], [125, 120, 100, 100]);
    assert_eq!(f.statistics.len(), 5);
}

/// What ethtool prints for `--show-fec` on a NIC without FEC (virtio on the H200 machine): an
/// error naming the line, not an empty result.
#[test]
fn show_fec_not_supported() {
    let e = parse::show_fec::parse(&fx(
        "ethtool/ethtool-show-fec-virtio-netlink-operation-not-supported.txt",
    ))
    .unwrap_err();
    assert_eq!((e.kind, e.line), ("show-fec", 1));
    assert_eq!(e.text, "netlink error: Operation not supported");
    assert!(e.reason.contains("FEC parameters"), "{e}");
}

/// `mlnx_qos -i mce0` after DCBX from the switch: trust dscp, PFC on priority 3 only, ETS 50/50
/// between tc 0 (priorities 0,1,2,4,5,7) and tc 3, tc 6 vendor; buffers with max_buffer_size.
#[test]
fn mlnx_qos_dscp_pfc3() {
    let q = parse::mlnx_qos::parse(&fx(
        "mlnx_qos/mlnx_qos-dscp-firmware-dcbx-pfc3-ets-50-50-max-buffer.txt",
    ))
    .unwrap();
    assert_eq!(q.dcbx_mode.as_deref(), Some("Firmware controlled"));
    assert_eq!(q.trust_state, "dscp");
    assert_eq!(q.dscp2prio.len(), 64);
    assert_eq!(
        (
            q.dscp2prio[&26],
            q.dscp2prio[&0],
            q.dscp2prio[&48],
            q.dscp2prio[&63]
        ),
        (3, 0, 6, 7)
    );
    assert_eq!(q.receive_buffer_bytes, [130944, 130944, 0, 0, 0, 0, 0, 0]);
    assert_eq!((q.max_buffer_bytes, q.cable_len), (Some(262016), Some(7)));
    assert_eq!(q.pfc_enabled_priorities, [3]);
    assert_eq!(q.pfc_buffer, [0, 0, 0, 1, 0, 0, 0, 0]);
    let tcs: Vec<_> = q
        .tcs
        .iter()
        .map(|t| (t.tc, t.tsa.as_str(), t.bw_pct, t.priorities.clone()))
        .collect();
    assert_eq!(
        tcs,
        [
            (0, "ets", Some(50), vec![0, 1, 2, 4, 5, 7]),
            (3, "ets", Some(50), vec![3]),
            (6, "vendor", None, vec![6]),
        ]
    );
    assert!(q.tcs.iter().all(|t| t.ratelimit == "unlimited"));
}

/// `mlnx_qos -i ens6` on a ConnectX left at its defaults: trust pcp, no PFC, no dscp2prio, eight
/// vendor classes with priorities 0 and 1 swapped between tc 0 and tc 1.
#[test]
fn mlnx_qos_pcp_default() {
    let q = parse::mlnx_qos::parse(&fx(
        "mlnx_qos/mlnx_qos-pcp-os-dcbx-no-pfc-tsa-vendor-default.txt",
    ))
    .unwrap();
    assert_eq!(
        (q.dcbx_mode.as_deref(), q.trust_state.as_str()),
        (Some("OS controlled"), "pcp")
    );
    assert!(q.dscp2prio.is_empty() && q.pfc_enabled_priorities.is_empty());
    assert_eq!(q.receive_buffer_bytes, [524160, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(q.max_buffer_bytes, None);
    assert_eq!(q.pfc_buffer, [0; 8]);
    assert_eq!(q.tcs.len(), 8);
    assert_eq!((q.tcs[0].tc, q.tcs[0].priorities.as_slice()), (0, &[1][..]));
    assert_eq!((q.tcs[1].tc, q.tcs[1].priorities.as_slice()), (1, &[0][..]));
    assert!(q
        .tcs
        .iter()
        .all(|t| t.tsa == "vendor" && t.bw_pct.is_none()));
    let e = parse::mlnx_qos::parse(
        "Priority trust state: dscp\nPFC configuration:\n  enabled 0 0 0 1\n",
    )
    .unwrap_err();
    assert_eq!(e.line, 3);
}

/// `ethtool -m` of a Mellanox 100G SR4 QSFP28 (tabs): four lanes of bias/TX/RX power, the
/// module's thresholds, no flag raised.
#[test]
fn ethtool_module_qsfp28_sr4() {
    let m = parse::ethtool_module::parse(&fx(
        "ethtool-m/ethtool-m-qsfp28-100g-sr4-mellanox-mma1b00-per-channel-tabs-thresholds.txt",
    ))
    .unwrap();
    assert_eq!(
        (m.identifier.as_str(), m.form_factor.as_deref()),
        ("0x11 (QSFP28)", Some("QSFP28"))
    );
    assert_eq!(m.connector.as_deref(), Some("0x0c (MPO Parallel Optic)"));
    assert_eq!(
        m.transceiver_type,
        ["100G Ethernet: 100G Base-SR4 or 25GBase-SR"]
    );
    assert_eq!(
        (m.vendor_name.as_deref(), m.vendor_pn.as_deref()),
        (Some("Mellanox"), Some("MMA1B00-C100D"))
    );
    assert_eq!(
        (m.vendor_sn.as_deref(), m.vendor_rev.as_deref()),
        (Some("MT1708FT01255"), Some("A4"))
    );
    close(m.temperature_c, 30.56);
    close(m.voltage_v, 3.2350);
    assert_eq!(
        m.lanes.iter().map(|l| l.lane).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    close(m.lanes[0].tx_bias_ma, 6.750);
    close(m.lanes[0].tx_power_mw, 1.3924);
    close(m.lanes[0].tx_power_dbm, 1.44);
    close(m.lanes[1].rx_power_dbm, -0.09);
    close(m.lanes[3].rx_power_mw, 1.1340);
    close(m.lanes[3].tx_power_dbm, 1.27);
    let t = &m.thresholds;
    close(t.rx_power_low_alarm_dbm, -13.31);
    close(t.rx_power_low_warning_dbm, -10.30);
    close(t.rx_power_high_alarm_dbm, 5.40);
    close(t.tx_power_low_alarm_dbm, -11.40);
    close(t.tx_power_high_warning_dbm, 2.40);
    close(t.temperature_high_alarm_c, 80.0);
    close(t.temperature_high_warning_c, 70.0);
    close(t.temperature_low_alarm_c, -10.0);
    close(t.bias_low_alarm_ma, 5.492);
    assert!(m.flags_on.is_empty());
}

/// A 40G SR4 QSFP+ with its lasers off: 0 mA bias, `0.0000 mW / -inf dBm` on every lane (dBm
/// None, mW 0) and power thresholds of 0 mW / -inf dBm (None); temperature thresholds present.
#[test]
fn ethtool_module_laser_off() {
    let m = parse::ethtool_module::parse(&fx(
        "ethtool-m/ethtool-m-qsfp-plus-40g-sr4-finisar-laser-off-minus-inf-dbm-zero-thresholds.txt",
    ))
    .unwrap();
    assert_eq!(m.form_factor.as_deref(), Some("QSFP+"));
    assert_eq!(m.transceiver_type.len(), 4);
    assert_eq!(m.vendor_name.as_deref(), Some("FINISAR CORP"));
    assert_eq!(m.lanes.len(), 4);
    assert!(m
        .lanes
        .iter()
        .all(|l| l.tx_power_mw == Some(0.0) && l.tx_power_dbm.is_none()));
    assert!(m
        .lanes
        .iter()
        .all(|l| l.rx_power_mw == Some(0.0) && l.rx_power_dbm.is_none()));
    assert!(m.lanes.iter().all(|l| l.tx_bias_ma == Some(0.0)));
    assert_eq!(m.thresholds.rx_power_low_alarm_dbm, None);
    assert_eq!(m.thresholds.tx_power_high_alarm_dbm, None);
    close(m.thresholds.temperature_high_alarm_c, 75.0);
    close(m.thresholds.temperature_low_alarm_c, -5.0);
    close(m.temperature_c, 30.93);
    assert!(m.flags_on.is_empty());
}

/// A passive 100G DAC (MCP1600): identity only, no diagnostics (no lanes, no thresholds), and
/// the temperature it reports is 0.00; `ethtool -m` errors are parse errors.
#[test]
fn ethtool_module_dac() {
    let m = parse::ethtool_module::parse(&fx(
        "ethtool-m/ethtool-m-qsfp-100g-dac-mellanox-mcp1600-passive-copper-no-dom.txt",
    ))
    .unwrap();
    assert_eq!(
        m.connector.as_deref(),
        Some("0x23 (No separable connector)")
    );
    assert_eq!(m.vendor_pn.as_deref(), Some("MCP1600-E00A"));
    assert_eq!(
        m.transceiver_type[1],
        "100G Ethernet: 100G Base-CR4 or 25G Base-CR CA-L"
    );
    assert!(m.lanes.is_empty());
    assert_eq!(m.thresholds, Default::default());
    close(m.temperature_c, 0.0);
    let e = parse::ethtool_module::parse(&fx(
        "ethtool/ethtool-show-fec-virtio-netlink-operation-not-supported.txt",
    ))
    .unwrap_err();
    assert_eq!((e.kind, e.line), ("ethtool-module", 1));
}

/// SFP (SFF-8472) layout: one lane from `Laser bias current` / `Laser output power` /
/// `Receiver signal average optical power` (no channel suffix); RX at -13.57 dBm sits between
/// the module's low warning (-14.00) and its high warning, and no flag is raised.
#[test]
fn ethtool_module_sfp() {
    let m = parse::ethtool_module::parse(&fx(
        "ethtool-m/ethtool-m-sfp-10g-sr-boyang-single-lane-rx-minus-13.57-dbm-hash-prefix-stripped.txt",
    ))
    .unwrap();
    assert_eq!(m.form_factor.as_deref(), Some("SFP"));
    assert_eq!(m.vendor_pn.as_deref(), Some("SFP-10G-SR"));
    assert_eq!(m.lanes.len(), 1);
    let l = &m.lanes[0];
    assert_eq!(l.lane, 1);
    close(l.tx_bias_ma, 6.986);
    close(l.tx_power_mw, 0.4678);
    close(l.tx_power_dbm, -3.30);
    close(l.rx_power_mw, 0.0440);
    close(l.rx_power_dbm, -13.57);
    close(m.thresholds.rx_power_low_warning_dbm, -14.00);
    close(m.thresholds.rx_power_low_alarm_dbm, -16.00);
    close(m.thresholds.tx_power_low_alarm_dbm, -9.00);
    close(m.thresholds.temperature_high_warning_c, 85.0);
    close(m.temperature_c, 42.59);
    close(m.voltage_v, 3.2820);
    assert!(m.flags_on.is_empty());
}

/// `lspci -vvv -s 000N:00:00.0 | grep -E "LnkCap:|LnkSta:"` on two DGX Sparks: the ConnectX-7
/// root ports of the broken one trained at 2.5GT/s x4 of 32GT/s x4 with NO `(downgraded)`
/// marker (the numbers tell, the marker does not), the good one at 32GT/s x4.
#[test]
fn lspci_dgx_spark_root_port_grep() {
    for f in [
        "lspci/lspci-vvv-s-0000-00-00.0-grep-lnk-dgx-spark-root-port-trained-2.5gts-x4-aspm.txt",
        "lspci/lspci-vvv-s-0002-00-00.0-grep-lnk-dgx-spark-root-port-trained-2.5gts-x4-no-marker.txt",
    ] {
        let d = parse::lspci::parse(&fx(f)).unwrap();
        assert_eq!(d.len(), 1, "{f}");
        assert_eq!(d[0].address, "", "{f}");
        assert_eq!((d[0].lnk_cap_speed_gts, d[0].lnk_cap_width), (Some(32.0), Some(4)), "{f}");
        assert_eq!((d[0].lnk_sta_speed_gts, d[0].lnk_sta_width), (Some(2.5), Some(4)), "{f}");
        assert!(!d[0].lnk_sta_speed_downgraded && !d[0].lnk_sta_width_downgraded, "{f}");
    }
    let d = parse::lspci::parse(&fx(
        "lspci/lspci-vvv-s-0002-00-00.0-grep-lnk-dgx-spark-root-port-gen5-x4-healthy.txt",
    ))
    .unwrap();
    assert_eq!(
        (d[0].lnk_sta_speed_gts, d[0].lnk_sta_width),
        (Some(32.0), Some(4))
    );
    assert_eq!(
        (d[0].lnk_cap_speed_gts, d[0].lnk_cap_width),
        (Some(32.0), Some(4))
    );
}

/// `ethtool --show-fec` (no `-I`) on a DGX Spark ConnectX-7 port behind a QSFP switch: Auto, RS
/// active, no statistics block (all statistic fields empty).
#[test]
fn show_fec_dgx_spark() {
    let f = parse::show_fec::parse(&fx(
        "ethtool/ethtool-show-fec-dgx-spark-cx7-enp1s0f1np1-auto-rs.txt",
    ))
    .unwrap();
    assert_eq!(f.interface, "enp1s0f1np1");
    assert_eq!(f.configured_encodings, ["Auto"]);
    assert_eq!(f.active_encoding.as_deref(), Some("RS"));
    assert!(f.statistics.is_empty() && f.per_lane.is_empty());
    assert_eq!((f.corrected_blocks, f.uncorrectable_blocks), (None, None));
}

/// `show_counters mlx5_bond_0` (mlnx-tools) on a busy RoCE LAG port: the same hw_counters with
/// congestion (np_cnp_sent, np_ecn_marked_roce_packets) and loss (out_of_sequence) non-zero;
/// the device is not printed, so it is empty.
#[test]
fn rdma_statistic_show_counters() {
    let p = parse::rdma_statistic::parse(&fx(
        "rdma/show_counters-mlx5_bond_0-hw-counters-nonzero-cnp-ecn-out_of_sequence.txt",
    ))
    .unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].device.as_str(), p[0].port), ("", 1));
    let c = &p[0].counters;
    assert_eq!(c.len(), 30);
    assert_eq!(c["np_cnp_sent"], 1052612505);
    assert_eq!(c["np_ecn_marked_roce_packets"], 21278189006);
    assert_eq!(c["out_of_sequence"], 1811101);
    assert_eq!(c["resp_cqe_error"], 3293504);
    assert_eq!(c["rx_write_requests"], 2402134794);
    assert_eq!(
        (
            c["packet_seq_err"],
            c["local_ack_timeout_err"],
            c["rp_cnp_handled"]
        ),
        (0, 0, 0)
    );
    let e = parse::rdma_statistic::parse("Port 1 hw counters:\nnp_cnp_sent: lots\n").unwrap_err();
    assert_eq!(e.line, 2);
}

/// `lspci -s 19:00.0 -vv` of a ConnectX-7 400G OSFP (terminal copy, spaces): 32GT/s x16 of
/// 32GT/s x16 with `(ok)` markers; VPD values padded with trailing spaces are trimmed.
#[test]
fn lspci_cx7_ok_markers() {
    let d = parse::lspci::parse(&fx(
        "lspci/lspci-vv-s-cx7-osfp-ndr-gen5-x16-ok-markers-spaces-vpd-trailing-spaces.txt",
    ))
    .unwrap();
    assert_eq!(d.len(), 1);
    let n = &d[0];
    assert_eq!(
        (n.address.as_str(), n.class.as_str()),
        ("19:00.0", "Infiniband controller")
    );
    assert_eq!(
        (n.lnk_cap_speed_gts, n.lnk_cap_width),
        (Some(32.0), Some(16))
    );
    assert_eq!(
        (n.lnk_sta_speed_gts, n.lnk_sta_width),
        (Some(32.0), Some(16))
    );
    assert!(!n.lnk_sta_speed_downgraded && !n.lnk_sta_width_downgraded);
    assert_eq!(n.part_number.as_deref(), Some("MCX75310AAS-NEAT"));
    assert!(n
        .product_name
        .as_deref()
        .unwrap()
        .ends_with("Secure Boot Enabled"));
    assert_eq!(n.kernel_driver.as_deref(), Some("mlx5_core"));
}

#[test]
fn scontrol_show_node_state_and_reason() {
    let n = parse::scontrol::parse(&fx("slurm/scontrol-22.05-show-node-o-idle.txt")).unwrap();
    assert_eq!(
        (n.name.as_str(), n.state.as_str(), n.reason.as_deref()),
        ("lab02", "IDLE", None)
    );
    assert!(n.flags.is_empty() && !n.drain());
    let n = parse::scontrol::parse(&fx(
        "slurm/scontrol-22.05-show-node-o-drained-by-fabcheck.txt",
    ))
    .unwrap();
    assert_eq!(
        (n.state.as_str(), n.flags.as_slice()),
        ("IDLE", ["DRAIN".to_string()].as_slice())
    );
    assert!(n.drain());
    // the reason as given, without the [user@time] Slurm appends
    assert_eq!(
        n.reason.as_deref(),
        Some("fabcheck: enp1s0f1np1 link: negotiated 100000 Mb/s")
    );
    let e =
        parse::scontrol::parse(&fx("slurm/scontrol-22.05-show-node-o-not-found.txt")).unwrap_err();
    assert!(e.reason.contains("Slurm has no node lab09"), "{e}");
}

#[test]
fn srun_step_of_an_allocation() {
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-step-of-allocation.txt"));
    assert_eq!(s.job.as_deref(), Some("1"));
    assert_eq!(s.step.as_deref(), Some("1.0"));
    assert_eq!(s.hosts, ["lab01", "lab02", "lab03"]);
    assert!(!s.queued && s.errors.is_empty(), "{s:?}");
}

#[test]
fn srun_new_job_outside_an_allocation() {
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-new-job-outside-allocation.txt"));
    assert_eq!(
        (s.job.as_deref(), s.step.as_deref()),
        (Some("3"), Some("3.0"))
    );
    assert_eq!(s.hosts.len(), 3);
    // Queued behind a whole-node allocation until `timeout` killed it: a job, no step.
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-queued-killed-by-timeout.txt"));
    assert!(s.queued, "{s:?}");
    assert_eq!((s.job.as_deref(), s.step.as_deref()), (Some("2"), None));
    assert!(s.hosts.is_empty() && s.errors.is_empty(), "{s:?}");
}

#[test]
fn srun_refusals_and_failures() {
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-other-users-job-access-denied.txt"));
    assert_eq!(
        s.errors,
        ["srun: error: Unable to create step for job 1: Access/permission denied"]
    );
    assert_eq!(s.step, None);
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-node-not-in-allocation.txt"));
    assert_eq!(
        s.errors,
        ["srun: error: Unable to create step for job 1: Requested node configuration is not available"]
    );
    // The step started; the program is missing on every node: srun's and slurmstepd's lines.
    let s = parse::srun::parse(&fx("slurm/srun-22.05-v-step-program-missing-execve.txt"));
    assert_eq!(s.step.as_deref(), Some("1.1"));
    assert_eq!(s.errors.len(), 6, "{s:?}");
    assert!(s.errors.iter().any(|e| e
        == "slurmstepd-lab02: error: execve(): /nonexistent-fabcheck-test/all_reduce_perf: No such file or directory"));
}

// ---------------------------------------------------------------- InfiniBand tools (issue 33)

/// Each IB parser accepts only its own tool's output: the other IB fixtures are refused.
#[test]
fn ib_parsers_refuse_each_others_output() {
    let own = [
        (
            "ibstat",
            "rdma/ibstat-8ca-azure-a100-hdr-then-ibpanic-exit255.txt",
        ),
        (
            "ibstatus",
            "rdma/ibstatus-9dev-azure-a100-hdr-plus-eth-vf.txt",
        ),
        (
            "perfquery",
            "ibdiags/perfquery-classic-mlx4-fdr-lid7-capmask-0x1400-32bit-data.txt",
        ),
        (
            "iblinkinfo",
            "ibdiags/iblinkinfo-edr-grep-up-sb7700-no-section-headers.txt",
        ),
        ("ibdiagnet", "ibdiags/ibdiagnet-routing-ar-dump-fabric-summary-15-nodes-stage-table-discovery-3-warnings.txt"),
        (
            "nvidia-smi-topo",
            "nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt",
        ),
        ("ip-route", "lab/ip-j-route-host-default-kernel.json"),
    ];
    for (kind, _) in own {
        for (other, f) in own {
            let r = parse::parse(kind, &fx(f));
            assert_eq!(r.is_ok(), kind == other, "{kind} on {f}: {r:?}");
        }
    }
}

#[test]
fn ibstat_h100_roce_tabs() {
    let s = parse::ibstat::parse(&fx(
        "rdma/ibstat-12ca-h100-roce-cx7-cx6dx-down-polling-disabled-tabs.txt",
    ))
    .unwrap();
    assert_eq!(s.cas.len(), 12);
    assert!(s.errors.is_empty());
    let ca = |n: &str| s.cas.iter().find(|c| c.ca == n).unwrap();
    let m0 = ca("mlx5_0");
    assert_eq!(m0.ca_type.as_deref(), Some("MT4129"));
    assert_eq!(m0.fw_ver.as_deref(), Some("28.39.1002"));
    assert_eq!(m0.node_guid.as_deref(), Some("0xa088c20300adeab8"));
    let p = &m0.ports[0];
    assert_eq!(
        (p.port, p.state.as_deref(), p.phys_state.as_deref()),
        (1, Some("Active"), Some("LinkUp"))
    );
    close(p.rate, 400.0);
    assert_eq!((p.base_lid, p.sm_lid), (Some(0), Some(0)));
    assert_eq!(p.link_layer.as_deref(), Some("Ethernet"));
    assert_eq!(p.port_guid.as_deref(), Some("0xa288c2fffeadeab8"));
    let m1 = ca("mlx5_1");
    assert_eq!(m1.ca_type.as_deref(), Some("MT4125"));
    close(m1.ports[0].rate, 100.0);
    let p11 = &ca("mlx5_11").ports[0];
    assert_eq!(
        (p11.state.as_deref(), p11.phys_state.as_deref()),
        (Some("Down"), Some("Polling"))
    );
    close(p11.rate, 40.0);
    let down: Vec<_> = s
        .cas
        .iter()
        .filter(|c| c.ports[0].state.as_deref() == Some("Down"))
        .map(|c| c.ca.as_str())
        .collect();
    assert_eq!(down, ["mlx5_11", "mlx5_5"]);
    assert_eq!(
        ca("mlx5_5").ports[0].phys_state.as_deref(),
        Some("Disabled")
    );
}

#[test]
fn ibstat_b300_mixed() {
    let s = parse::ibstat::parse(&fx(
        "rdma/ibstat-11ca-mixed-cx8-down-cx7-rate100-b300-host.txt",
    ))
    .unwrap();
    assert_eq!(s.cas.len(), 11);
    let m0 = &s.cas[0];
    assert_eq!(
        (m0.ca.as_str(), m0.ca_type.as_deref()),
        ("mlx5_0", Some("MT4131"))
    );
    assert_eq!(m0.fw_ver.as_deref(), Some("40.46.5500"));
    let p = &m0.ports[0];
    assert_eq!(
        (p.state.as_deref(), p.phys_state.as_deref()),
        (Some("Down"), Some("Disabled"))
    );
    close(p.rate, 10.0);
    assert_eq!((p.base_lid, p.sm_lid), (Some(65535), Some(0)));
    // lexical order, as ibstat prints it
    assert_eq!(
        (s.cas[1].ca.as_str(), s.cas[2].ca.as_str()),
        ("mlx5_1", "mlx5_10")
    );
    assert_eq!(
        s.cas[1].ports[0].port_guid.as_deref(),
        Some("0x7425540300353e0d")
    );
    let cx7_active: Vec<_> = s
        .cas
        .iter()
        .filter(|c| c.ca_type.as_deref() == Some("MT4129"))
        .map(|c| (c.ports[0].state.clone().unwrap(), c.ports[0].rate.unwrap()))
        .collect();
    assert_eq!(cx7_active.len(), 4);
    let m2 = s.cas.iter().find(|c| c.ca == "mlx5_2").unwrap();
    assert_eq!(
        (m2.ports[0].base_lid, m2.ports[0].sm_lid),
        (Some(1), Some(1))
    );
    assert!(cx7_active.iter().all(|(s, r)| s == "Active" && *r == 100.0));
    assert!(s
        .cas
        .iter()
        .all(|c| c.ports[0].link_layer.as_deref() == Some("InfiniBand")));
}

#[test]
fn ibstat_ibpanic_partial() {
    let s = parse::ibstat::parse(&fx(
        "rdma/ibstat-8ca-azure-a100-hdr-then-ibpanic-exit255.txt",
    ))
    .unwrap();
    assert_eq!(s.cas.len(), 8);
    assert_eq!(
        s.errors,
        ["ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory"]
    );
    assert!(s.cas.iter().all(|c| c.ca_type.as_deref() == Some("MT4124")
        && c.fw_ver.as_deref() == Some("20.41.1000")
        && c.ports[0].rate == Some(200.0)));
}

#[test]
fn ibstatus_azure_hdr() {
    let p =
        parse::ibstatus::parse(&fx("rdma/ibstatus-9dev-azure-a100-hdr-plus-eth-vf.txt")).unwrap();
    assert_eq!(p.len(), 9);
    let m0 = &p[0];
    assert_eq!((m0.device.as_str(), m0.port), ("mlx5_0", 1));
    assert_eq!(
        m0.default_gid.as_deref(),
        Some("fe80:0000:0000:0000:0015:5dff:fd34:11eb")
    );
    assert_eq!((m0.base_lid, m0.sm_lid), (Some(0x33bf), Some(1)));
    assert_eq!(
        (m0.state_code, m0.state.as_deref()),
        (Some(4), Some("ACTIVE"))
    );
    assert_eq!(
        (m0.phys_state_code, m0.phys_state.as_deref()),
        (Some(5), Some("LinkUp"))
    );
    close(m0.rate, 200.0);
    assert_eq!(
        (m0.width.as_deref(), m0.speed.as_deref()),
        (Some("4X"), Some("HDR"))
    );
    assert_eq!(p[7].base_lid, Some(0x33f9));
    let eth = &p[8];
    assert_eq!(eth.device, "mlx5_8");
    assert_eq!(eth.default_gid.as_deref(), Some("unknown"));
    assert_eq!(eth.link_layer.as_deref(), Some("Ethernet"));
    assert_eq!((eth.speed.as_deref(), eth.sm_lid), (Some("QDR"), Some(0)));
    close(eth.rate, 40.0);
}

#[test]
fn perfquery_extended_two_ports() {
    let q = parse::perfquery::parse(&fx(
        "ibdiags/perfquery-x-2port-lid1719-capmask2-qp1dropped-xmitwait.txt",
    ))
    .unwrap();
    assert_eq!(q.ports.len(), 2);
    let p1 = &q.ports[0];
    assert!(p1.extended);
    assert_eq!((p1.lid, p1.port), (1719, Some(1)));
    assert_eq!(p1.cap_mask.as_deref(), Some("0x5300"));
    assert_eq!(p1.cap_mask2.as_deref(), Some("0x0000002"));
    assert_eq!(p1.counters["PortXmitData"], 36298026860928);
    assert_eq!(p1.counters["PortXmitWait"], 22730501);
    assert_eq!(p1.counters["SymbolErrorCounter"], 0);
    assert_eq!(p1.counters["QP1Dropped"], 0);
    assert!(!p1.counters.contains_key("PortSelect"));
    assert!(!p1.counters.contains_key("CounterSelect2"));
    let p2 = &q.ports[1];
    assert_eq!(p2.port, Some(2));
    assert_eq!(p2.counters["PortXmitWait"], 36510964);
    assert_eq!(p2.counters["PortRcvData"], 39078804993378);
    assert_eq!(p2.counters.len(), 22);
}

#[test]
fn perfquery_classic() {
    let q = parse::perfquery::parse(&fx(
        "ibdiags/perfquery-classic-mlx4-fdr-lid7-capmask-0x1400-32bit-data.txt",
    ))
    .unwrap();
    let p = &q.ports[0];
    assert!(!p.extended);
    assert_eq!(p.group, "Port counters");
    assert_eq!(
        (p.lid, p.port, p.cap_mask.as_deref(), p.cap_mask2.as_deref()),
        (7, Some(1), Some("0x1400"), None)
    );
    assert_eq!(p.counters["PortXmitWait"], 2);
    assert_eq!(p.counters["PortRcvPkts"], 130792613);
    assert_eq!(p.counters["PortXmitData"], 6465317);
    assert_eq!(p.counters["ExcessiveBufferOverrunErrors"], 0);
    assert_eq!(p.counters.len(), 17);
}

#[test]
fn iblinkinfo_hdr_sections() {
    let l = parse::iblinkinfo::parse(&fx(
        "ibdiags/iblinkinfo-hdr-quantum-21ca-sharp-aggregation-node-down-polling.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 63);
    let first = &l[0];
    assert_eq!(first.node.as_deref(), Some("cu01 HCA-1"));
    assert_eq!(first.node_type.as_deref(), Some("CA"));
    assert_eq!(first.guid.as_deref(), Some("0xb8cef60300025b8c"));
    assert_eq!((first.lid, first.port), (1, 1));
    assert_eq!(first.width.as_deref(), Some("4X"));
    close(first.lane_gbps, 53.125);
    assert_eq!(first.speed.as_deref(), Some("HDR"));
    close(first.rate, 200.0);
    assert_eq!(
        (first.state.as_str(), first.phys_state.as_str()),
        ("Active", "LinkUp")
    );
    assert_eq!((first.peer_lid, first.peer_port), (Some(3), Some(40)));
    assert_eq!(first.peer.as_deref(), Some("Quantum Mellanox Technologies"));
    assert_eq!(first.note, None);
    let down: Vec<_> = l.iter().filter(|x| x.state == "Down").collect();
    assert_eq!(down.len(), 19);
    let p5 = down[0];
    assert_eq!(p5.node.as_deref(), Some("Quantum Mellanox Technologies"));
    assert_eq!(p5.node_type.as_deref(), Some("Switch"));
    assert_eq!(p5.guid.as_deref(), Some("0x0c42a103008982a4"));
    assert_eq!((p5.lid, p5.port, p5.phys_state.as_str()), (3, 5, "Polling"));
    assert_eq!(
        (
            p5.width.as_deref(),
            p5.rate,
            p5.peer.as_deref(),
            p5.peer_lid
        ),
        (None, None, None, None)
    );
    let last = l.last().unwrap();
    assert_eq!(
        (last.node.as_deref(), last.lid, last.peer_port),
        (Some("cu02 HCA-1"), 17, Some(39))
    );
}

#[test]
fn iblinkinfo_edr_grep() {
    let l = parse::iblinkinfo::parse(&fx(
        "ibdiags/iblinkinfo-edr-grep-up-sb7700-no-section-headers.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 6);
    assert!(l
        .iter()
        .all(|x| x.node.is_none() && x.speed.as_deref() == Some("EDR") && x.rate == Some(100.0)));
    assert_eq!(l[0].guid.as_deref(), Some("0xec0d9a03003d62be"));
    assert_eq!(l[0].peer.as_deref(), Some("MF0;SB7700:MSB7700/U1"));
    let sw = &l[2];
    assert_eq!((sw.guid.as_deref(), sw.lid, sw.port), (None, 2, 17));
    assert_eq!(
        (sw.peer_lid, sw.peer_port, sw.peer.as_deref()),
        (Some(4), Some(1), Some("n02 HCA-1"))
    );
}

#[test]
fn topo_b200_spaces() {
    let t =
        parse::nvidia_smi_topo::parse(&fx("nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt")).unwrap();
    assert_eq!(t.columns.len(), 16);
    assert_eq!((t.gpus.len(), t.nics.len()), (8, 8));
    let g0 = &t.gpus[0];
    assert_eq!(g0.links["GPU1"], "NV18");
    assert_eq!(g0.links["GPU0"], "X");
    assert_eq!(g0.links["NIC2"], "NODE");
    assert_eq!(g0.cpu_affinity.as_deref(), Some("0-55,112-167"));
    assert_eq!(
        (g0.numa_affinity.as_deref(), g0.gpu_numa_id.as_deref()),
        (Some("0"), Some("N/A"))
    );
    assert_eq!(g0.nearest.as_deref(), Some("PIX"));
    assert_eq!(g0.nearest_nics, ["mlx5_0", "mlx5_1"]);
    assert_eq!(t.gpus[6].nearest_nics, ["mlx5_6", "mlx5_7"]);
    assert_eq!(t.gpus[4].cpu_affinity.as_deref(), Some("56-111,168-223"));
    assert_eq!(t.nics[3].device.as_deref(), Some("mlx5_3"));
    assert_eq!(t.nics[3].links["GPU2"], "PIX");
}

#[test]
fn topo_tabs_12_nics() {
    let t = parse::nvidia_smi_topo::parse(&fx(
        "nvidia-smi/topo-m-tabs-8gpu-12nic-single-numa-bond-nics.txt",
    ))
    .unwrap();
    assert_eq!((t.gpus.len(), t.nics.len()), (8, 12));
    assert_eq!(t.gpus[3].nearest_nics, ["mlx5_5"]);
    assert_eq!(t.gpus[7].nearest_nics, ["mlx5_11"]);
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("0-191"));
    assert_eq!(t.gpus[0].gpu_numa_id.as_deref(), Some("N/A"));
    assert_eq!(t.nics[10].device.as_deref(), Some("mlx5_10"));
    let mp = parse::nvidia_smi_topo::parse(&fx(
        "nvidia-smi/topo-mp-8xH100-12nic-2numa-gpu-numa-id-NA-tabs.txt",
    ))
    .unwrap();
    assert_eq!(mp.gpus[0].nearest_nics, ["mlx5_0", "mlx5_1", "mlx5_2"]);
    assert_eq!(mp.gpus[1].nearest_nics, ["mlx5_3"]);
    assert_eq!(mp.gpus[4].nearest_nics, ["mlx5_6", "mlx5_7", "mlx5_8"]);
    assert_eq!(mp.gpus[4].numa_affinity.as_deref(), Some("1"));
    assert_eq!(mp.gpus[4].cpu_affinity.as_deref(), Some("1,3,5,7,9,11"));
    assert_eq!(mp.gpus[0].links["GPU4"], "SYS");
}

#[test]
fn topo_single_gpu_ansi() {
    let t =
        parse::nvidia_smi_topo::parse(&fx("nvidia-smi/topo-m-1xH200-ansi-underline-header.txt"))
            .unwrap();
    assert_eq!(t.columns, ["GPU0"]);
    assert_eq!(t.gpus.len(), 1);
    assert!(t.nics.is_empty());
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("0-15"));
    assert_eq!(t.gpus[0].gpu_numa_id.as_deref(), Some("N/A"));
    assert_eq!(t.gpus[0].nearest, None);
}

#[test]
fn ip_route_container_multiline() {
    let r = parse::ip_route::parse(&fx(
        "iproute2/ip-json-4-route-show-ubuntu-container-multiline.json",
    ))
    .unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].dst, "default");
    assert_eq!(r[0].gateway.as_deref(), Some("172.17.0.1"));
    assert_eq!(r[0].protocol, None);
    assert_eq!(r[1].dst, "172.17.0.0/16");
    assert_eq!(r[1].protocol.as_deref(), Some("kernel"));
    assert_eq!(r[1].prefsrc.as_deref(), Some("172.17.0.2"));
}

#[test]
fn ip_route_host_default() {
    let r = parse::ip_route::parse(&fx("lab/ip-j-route-host-default-kernel.json")).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].dev.as_deref(), Some("eth0"));
    assert_eq!(r[0].gateway.as_deref(), Some("192.0.2.1"));
    assert_eq!(r[1].scope.as_deref(), Some("link"));
}

#[test]
fn ip_route_static_dhcp_blackhole_linkdown() {
    let r = parse::ip_route::parse(&fx(
        "lab/ip-j-route-netns-static-dhcp-blackhole-linkdown.json",
    ))
    .unwrap();
    assert_eq!(r.len(), 6);
    assert_eq!(r[0].protocol.as_deref(), Some("dhcp"));
    assert_eq!(r[0].metric, Some(100));
    assert_eq!(r[1].protocol.as_deref(), Some("static"));
    assert_eq!(r[1].gateway.as_deref(), Some("10.99.0.254"));
    assert_eq!(r[1].metric, Some(20));
    assert_eq!(r[2].route_type.as_deref(), Some("blackhole"));
    assert_eq!(r[2].dev, None);
    assert_eq!(r[3].flags, vec!["linkdown".to_string()]);
    assert_eq!(r[4].prefsrc.as_deref(), Some("10.98.0.1"));
}

#[test]
fn ip_route_v6_ra_expires() {
    let r = parse::ip_route::parse(&fx("lab/ip-j-6-route-netns-ra-expires-kernel.json")).unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].protocol.as_deref(), Some("ra"));
    assert_eq!(r[0].expires, Some(591));
    assert_eq!(r[0].gateway.as_deref(), Some("fd99::1"));
    assert_eq!(r[2].dst, "fe80::/64");
    assert_eq!(r[2].metric, Some(256));
}

#[test]
fn ip_route_v6_empty() {
    let r = parse::ip_route::parse(&fx("lab/ip-j-6-route-empty-netns.json")).unwrap();
    assert!(r.is_empty());
}

/// ibdiagnet's closing summary, read by hand from the real capture: the Fabric Summary block
/// (15 nodes: 3 switches, 9 CAs, 3 aggregation nodes, 0 routers) and the stage table (Discovery
/// 3 warnings 0 errors, Virtualization 0 0, Routing 0 0); the "Adaptive Routing is enabled on
/// 3 switches" line between them (issue 51 item 3: AR on every switch); no HBF line: unknown.
#[test]
fn ibdiagnet_summary() {
    let s = parse::ibdiagnet::parse(&fx("ibdiags/ibdiagnet-routing-ar-dump-fabric-summary-15-nodes-stage-table-discovery-3-warnings.txt")).unwrap();
    assert_eq!(s.adaptive_routing_switches, Some(3));
    assert_eq!(s.hbf_switches, None);
    assert_eq!(s.total_nodes, Some(15));
    assert_eq!(s.switches, Some(3));
    assert_eq!(s.channel_adapters, Some(9));
    assert_eq!(s.aggregation_nodes, Some(3));
    assert_eq!(s.routers, Some(0));
    let rows: Vec<(&str, u64, u64)> = s
        .stages
        .iter()
        .map(|x| (x.name.as_str(), x.warnings, x.errors))
        .collect();
    assert_eq!(
        rows,
        [
            ("Discovery", 3, 0),
            ("Virtualization", 0, 0),
            ("Routing", 0, 0)
        ]
    );
    assert_eq!((s.warnings, s.errors), (3, 0));
    assert!(parse::ibdiagnet::parse("-I- Discovery 0 0\n").is_err());
}

#[test]
fn sminfo_masters() {
    let a = parse::sminfo::parse(&fx("ibdiags/sminfo-master-lid37-hca-prio14.txt")).unwrap();
    assert_eq!(
        (a.sm_lid, a.priority, a.state, a.activity_count),
        (37, 14, 3, 4484381)
    );
    assert_eq!(
        (a.guid.as_str(), a.state_name.as_str()),
        ("0x7cfe90030016aef1", "SMINFO_MASTER")
    );
    // GUIDs printed without leading zeros are padded to 16 digits for comparison
    let b = parse::sminfo::parse(&fx(
        "ibdiags/sminfo-master-lid15-sun-dcs-switch-short-guid.txt",
    ))
    .unwrap();
    assert_eq!(
        (b.sm_lid, b.sm_guid.as_str(), b.guid.as_str()),
        (15, "0x10e0406d5aa0a0", "0x0010e0406d5aa0a0")
    );
    let c =
        parse::sminfo::parse(&fx("ibdiags/sminfo-master-lid4-qdr-opensmd-short-guid.txt")).unwrap();
    assert_eq!(
        (c.sm_lid, c.guid.as_str(), c.activity_count),
        (4, "0x0002c903000d81f9", 1329328)
    );
}

#[test]
fn lspci_bridge_acs_on() {
    let d = parse::lspci::parse(&fx(
        "lspci/lspci-vvv-s-amd-matisse-gpp-bridge-acsctl-reqredir-cmpltredir-on.txt",
    ))
    .unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].address.as_str(), d[0].class.as_str()),
        ("03:02.0", "PCI bridge")
    );
    assert!(d[0].acs_redirect);
    assert_eq!(
        d[0].acs_ctl.as_deref(),
        Some("SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-")
    );
    // the CX7 function with every ACS control off: read, not redirecting
    let c = parse::lspci::parse(&fx(
        "lspci/lspci-vv-cx7-pf-gen4-x8-downgraded-and-vf-speed-unknown-x0.txt",
    ))
    .unwrap();
    assert!(c[0].acs_ctl.is_some() && !c[0].acs_redirect);
}

#[test]
fn nvidia_version_open_and_proprietary() {
    let o = parse::nvidia_version::parse(&fx(
        "nvidia-smi/proc-driver-nvidia-version-open-kernel-module-580.txt",
    ))
    .unwrap();
    assert!(o.open);
    assert_eq!(o.version, "580.95.05");
    assert_eq!(
        o.gcc.as_deref(),
        Some("gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04.2)")
    );
    let p = parse::nvidia_version::parse(&fx(
        "nvidia-smi/proc-driver-nvidia-version-proprietary-515.txt",
    ))
    .unwrap();
    assert!(!p.open);
    assert_eq!(
        (p.version.as_str(), p.arch.as_deref()),
        ("515.76", Some("x86_64"))
    );
}

#[test]
fn ib_pkeys_azure() {
    let k = parse::ib_pkeys::parse(&fx(
        "rdma/sysfs-pkeys-azure-hpc-tenant-0x800b-default-limited-0x7fff.txt",
    ))
    .unwrap();
    let rows: Vec<(&str, u32, u32, &str, &str, bool)> = k
        .iter()
        .map(|p| {
            (
                p.device.as_str(),
                p.port,
                p.index,
                p.pkey.as_str(),
                p.partition.as_str(),
                p.full,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("mlx5_0", 1, 0, "0x800b", "0x000b", true),
            ("mlx5_0", 1, 1, "0x7fff", "0x7fff", false)
        ]
    );
}

#[test]
fn mlxlink_dac_counters_and_module() {
    let m = parse::mlxlink::parse(&fx(
        "ibdiags/mlxlink-m-c-bluefield3-100g-dac-fs-q28-pc03-ber-15e-255.txt",
    ))
    .unwrap();
    assert_eq!(
        (m.state.as_deref(), m.phys_state.as_deref()),
        (Some("Active"), Some("LinkUp"))
    );
    assert_eq!(
        (m.speed.as_deref(), m.width.as_deref()),
        (Some("100G"), Some("4x"))
    );
    assert_eq!(m.fec.as_deref(), Some("Standard RS-FEC - RS(528,514)"));
    assert_eq!(m.recommendation.as_deref(), Some("No issue was observed"));
    assert_eq!(
        (
            m.vendor.as_deref(),
            m.part_number.as_deref(),
            m.serial.as_deref()
        ),
        (Some("FS"), Some("Q28-PC03"), Some("S2202655321-1"))
    );
    // N/A is no value
    assert_eq!((m.temperature_c, m.rx_power_dbm.as_ref()), (None, None));
    // 15E-255: no error at all, as mlxlink prints it
    assert!(m.raw_ber.unwrap() < 1e-250 && m.effective_ber.unwrap() < 1e-250);
    assert_eq!(
        (m.effective_errors, m.link_down, m.link_error_recovery),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(m.raw_errors_per_lane, [0, 0, 0, 0]);
    // Ethernet: no symbol counters
    assert_eq!((m.symbol_errors, m.symbol_ber), (None, None));
    assert_eq!(
        m.sections["Tool Information"]["MFT Version"],
        "mft 4.30.1-8"
    );
    assert!(parse::mlxlink::parse("State : Active\n").is_err());
    assert_eq!(m.firmware.as_deref(), Some("32.43.2402"));
    assert_eq!(
        m.cable_technology.as_deref(),
        Some("Copper cable, passive, unequalized")
    );
    assert_eq!((m.tx_power_dbm, m.module_firmware), (None, None));
    assert!(m.eye.is_none() && m.errors.is_empty());
}

/// MFT 4.35 on a ConnectX-7 NDR port with a passive copper OSFP cable that has diagnostics:
/// every module reading `0,0,0,0 [0..0]` (no light, no thresholds), trailing blanks after
/// the values of the first sections.
#[test]
fn mlxlink_ndr_dac_module_zero_thresholds() {
    let m = parse::mlxlink::parse(&fx(
        "ibdiags/mlxlink-show-module-cx7-ndr-osfp-passive-dac-fs-osfpfl-400g-pc01-zero-thresholds.txt",
    ))
    .unwrap();
    assert_eq!(
        (m.state.as_deref(), m.speed.as_deref(), m.width.as_deref()),
        (Some("Active"), Some("IB-NDR"), Some("4x"))
    );
    assert_eq!(m.firmware.as_deref(), Some("28.46.3048"));
    assert_eq!(
        (
            m.identifier.as_deref(),
            m.vendor.as_deref(),
            m.part_number.as_deref(),
            m.serial.as_deref()
        ),
        (
            Some("OSFP"),
            Some("FS"),
            Some("OSFPFL-400G-PC01"),
            Some("C2604279049-2")
        )
    );
    assert_eq!(
        m.cable_technology.as_deref(),
        Some("Copper cable, passive, unequalized")
    );
    let rx = m.rx_power_dbm.unwrap();
    assert_eq!(rx.lanes, [0.0, 0.0, 0.0, 0.0]);
    assert_eq!((rx.low, rx.high), (Some(0.0), Some(0.0)));
    assert_eq!(m.temperature_c, Some(0.0));
    assert_eq!(m.module_firmware, None);
    assert_eq!(m.sections["Module Info"]["Rx LOS [per lane]"], "1,0,1,1");
    // no counters asked for (--show_module only)
    assert_eq!((m.raw_ber, m.symbol_errors), (None, None));
}

/// `mlxlink -m | grep dBm` on an optical module: four lanes and the module's own alarm
/// thresholds, read by the same function the parser uses for `Module Info`.
#[test]
fn mlxlink_optical_power_lanes_and_thresholds() {
    let text = fx("ibdiags/mlxlink-m-grep-dbm-rx-tx-power-4-lanes-alarm-thresholds.txt");
    let v: Vec<&str> = text
        .lines()
        .map(|l| l.split_once(" : ").unwrap().1)
        .collect();
    let rx = parse::mlxlink::reading(v[0]).unwrap();
    assert_eq!(rx.lanes, [1.103, 1.290, 0.931, 1.103]);
    assert_eq!((rx.low, rx.high), (Some(-9.508), Some(6.999)));
    let tx = parse::mlxlink::reading(v[1]).unwrap();
    assert_eq!(tx.lanes, [1.380, 1.638, 1.449, 1.123]);
    assert_eq!((tx.low, tx.high), (Some(-8.508), Some(6.999)));
    // the other forms mlxlink prints
    let t = parse::mlxlink::reading("54 [-5..75]").unwrap();
    assert_eq!(
        (t.lanes, t.low, t.high),
        (vec![54.0], Some(-5.0), Some(75.0))
    );
    assert_eq!(parse::mlxlink::reading("47").unwrap().lanes, [47.0]);
    assert_eq!(parse::mlxlink::reading("N/A"), None);
    assert_eq!(parse::mlxlink::reading("1.0,N/A [0..1]"), None);
    // a whole mlxlink output is refused without one of its sections
    assert!(parse::mlxlink::parse(&text).is_err());
}

/// `mlxlink --port_type PCIE -e` on a ConnectX-6: the eye per lane (16 lanes, padded, the
/// `Phase  Eye` key with two blanks), and below Gen 3 no eye but mlxlink's `Errors` text.
#[test]
fn mlxlink_eye_opening_and_errors() {
    let m = parse::mlxlink::parse(&fx(
        "ibdiags/mlxlink-port-type-pcie-e-cx6-gen3-x16-eye-opening-16-lanes.txt",
    ))
    .unwrap();
    let e = m.eye.unwrap();
    assert_eq!(e.title, "EYE Opening Info (PCIe)");
    assert_eq!(e.physical_grade.len(), 16);
    assert_eq!(
        (
            e.physical_grade[0],
            e.physical_grade[11],
            e.physical_grade[15]
        ),
        (1848, 2340, 2072)
    );
    assert_eq!((e.height_mv[0], e.height_mv[11]), (147, 187));
    assert_eq!(e.phase_ps, [16; 16]);
    assert!(m.errors.is_empty());
    let m = parse::mlxlink::parse(&fx(
        "ibdiags/mlxlink-port-type-pcie-e-cx6-gen1-x4-errors-no-eye-below-gen3.txt",
    ))
    .unwrap();
    assert!(m.eye.is_none());
    assert_eq!(
        m.errors,
        ["Showing Eye via SLRG raised the following exception: Eye information available for Gen3 and above"]
    );
    assert_eq!(
        m.sections["PCIe Operational (Enabled) Info"]["Link Speed Active (Enabled)"],
        "2.5G-Gen 1 (16G-Gen 4)"
    );
}

/// `lldpctl -f json` (lldpd 1.0.16, real captures): "interface" as a list (two interfaces) and
/// as an object (one), port ids of type ifname (as switches send) and mac (a host's default,
/// read through its description), no neighbour; lldpctl's complaint when no lldpd listens is
/// not JSON and is refused asking for `lldpctl -f json`.
#[test]
fn lldpctl_shapes() {
    let n = parse::lldpctl::parse(&fx(
        "lldp/lldpctl-f-json-1.0.16-two-interfaces-list-portid-ifname.json",
    ))
    .unwrap();
    assert_eq!(n.len(), 2, "{n:?}");
    assert_eq!(
        (n[0].interface.as_str(), n[0].system.as_str()),
        ("enp1s0f1np1", "leaf-rail0")
    );
    assert_eq!(
        (n[0].port_id_type.as_str(), n[0].port.as_str()),
        ("ifname", "swp1")
    );
    assert_eq!(
        (n[1].interface.as_str(), n[1].system.as_str()),
        ("enP2p1s0f1np1", "leaf-rail1")
    );
    assert_eq!(n[1].chassis_id, "4e:07:69:e1:e6:ec");
    let n = parse::lldpctl::parse(&fx(
        "lldp/lldpctl-f-json-1.0.16-one-interface-neighbour-portid-mac.json",
    ))
    .unwrap();
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(
        (n[0].port_id_type.as_str(), n[0].port_id.as_str()),
        ("mac", "fe:3d:80:30:38:ab")
    );
    assert_eq!(n[0].port, "swp1");
    assert!(
        parse::lldpctl::parse(&fx("lldp/lldpctl-f-json-1.0.16-no-neighbour.json"))
            .unwrap()
            .is_empty()
    );
    let e = parse::lldpctl::parse(&fx("lldp/lldpctl-1.0.16-no-daemon-stderr.txt")).unwrap_err();
    assert!(e.to_string().contains("lldpctl -f json"), "{e}");
}

/// ibtracert (issue 51 item 4): the hops of two real traces, each switch with the ports it is
/// entered and left by, and the one-line path a red carries.
#[test]
fn ibtracert_paths() {
    let a = parse::ibtracert::parse(&fx(
        "ibdiags/ibtracert-llnl-hype-qib-3-switch-hops-through-core-s205a.txt",
    ))
    .unwrap();
    assert_eq!(
        (a.from.lid, a.from.description.as_str()),
        (129, "hype281 qib0")
    );
    assert_eq!(a.hops.len(), 4);
    assert_eq!(a.switches, 3);
    assert!(a.complete);
    let core = &a.hops[1];
    assert_eq!((core.out_port, core.in_port, core.lid), (27, 11, 8));
    assert_eq!(core.description, "ibcore1 S205A");
    assert_eq!(a.to.as_ref().unwrap().lid, 332);
    assert_eq!(
        a.path,
        "\"hype281 qib0\" LID 129 port 1 -> switch \"ibcore1 L109\" LID 17 in 9 out 27 -> switch \"ibcore1 S205A\" LID 8 in 11 out 3 -> switch \"ibcore1 L101\" LID 7 in 36 out 9 -> ca \"hype353 qib0\" LID 332 in 1"
    );
    let b = parse::ibtracert::parse(&fx(
        "ibdiags/ibtracert-ibsim-rail-leaf-spine-leaf-cross-su-5-to-12.txt",
    ))
    .unwrap();
    // the leaf's uplink (port 33) to the spine, and the To line's node GUID (not the port's)
    assert_eq!(b.hops[1].out_port, 33);
    assert_eq!(b.hops[1].description, "hxa-spine01");
    assert_eq!(b.to.as_ref().unwrap().guid, "0x000000000010000a");
    assert_eq!(b.hops[3].guid, "0x000000000010000b");
}

/// The IOMMU mode (issue 51 item 5): a real kernel command line with intel_iommu=on iommu=pt
/// (passthrough), and a real machine without an IOMMU (no group on any device: `none`).
#[test]
fn iommu_modes() {
    let c = parse::iommu::parse(&fx(
        "iommu/proc-cmdline-fdio-csit-denverton-intel_iommu-on-iommu-pt.txt",
    ))
    .unwrap();
    assert_eq!(c.params, ["intel_iommu=on", "iommu=pt"]);
    assert!(c
        .cmdline
        .unwrap()
        .starts_with("BOOT_IMAGE=/boot/vmlinuz-4.15.0-36-generic"));
    assert!(c.devices.is_empty());
    let v = parse::iommu::parse(&fx(
        "iommu/iommu-group-type-firecracker-vm-no-iommu-none.txt",
    ))
    .unwrap();
    assert_eq!(v.cmdline, None);
    assert_eq!(v.devices.len(), 3);
    assert!(v
        .devices
        .iter()
        .all(|d| d.group_type == "none" && !d.translated));
    assert_eq!(v.devices[1].path, "/sys/bus/pci/devices/0000:00:01.0");
}

/// ibqueryerrors (issue 51 item 2): a real SX6036 fabric's sections (CAs by description,
/// the switch by GUID and description, `port ALL`, port 0, saturated counters) and an ibsim
/// leaf uplink with symbol errors.
#[test]
fn ibqueryerrors_sections() {
    let a = parse::ibqueryerrors::parse(&fx(
        "ibdiags/ibqueryerrors-sx6036-switch-8-ports-hcas-xmitwait-mailing-list.txt",
    ))
    .unwrap();
    // 14 ports beyond threshold, and the switch's `port ALL` line
    assert_eq!(a.ports.len(), 15);
    assert_eq!(
        (a.nodes_checked, a.bad_nodes, a.ports_checked, a.bad_ports),
        (Some(4), Some(4), Some(43), Some(14))
    );
    let p5 = a.ports.iter().find(|p| p.port == Some(5)).unwrap();
    assert_eq!(p5.node, "MF0;ys23ib4:SX6036/U1");
    assert_eq!(p5.node_guid.as_deref(), Some("0x2c903006e29b0"));
    assert_eq!(p5.counters["SymbolErrorCounter"], 65535);
    assert_eq!(p5.counters["PortXmitDiscards"], 649);
    let all = a.ports.iter().find(|p| p.port.is_none()).unwrap();
    assert_eq!(all.counters["LinkDownedCounter"], 48);
    let ca = &a.ports[0];
    assert_eq!(
        (ca.node.as_str(), ca.node_guid.as_deref(), ca.port),
        ("dl380g7 mlx4_0", None, Some(1))
    );
    assert_eq!(ca.counters["PortXmitWait"], 4294967295);
    let b = parse::ibqueryerrors::parse(&fx(
        "ibdiags/ibqueryerrors-ibsim-leaf-uplink-symbol-errors-link-downed.txt",
    ))
    .unwrap();
    assert_eq!(b.ports[1].port, Some(33));
    assert_eq!(b.ports[1].counters["SymbolErrorCounter"], 250);
    assert_eq!(b.ports[1].node, "hxa-su1-leaf-r1");
}

/// ibnetdiscover (issue 51 item 4): a real EDR fat tree's two switch sections: 36 + 12 links,
/// HCA peers with their port GUIDs, switch-to-switch uplinks, one uplink at 4xDDR.
#[test]
fn ibnetdiscover_links() {
    let l = parse::ibnetdiscover::parse(&fx(
        "ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt",
    ))
    .unwrap();
    assert_eq!(l.len(), 48);
    let first = &l[0];
    assert_eq!(
        (first.node_type.as_str(), first.node_guid.as_str()),
        ("Switch", "ec0d9a0300ec8240")
    );
    assert_eq!(
        (
            first.peer_type.as_str(),
            first.peer_desc.as_str(),
            first.peer_lid
        ),
        ("H", "node018 HCA-1", Some(67))
    );
    let up: Vec<_> = l.iter().filter(|x| x.peer_type == "S").collect();
    assert_eq!(up.len(), 24);
    let slow: Vec<_> = l
        .iter()
        .filter(|x| x.speed.as_deref() != Some("EDR"))
        .collect();
    assert_eq!(slow.len(), 1);
    assert_eq!(
        (
            slow[0].node_guid.as_str(),
            slow[0].port,
            slow[0].peer_guid.as_str(),
            slow[0].peer_port
        ),
        ("ec0d9a0300ec8480", 11, "ec0d9a0300ec8200", 11)
    );
    assert_eq!(slow[0].speed.as_deref(), Some("DDR"));
}

/// The kernel's AER statistics (issue 51 item 5): a real machine's three files as node_exporter
/// keeps them (current kernels' short names, all zero), and the kernel ABI document's sample
/// (the long names of older kernels, `Receiver Error 2`): the count is the last word.
#[test]
fn aer_statistics_short_and_long_names() {
    let one = |p: &str| {
        let a = parse::aer::parse(&fx(p)).unwrap();
        assert_eq!(a.files.len(), 1, "{p}");
        a.files.into_iter().next().unwrap()
    };
    let c = one("aer/aer_dev_correctable-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt");
    assert_eq!((c.severity.as_str(), c.total), ("correctable", 0));
    assert_eq!(c.counters.len(), 8);
    assert_eq!(c.counters["BadTLP"], 0);
    assert_eq!((c.path, c.device), (None, None));
    let n = one("aer/aer_dev_nonfatal-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt");
    assert_eq!((n.severity.as_str(), n.counters.len()), ("nonfatal", 18));
    assert_eq!(n.counters["CmpltTO"], 0);
    let f = one("aer/aer_dev_fatal-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt");
    assert_eq!((f.severity.as_str(), f.counters.len()), ("fatal", 18));
    let l = one("aer/aer_dev_correctable-kernel-abi-doc-sample-long-names-receiver-error-2.txt");
    assert_eq!((l.severity.as_str(), l.total), ("correctable", 2));
    assert_eq!(l.counters["Receiver Error"], 2);
    assert_eq!(l.counters["RELAY_NUM Rollover"], 0);
    let lf = one("aer/aer_dev_fatal-kernel-abi-doc-sample-long-names.txt");
    assert_eq!((lf.severity.as_str(), lf.counters.len()), ("fatal", 17));
    assert_eq!(lf.counters["Surprise Down Error"], 0);
    // the three real files in one `head -v` (the check reads them so): each with its device
    let mut t = String::new();
    for s in ["correctable", "nonfatal", "fatal"] {
        t += &format!(
            "==> /sys/devices/pci0000:00/0000:00:02.1/0000:01:00.0/aer_dev_{s} <==\n{}\n",
            fx(&format!(
                "aer/aer_dev_{s}-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt"
            ))
        );
    }
    let all = parse::aer::parse(&t).unwrap();
    assert_eq!(all.files.len(), 3);
    assert!(all
        .files
        .iter()
        .all(|f| f.device.as_deref() == Some("0000:01:00.0")
            && f.parent.as_deref() == Some("0000:00:02.1")));
    assert_eq!(all.files[2].severity, "fatal");
}

/// nvidia-smi -q (issue 51 item 5): the GPU's own PCIe replay counter, on a real H100's whole
/// output (one GPU, driver 580) and the PCI sections of a real 8x V100 node (driver 550).
#[test]
fn nvidia_smi_q_replay_counters() {
    let h = parse::nvidia_smi_q::parse(&fx(
        "nvidia-smi/q-1xH100-pcie-gen5-x16-replays-0-firecracker-580.txt",
    ))
    .unwrap();
    assert_eq!(h.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(h.gpus.len(), 1);
    let g = &h.gpus[0];
    assert_eq!(
        (g.bus_id.as_str(), g.bdf.as_str()),
        ("00000000:00:06.0", "0000:00:06.0")
    );
    assert_eq!(g.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!((g.replays, g.replay_rollovers), (Some(0), Some(0)));
    assert_eq!((g.link_gen_current, g.link_gen_max), (Some(5), Some(5)));
    assert_eq!(
        (g.link_width_current, g.link_width_max),
        (Some(16), Some(16))
    );
    let v =
        parse::nvidia_smi_q::parse(&fx("nvidia-smi/q-8xV100-sxm2-550-pci-sections-excerpt.txt"))
            .unwrap();
    assert_eq!(v.gpus.len(), 8);
    assert_eq!(v.gpus[6].bdf, "0000:00:0a.0");
    assert!(v.gpus.iter().all(|g| g.replays == Some(0)
        && g.name.as_deref() == Some("Tesla V100-SXM2-16GB")
        && g.link_gen_max == Some(3)));
}

/// A real VM without AER statistics (issue 51 item 5): `head -v` of the GPU's and its parent's
/// aer_dev_* prints nothing on stdout and one `cannot open` line per file on stderr (exit 1);
/// empty stdout is not AER statistics to the parser (n.aer_stats answers "none read" for it,
/// and the check warns, the simulation's `ib-healthy-gpu-vm-without-aer` answering the same).
#[test]
fn aer_files_absent_in_a_vm() {
    let err = fx("aer/head-v-aer-dev-stderr-firecracker-vm-h100-no-aer-files.txt");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 6);
    assert!(lines.iter().all(
        |l| l.starts_with("head: cannot open '/sys/devices/pci0000:00/")
            && l.contains("/aer_dev_")
            && l.ends_with("' for reading: No such file or directory")
    ));
    assert!(parse::aer::parse("").is_err());
    assert!(parse::aer::parse(&err).is_err());
}
