//! `-i slurm`: the nodes of a Slurm allocation from `SLURM_JOB_NODELIST` (issue 15), with an
//! optional defaults file (`-i slurm:FILE` or `FABCHECK_SLURM_DEFAULTS`).

use crate::common;
use common::{Fab, Outcome};

const ALLOC: &str = "gpu-[01-03,07],login1";

/// Run fabcheck with exactly these Slurm-related variables (others removed).
fn with_env(fab: Fab, vars: &[(&str, &str)]) -> Outcome {
    let mut c = fab.command();
    for v in [
        "SLURM_JOB_NODELIST",
        "SLURM_NODELIST",
        "FABCHECK_SLURM_DEFAULTS",
    ] {
        c.env_remove(v);
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().expect("run fabcheck");
    fab.outcome(out)
}

fn names(o: &Outcome) -> Vec<String> {
    o.stdout
        .lines()
        .filter(|l| !l.starts_with('@') && !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn slurm_nodelist_becomes_the_inventory() {
    let o = with_env(
        Fab::new().args(["nodes", "-i", "slurm"]),
        &[("SLURM_JOB_NODELIST", ALLOC)],
    );
    o.code(0);
    assert_eq!(
        names(&o),
        ["gpu-01", "gpu-02", "gpu-03", "gpu-07", "login1"],
        "{}",
        o.stdout
    );
    // nested prefixes, Slurm order (first bracket slowest); SLURM_NODELIST as a fallback
    let o = with_env(
        Fab::new().args(["nodes", "-i", "slurm"]),
        &[("SLURM_NODELIST", "a[1-2]-b[3-4]")],
    );
    o.code(0);
    assert_eq!(names(&o), ["a1-b3", "a1-b4", "a2-b3", "a2-b4"]);
    // -w narrows the allocation
    let o = with_env(
        Fab::new().args(["nodes", "-i", "slurm", "gpu-[02-03]"]),
        &[("SLURM_JOB_NODELIST", ALLOC)],
    );
    o.code(0);
    assert_eq!(names(&o), ["gpu-02", "gpu-03"]);
}

#[test]
fn slurm_defaults_file_from_the_source_or_the_environment() {
    let defaults = r#"
[defaults]
user = "nvidia"
interfaces = ["ib0"]
[[node]]
name = "gpu-[01-08]"
host = "10.0.0.[1-8]"
[groups]
fabric = "gpu-[01-08]"
"#;
    for (src, env) in [
        ("slurm:defaults.toml", None),
        ("slurm", Some("defaults.toml")),
    ] {
        let mut vars = vec![("SLURM_JOB_NODELIST", ALLOC)];
        if let Some(e) = env {
            vars.push(("FABCHECK_SLURM_DEFAULTS", e));
        }
        let o = with_env(
            Fab::new()
                .file("defaults.toml", defaults)
                .args(["nodes", "-i", src]),
            &vars,
        );
        o.code(0);
        assert!(
            o.stdout
                .contains("gpu-07\tnvidia@10.0.0.7\tSsh\tinterfaces=ib0"),
            "{src}: {}",
            o.stdout
        );
        assert!(
            o.stdout
                .contains("login1\tnvidia@login1\tSsh\tinterfaces=ib0"),
            "{}",
            o.stdout
        );
        assert!(o.stdout.contains("@fabric\tgpu-[01-03,07]"), "{}", o.stdout);
    }
}

#[test]
fn scripts_see_the_allocated_nodes() {
    let o = with_env(
        Fab::new()
            .file("s.rhai", "test_each(nodes(), \"up\", |n| {});\n")
            .args(["list", "s.rhai", "-i", "slurm"]),
        &[("SLURM_JOB_NODELIST", "gpu-[01-02]")],
    );
    o.code(0);
    assert!(
        o.stdout.contains("up [gpu-01]") && o.stdout.contains("up [gpu-02]"),
        "{}",
        o.stdout
    );
}

#[test]
fn slurm_errors_are_exit_2() {
    let o = with_env(Fab::new().args(["nodes", "-i", "slurm"]), &[]);
    o.code(2);
    assert!(
        o.stderr.contains("SLURM_JOB_NODELIST is not set"),
        "{}",
        o.stderr
    );
    let o = with_env(
        Fab::new().args(["nodes", "-i", "slurm"]),
        &[("SLURM_JOB_NODELIST", "gpu-[01-")],
    );
    o.code(2);
    assert!(o.stderr.contains("SLURM_JOB_NODELIST"), "{}", o.stderr);
    let o = with_env(
        Fab::new()
            .file("d.toml", "[defaults]\nspeed = 3\n")
            .args(["nodes", "-i", "slurm:d.toml"]),
        &[("SLURM_JOB_NODELIST", ALLOC)],
    );
    o.code(2);
    assert!(o.stderr.contains("d.toml:2:"), "{}", o.stderr);
    // Inside an allocation, no -i/-w is still this machine only: nothing is implied.
    let o = with_env(Fab::new().args(["nodes"]), &[("SLURM_JOB_NODELIST", ALLOC)]);
    o.code(2);
}
