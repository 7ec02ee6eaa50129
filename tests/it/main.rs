//! fabcheck's integration tests: one binary (builds once), a module per area. Lab tests (real
//! sshd nodes in network namespaces, tests/lab) need root; without it they skip with a notice,
//! and with `CI` set a skipped test is a failure (every
//! skip goes through `common::skip`).

mod common;

mod cli_output;
mod console_snapshot;
mod console_warn;
mod discover;
mod dry_run;
mod hardening;
mod hardening4;
mod hardening5;
mod health;
mod inventory_limits;
mod inventory_slurm;
mod lab_discover;
mod lab_hardening;
mod lab_health;
mod lab_lldp;
mod lab_localise;
mod lab_primitives;
mod lab_shipped;
mod lab_slurm;
mod lab_ssh;
mod newcomer;
mod outcomes;
mod pairs_at_once;
mod parse_fixtures;
mod parse_fuzz;
mod parse_golden;
mod parse_linear;
mod profiles;
mod reports;
mod scenarios;
mod second_cable;
mod set_keys;
mod shipped;
mod sim_ib;
mod sim_switch;
mod ssh_setup;
mod transport_local;
mod typed;
