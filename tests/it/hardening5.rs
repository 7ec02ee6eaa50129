//! Hardening, fifth round (issue 50): discover's writer, localise with nothing measured,
//! parsers with bounded cost. Each test fails on the main before it (checked with
//! `FABCHECK_TEST_BIN` pointing at that build).

use crate::common::{repo, Fab, Outcome};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn discover_defaults() -> String {
    repo()
        .join("examples/sim/discover-defaults.toml")
        .display()
        .to_string()
}

/// `fabcheck discover spark-01 -i DEFAULTS -o OUT [extra…]` on the simulation.
fn discover_to(dir: &Path, out: &str, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "discover".to_string(),
        "spark-01".into(),
        "-i".into(),
        discover_defaults(),
        "-o".into(),
        out.replace("{dir}", dir.to_str().unwrap()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Fab::new().args(args).run()
}

/// The line discover prints for each node it read.
fn read_a_node(o: &Outcome) -> bool {
    o.stderr.contains("spark-01: ")
}

#[test]
fn discover_output_that_is_a_link_fifo_device_or_folder_is_refused_before_any_node_is_read() {
    let f = Fab::new();
    let d = f.dir().to_path_buf();
    std::fs::write(d.join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("link.toml")).unwrap();
    // The `-o /dev/stdout` of the issue, without touching the host's /dev/stdout.
    std::os::unix::fs::symlink("/proc/self/fd/1", d.join("fd1.toml")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.toml").to_str().unwrap()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(d.join("dir.toml")).unwrap();
    let mut cases = vec![
        ("link.toml", "symbolic link"),
        ("fd1.toml", "symbolic link"),
        ("fifo.toml", "FIFO"),
        ("dir.toml", "folder"),
    ];
    if is_root() {
        // The `-o /dev/null` of the issue: a test-made /dev/null (char device 1,3).
        let dev = std::ffi::CString::new(d.join("null.toml").to_str().unwrap()).unwrap();
        // SAFETY: valid path; makedev(1, 3) is /dev/null.
        let r = unsafe { libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(r, 0);
        cases.push(("null.toml", "device"));
    } else {
        eprintln!("NOTICE: skipping the device case: mknod needs root");
    }
    for (name, what) in &cases {
        let o = discover_to(&d, &format!("{{dir}}/{name}"), &["--force"]);
        assert_eq!(o.code, 2, "{name}: exit {}\n{}", o.code, o.stderr);
        assert!(
            o.stderr.contains(what) && o.stderr.contains("regular file or a new name"),
            "{name}: {}",
            o.stderr
        );
        assert!(o.stderr.contains("`-o -`"), "{name}: {}", o.stderr);
        assert!(
            !read_a_node(&o),
            "{name}: a node was read first:\n{}",
            o.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("victim")).unwrap(),
        "precious"
    );
    let t = |n: &str| std::fs::symlink_metadata(d.join(n)).unwrap().file_type();
    assert!(t("link.toml").is_symlink() && t("fd1.toml").is_symlink());
    assert!(t("fifo.toml").is_fifo());
    assert!(t("dir.toml").is_dir());
    if is_root() {
        assert!(t("null.toml").is_char_device(), "the device was replaced");
    }
    // Without --force, a link is refused for what it is (not "give --force").
    let o = discover_to(&d, "{dir}/link.toml", &[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
}

#[test]
fn discover_dash_means_stdout() {
    for extra in [&[][..], &["--force"][..]] {
        let f = Fab::new();
        let d = f.dir().to_path_buf();
        let o = discover_to(&d, "-", extra);
        o.code(0);
        assert!(o.stdout.contains("name = \"spark-01\""), "{}", o.stdout);
        assert!(
            !o.dir.join("-").exists() && !d.join("-").exists(),
            "a file named - was written"
        );
    }
}

#[test]
fn discover_never_replaces_another_users_file_nor_follows_their_link() {
    if !is_root() {
        eprintln!("NOTICE: skipping: needs root to plant another user's file and link");
        return;
    }
    let f = Fab::new();
    let d = f.dir().to_path_buf();
    std::fs::write(d.join("theirs.toml"), "# theirs\n").unwrap();
    std::os::unix::fs::chown(d.join("theirs.toml"), Some(65534), Some(65534)).unwrap();
    let o = discover_to(&d, "{dir}/theirs.toml", &["--force"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("another user"), "{}", o.stderr);
    assert!(!read_a_node(&o), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(d.join("theirs.toml")).unwrap(),
        "# theirs\n"
    );
    // Another user's link on the way to the folder is not followed.
    std::fs::create_dir(d.join("rootonly")).unwrap();
    std::fs::create_dir(d.join("nbdir")).unwrap();
    std::os::unix::fs::chown(d.join("nbdir"), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("nbdir/sub")).unwrap();
    std::os::unix::fs::lchown(d.join("nbdir/sub"), Some(65534), Some(65534)).unwrap();
    let o = discover_to(&d, "{dir}/nbdir/sub/found.toml", &["--force"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("belongs to another user"), "{}", o.stderr);
    assert!(!read_a_node(&o), "{}", o.stderr);
    assert!(!d.join("rootonly/found.toml").exists());
    // This user's own link is followed, and the inventory written there.
    std::os::unix::fs::symlink(d.join("rootonly"), d.join("mine")).unwrap();
    let o = discover_to(&d, "{dir}/mine/found.toml", &[]);
    o.code(0);
    let text = std::fs::read_to_string(d.join("rootonly/found.toml")).unwrap();
    assert!(text.contains("name = \"spark-01\""), "{text}");
}
