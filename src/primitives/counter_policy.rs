//! Which NIC counters may grow during a load test: ONE policy, used by every script (the
//! health counters of `fabric_health`, the five-step's step 3 and the baseline, through
//! `primitives::health`, `primitives::counter_growth` and the `counter_class(name)` script
//! function). Plain data and functions.
//!
//! The `ethtool -S` names and their types come from the mlx5 driver's own documentation:
//! Linux `Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst`
//! ("Ethtool counters", torvalds/linux commit 16f448d47a86825a421fc1211336454c42c5254f, the
//! text of kernel 6.x), which types each counter **Error** ("increment of these counters might
//! indicate a problem"), **Informative** or **Acceleration**. Every counter that document types
//! Error must not grow during the load tests, with these judgements of ours (each says why):
//! - `rx_corrected_bits_phy` (Error in the doc) grows on every healthy 200G PAM4 link: FEC is
//!   doing its job. It is judged as a pre-FEC bit error rate instead ([`Judgement::Rate`]).
//! - `rx_err_lane_[l]_phy` (Error in the doc) are the same raw pre-FEC errors per lane: recorded
//!   ([`Judgement::Info`]); their sum is judged by the rate above.
//! - Error counters of the host's own software rings (`rx_out_of_buffer`, `rx_buff_alloc_err`,
//!   `tx_queue_dropped`, ...) say the HOST did not keep up (memory, CPU, ring sizes), not the
//!   fabric: growth is a warning naming them ([`Judgement::Warn`]), so that a TCP load on a busy
//!   host is not blamed on a cable.
//! - Per-priority discards (`rx_prio[p]_discards`, `_buf_discard`, `_cong_discard`) are typed
//!   Informative in the doc; on the lossless RoCE priority (node var `roce_prio`) a discard is a
//!   lost RoCE packet that PFC should have prevented: must not grow there
//!   ([`Judgement::LosslessDiscard`]), information on the other priorities.
//!
//! The RDMA `hw_counters` (`rdma statistic show link`) are not in that document; their list
//! ([`RDMA_MUST_NOT_GROW`], [`RDMA_INFO`]) is this project's: on a lossless RoCE fabric each
//! transport error means a lost or rejected packet.

/// The type the mlx5 documentation gives a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocType {
    Error,
    /// Informative (the document's Acceleration counters are ring/vPort traffic counts: left
    /// out of the snapshot, as the Informative byte and packet counts are).
    Informative,
    /// Not an `ethtool -S` counter of that document (RDMA hw_counters, FEC statistics).
    NotInDoc,
}

/// How a counter is judged between two reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Any growth is a failure; a non-zero value before is a warning.
    MustNotGrow,
    /// FEC corrected bits: judged as a pre-FEC bit error rate.
    Rate,
    /// Growth is a warning naming the counter (the host's software rings).
    Warn,
    /// A per-priority discard: must not grow on the lossless priority, information elsewhere.
    LosslessDiscard(u32),
    /// Recorded, never failed.
    Info,
    /// Not part of the health snapshot.
    Ignored,
}

/// The physical-port, module and device counters the document types **Error** (port names, as
/// `ethtool -S` prints them on the physical function).
pub(crate) const DOC_ERROR_PORT: &[&str] = &[
    "rx_crc_errors_phy",
    "rx_in_range_len_errors_phy",
    "rx_out_of_range_len_phy",
    "rx_oversize_pkts_phy",
    "rx_symbol_err_phy",
    "rx_unsupported_op_phy",
    "rx_discards_phy",
    "tx_discards_phy",
    "tx_errors_phy",
    "rx_undersize_pkts_phy",
    "rx_fragments_phy",
    "rx_jabbers_phy",
    "link_down_events_phy",
    "module_bus_stuck",
    "module_high_temp",
    "module_bad_shorted",
    "tx_pause_storm_error_events",
    "rx_pcs_symbol_err_phy",
    "rx_steer_missed_packets",
    "dev_internal_queue_oob",
    "rx_pci_signal_integrity",
    "tx_pci_signal_integrity",
    "dev_out_of_buffer",
];

/// Error-typed counters of the document that count the host's software rings (port totals of
/// the `rx[i]_...`/`tx[i]_...` ring counters): growth warns.
pub(crate) const DOC_ERROR_HOST: &[&str] = &[
    "rx_out_of_buffer",
    "rx_buff_alloc_err",
    "rx_oversize_pkts_buffer",
    "rx_oversize_pkts_sw_drop",
    "tx_queue_dropped",
    "tx_recover",
    "tx_cqe_err",
    "rx_wqe_err",
    "rx_recover",
    "rx_arfs_err",
    "rx_xsk_buff_alloc_err",
    "rx_xdp_tx_full",
    "rx_xdp_tx_err",
    "tx_xdp_err",
    "tx_xsk_full",
    "tx_xsk_err",
    "rx_tls_resync_req_skip",
    "rx_tls_resync_res_retry",
    "rx_tls_resync_res_skip",
    "rx_tls_err",
];

/// Informative counters of the document that the health snapshot records (congestion, pause,
/// module events).
pub(crate) const DOC_INFO_KEPT: &[&str] = &[
    "rx_pause_ctrl_phy",
    "tx_pause_ctrl_phy",
    "tx_pause_storm_warning_events",
    "module_unplug",
    "rx_buffer_passed_thres_phy",
    "outbound_pci_buffer_overflow",
];

/// RDMA `hw_counters` that must not grow (this project's list: a lost or rejected packet).
pub(crate) const RDMA_MUST_NOT_GROW: &[&str] = &[
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
    "rnr_nak_retry_err",
    "implied_nak_seq_err",
    "duplicate_request",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rx_icrc_encapsulated",
    "roce_adp_retrans",
    "req_transport_retries_exceeded",
];

/// RDMA `hw_counters` recorded, never failed: congestion control at work, and CQE/QP flush
/// errors (a QP torn down with work queued counts in both: a real capture shows
/// `resp_cqe_error` 1009 next to `resp_cqe_flush_error` 998), `out_of_buffer` (an application
/// that had no receive posted, not the fabric).
pub(crate) const RDMA_INFO: &[&str] = &[
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "roce_adp_retrans_to",
    "req_cqe_flush_error",
    "resp_cqe_flush_error",
    "req_cqe_error",
    "resp_cqe_error",
    "out_of_buffer",
];

/// Other counters fabcheck keeps outside the document: `tx_dropped_link_down` (older mlx5),
/// and the `ethtool -I --show-fec` statistics under the `fec_` prefix.
const OTHER_MUST_NOT_GROW: &[&str] = &["tx_dropped_link_down", "fec_uncorrectable_blocks"];
const OTHER_INFO: &[&str] = &["fec_corrected_blocks"];

/// InfiniBand port counters (`perfquery`, the IBA PortCounters attribute) that a healthy link
/// does not move: physical errors, error recovery, link down, receive errors and discards.
const IB_MUST_NOT_GROW: &[&str] = &[
    "symbolerrorcounter",
    "linkerrorrecoverycounter",
    "linkdownedcounter",
    "portrcverrors",
    "portrcvremotephysicalerrors",
    "portxmitdiscards",
    "locallinkintegrityerrors",
    "excessivebufferoverrunerrors",
];
/// IB counters recorded, never failed: PortXmitWait is congestion (time the port had data and
/// no credits), the data and packet counters are the load itself.
const IB_INFO: &[&str] = &[
    "portxmitwait",
    "portxmitdata",
    "portrcvdata",
    "portxmitpkts",
    "portrcvpkts",
];

/// `rx_prio3_buf_discard` -> Some(3) for the per-priority discard counters.
fn prio_discard(k: &str) -> Option<u32> {
    let rest = k.strip_prefix("rx_prio")?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let tail = &rest[digits.len()..];
    if ["_discards", "_buf_discard", "_cong_discard"].contains(&tail) {
        digits.parse().ok()
    } else {
        None
    }
}

/// A ring counter (`rx3_packets`, `ch0_arm`, `ptp_cq1_abort`): counted again in its port total.
fn per_queue(k: &str) -> bool {
    let k = k.strip_prefix("ptp_").unwrap_or(k);
    ["rx", "tx", "ch", "cq"].iter().any(|p| {
        k.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// The type the mlx5 document gives `name` (port-level names; ring counters are typed by their
/// port total).
pub(crate) fn doc_type(name: &str) -> DocType {
    let k = name.to_ascii_lowercase();
    if DOC_ERROR_PORT.contains(&k.as_str())
        || DOC_ERROR_HOST.contains(&k.as_str())
        || k == "rx_corrected_bits_phy"
        || (k.starts_with("rx_err_lane_") && k.ends_with("_phy"))
    {
        return DocType::Error;
    }
    if DOC_INFO_KEPT.contains(&k.as_str())
        || prio_discard(&k).is_some()
        || k.starts_with("rx_prio")
        || k.starts_with("tx_prio")
        || k.ends_with("_phy")
    {
        return DocType::Informative;
    }
    DocType::NotInDoc
}

/// How `name` is judged between two reads (mlx5 `ethtool -S`, `ethtool -I --show-fec` under
/// `fec_`, RDMA `hw_counters`). Names not listed: ring and XDP counters are ignored; other
/// `*_phy` counters with `error`/`discard` in the name, and CRC / symbol / uncorrectable /
/// link-down counters, must not grow (a newer driver's physical error counter is not silently
/// dropped).
pub(crate) fn judgement(name: &str) -> Judgement {
    let k = name.to_ascii_lowercase();
    let k = k.as_str();
    if k == "rx_corrected_bits_phy" {
        return Judgement::Rate;
    }
    if IB_MUST_NOT_GROW.contains(&k) {
        return Judgement::MustNotGrow;
    }
    if IB_INFO.contains(&k) {
        return Judgement::Info;
    }
    if DOC_ERROR_PORT.contains(&k) || RDMA_MUST_NOT_GROW.contains(&k) {
        return Judgement::MustNotGrow;
    }
    if OTHER_MUST_NOT_GROW.contains(&k) || k == "rx_fec_uncorrectable_blocks" {
        return Judgement::MustNotGrow;
    }
    if DOC_ERROR_HOST.contains(&k) {
        return Judgement::Warn;
    }
    if let Some(p) = prio_discard(k) {
        return Judgement::LosslessDiscard(p);
    }
    if DOC_INFO_KEPT.contains(&k) || RDMA_INFO.contains(&k) || OTHER_INFO.contains(&k) {
        return Judgement::Info;
    }
    if per_queue(k) || k.contains("xdp") {
        return Judgement::Ignored;
    }
    if k.starts_with("rx_err_lane_") || (k.contains("prio") && k.contains("pause")) {
        return Judgement::Info;
    }
    let bad = k.contains("crc")
        || k.contains("symbol_err")
        || k.contains("uncorrect")
        || k.contains("link_down");
    if bad || (k.ends_with("_phy") && (k.contains("error") || k.contains("discard"))) {
        return Judgement::MustNotGrow;
    }
    Judgement::Ignored
}

/// The judgement in words, as reports and `counter_class(name)` give it.
pub(crate) fn judgement_name(j: Judgement) -> &'static str {
    match j {
        Judgement::MustNotGrow => "must not grow",
        Judgement::Rate => "pre-FEC bit error rate",
        Judgement::Warn => "host error (warns)",
        Judgement::LosslessDiscard(_) => "must not grow on the lossless priority",
        Judgement::Info => "information",
        Judgement::Ignored => "ignored",
    }
}

/// Where the judgement comes from, for messages: the document's type or fabcheck's own list.
pub(crate) fn source(name: &str) -> &'static str {
    let k = name.to_ascii_lowercase();
    if IB_MUST_NOT_GROW.contains(&k.as_str()) || IB_INFO.contains(&k.as_str()) {
        return "InfiniBand PortCounters, perfquery";
    }
    match doc_type(name) {
        DocType::Error => "mlx5 counters.rst: Error",
        DocType::Informative => "mlx5 counters.rst: Informative",
        DocType::NotInDoc => "fabcheck's RDMA/FEC list",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_typed_port_counter_of_the_document_must_not_grow() {
        for k in DOC_ERROR_PORT {
            assert_eq!(doc_type(k), DocType::Error, "{k}");
            assert_eq!(judgement(k), Judgement::MustNotGrow, "{k}");
        }
        // the ones the issue names, by hand
        for k in [
            "tx_pause_storm_error_events",
            "module_high_temp",
            "module_bad_shorted",
            "rx_pcs_symbol_err_phy",
            "link_down_events_phy",
        ] {
            assert_eq!(judgement(k), Judgement::MustNotGrow, "{k}");
        }
    }

    #[test]
    fn documented_exceptions_are_judged_as_the_module_says() {
        assert_eq!(doc_type("rx_corrected_bits_phy"), DocType::Error);
        assert_eq!(judgement("rx_corrected_bits_phy"), Judgement::Rate);
        assert_eq!(doc_type("rx_err_lane_2_phy"), DocType::Error);
        assert_eq!(judgement("rx_err_lane_2_phy"), Judgement::Info);
        assert_eq!(judgement("rx_out_of_buffer"), Judgement::Warn);
        // Informative in the document: never failed
        for k in [
            "tx_pause_storm_warning_events",
            "rx_pause_ctrl_phy",
            "module_unplug",
            "rx_prio3_pause",
        ] {
            assert_eq!(judgement(k), Judgement::Info, "{k}");
        }
        assert_eq!(doc_type("rx_prio3_buf_discard"), DocType::Informative);
        assert_eq!(
            judgement("rx_prio3_buf_discard"),
            Judgement::LosslessDiscard(3)
        );
        assert_eq!(
            judgement("rx_prio0_cong_discard"),
            Judgement::LosslessDiscard(0)
        );
        assert_eq!(
            judgement("rx_prio5_discards"),
            Judgement::LosslessDiscard(5)
        );
        assert_eq!(judgement("rx_prio5_bytes"), Judgement::Ignored);
    }

    #[test]
    fn rdma_fec_and_ring_counters() {
        assert_eq!(judgement("out_of_sequence"), Judgement::MustNotGrow);
        assert_eq!(doc_type("out_of_sequence"), DocType::NotInDoc);
        assert_eq!(judgement("np_cnp_sent"), Judgement::Info);
        assert_eq!(
            judgement("fec_uncorrectable_blocks"),
            Judgement::MustNotGrow
        );
        assert_eq!(judgement("fec_corrected_blocks"), Judgement::Info);
        for k in [
            "rx_bytes",
            "rx0_xdp_drop",
            "tx3_dropped",
            "rx3_recover",
            "ch2_eq_rearm",
            "ptp_cq0_abort",
        ] {
            assert_eq!(judgement(k), Judgement::Ignored, "{k}");
        }
        // an error counter of the physical port that a newer driver adds is not dropped
        assert_eq!(judgement("rx_new_errors_phy"), Judgement::MustNotGrow);
        assert_eq!(source("module_high_temp"), "mlx5 counters.rst: Error");
    }
}
