//! The run's private directory for the masters' control sockets.

use std::path::{Path, PathBuf};

/// Why the run's control directory could not be made or used.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ControlDirError {
    #[error("SSH control socket paths under {0} would be too long")]
    TooLong(String),
    #[error("cannot create the SSH control directory {path}: {message}")]
    Create { path: String, message: String },
    #[error("cannot create an SSH control directory: {0}")]
    Taken(String),
    #[error("{path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("refusing SSH control directory {0}: not a plain directory")]
    NotPlain(String),
    #[error("refusing SSH control directory {path}: owned by uid {owner}, not {me}")]
    NotOurs { path: String, owner: u32, me: u32 },
    #[error("refusing SSH control directory {path}: mode {mode:o} is open to others")]
    Open { path: String, mode: u32 },
}

/// Make the run's private control directory under `base`: `base/fc-RANDOM` (mkdir 0700, a
/// fresh random name, never an existing path) holding `fc-PID` (the name the socket paths
/// and interrupt checks show). Refuses anything that is not a real directory owned by us
/// and closed to others. Falls back to /tmp where `base` would make the mux socket path
/// (`…/.ssh-connectionXXXXXX/master`) longer than a socket path may be (108 bytes).
pub(super) fn make_control_dir(base: &Path) -> Result<PathBuf, ControlDirError> {
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
        return Err(ControlDirError::TooLong(base.display().to_string()));
    }
    let mkdir = |p: &Path| {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(p)
            .map_err(|e| {
                (
                    e.kind(),
                    ControlDirError::Create {
                        path: p.display().to_string(),
                        message: e.to_string(),
                    },
                )
            })
    };
    let mut last = String::new();
    for _ in 0..16 {
        let outer = base.join(format!("fc-{}", random_name()));
        match mkdir(&outer) {
            Ok(()) => {}
            Err((std::io::ErrorKind::AlreadyExists, _)) => {
                last = format!("{} exists", outer.display());
                continue;
            }
            Err((_, e)) => return Err(e),
        }
        check_private_dir(&outer)?;
        let inner = outer.join(format!("fc-{pid}"));
        mkdir(&inner).map_err(|(_, e)| e)?;
        check_private_dir(&inner)?;
        return Ok(inner);
    }
    Err(ControlDirError::Taken(last))
}

/// A directory we may put control sockets in: not a symlink, a directory, owned by our
/// effective uid, no access for group or others.
pub(super) fn check_private_dir(p: &Path) -> Result<(), ControlDirError> {
    use std::os::unix::fs::MetadataExt;
    let path = p.display().to_string();
    let m = std::fs::symlink_metadata(p).map_err(|e| ControlDirError::Unreadable {
        path: path.clone(),
        message: e.to_string(),
    })?;
    if m.file_type().is_symlink() || !m.is_dir() {
        return Err(ControlDirError::NotPlain(path));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(ControlDirError::NotOurs {
            path,
            owner: m.uid(),
            me,
        });
    }
    if m.mode() & 0o077 != 0 {
        return Err(ControlDirError::Open {
            path,
            mode: m.mode() & 0o7777,
        });
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
        assert!(e.to_string().contains("not a plain directory"), "{e}");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_private_dir(&target).unwrap_err();
        assert!(e.to_string().contains("open to others"), "{e}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&target, Some(65534), None).unwrap();
            let e = check_private_dir(&target).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
