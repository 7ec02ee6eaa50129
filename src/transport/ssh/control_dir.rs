//! The run's private directory for the masters' control sockets.

use std::path::PathBuf;

/// Make the run's private control directory under `base`: `base/fc-RANDOM` (mkdir 0700, a
/// fresh random name, never an existing path) holding `fc-PID` (the name the socket paths
/// and interrupt checks show). Refuses anything that is not a real directory owned by us
/// and closed to others. Falls back to /tmp where `base` would make the mux socket path
/// (`…/.ssh-connectionXXXXXX/master`) longer than a socket path may be (108 bytes).
pub(super) fn make_control_dir(base: &std::path::Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let pid = std::process::id().to_string();
    let socket_len = |b: &std::path::Path| {
        b.as_os_str().len()
            + "/fc-".len()
            + RANDOM_LEN
            + "/fc-".len()
            + pid.len()
            + "/.ssh-connectionXXXXXX/master".len()
    };
    let mut base = base.to_path_buf();
    if socket_len(&base) >= 108 {
        base = PathBuf::from("/tmp");
    }
    if socket_len(&base) >= 108 {
        return Err(format!(
            "SSH control socket paths under {} would be too long",
            base.display()
        ));
    }
    let mkdir = |p: &std::path::Path| std::fs::DirBuilder::new().mode(0o700).create(p);
    let mut last = String::new();
    for _ in 0..16 {
        let outer = base.join(format!("fc-{}", random_name()));
        match mkdir(&outer) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last = format!("{} exists", outer.display());
                continue;
            }
            Err(e) => {
                return Err(format!(
                    "cannot create the SSH control directory {}: {e}",
                    outer.display()
                ))
            }
        }
        check_private_dir(&outer)?;
        let inner = outer.join(format!("fc-{pid}"));
        mkdir(&inner).map_err(|e| {
            format!(
                "cannot create the SSH control directory {}: {e}",
                inner.display()
            )
        })?;
        check_private_dir(&inner)?;
        return Ok(inner);
    }
    Err(format!("cannot create an SSH control directory: {last}"))
}

/// A directory we may put control sockets in: not a symlink, a directory, owned by our
/// effective uid, no access for group or others.
pub(super) fn check_private_dir(p: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(format!(
            "refusing SSH control directory {}: not a plain directory",
            p.display()
        ));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(format!(
            "refusing SSH control directory {}: owned by uid {}, not {me}",
            p.display(),
            m.uid()
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "refusing SSH control directory {}: mode {:o} is open to others",
            p.display(),
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

use crate::util::random::{random_name, RANDOM_NAME_LEN as RANDOM_LEN};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_dirs_are_fresh_private_and_short() {
        let base = std::env::temp_dir();
        let a = make_control_dir(&base).unwrap();
        let b = make_control_dir(&base).unwrap();
        assert_ne!(a, b);
        for d in [&a, &b] {
            check_private_dir(d).unwrap();
            check_private_dir(d.parent().unwrap()).unwrap();
            assert!(d.ends_with(format!("fc-{}", std::process::id())));
            let socket = d.join(".ssh-connectionXXXXXX/master");
            assert!(socket.as_os_str().len() < 108, "{}", socket.display());
            let _ = std::fs::remove_dir_all(d.parent().unwrap());
        }
        // A TMPDIR so long that socket paths would not fit falls back to /tmp.
        let long = base.join("x".repeat(90));
        let c = make_control_dir(&long).unwrap();
        assert!(
            c.display().to_string().starts_with("/tmp/fc-"),
            "{}",
            c.display()
        );
        let _ = std::fs::remove_dir_all(c.parent().unwrap());
    }

    #[test]
    fn planted_links_foreign_and_open_dirs_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("fc-ut-{}", random_name()));
        std::fs::create_dir(&base).unwrap();
        let target = base.join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = check_private_dir(&link).unwrap_err();
        assert!(e.contains("not a plain directory"), "{e}");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_private_dir(&target).unwrap_err();
        assert!(e.contains("open to others"), "{e}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&target, Some(65534), None).unwrap();
            let e = check_private_dir(&target).unwrap_err();
            assert!(e.contains("owned by uid 65534"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
