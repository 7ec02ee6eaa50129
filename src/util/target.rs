//! The one writer of every file fabcheck writes (reports, the inventory of `discover -o`, and
//! what later writers add): where such a file may go, and how it is written. A path names a
//! regular file or a new name, in a folder reached without following a link that another user
//! owns:
//!
//! - the parent is opened one component at a time (`openat` with `O_NOFOLLOW`); a link on the
//!   way is followed only when it belongs to this user or to root (`/var/run` → `/run`), never
//!   when another user could have planted it (`ln -s /root nbdir/sub`);
//! - the last component must be absent or a regular file of this user: a link, device, FIFO,
//!   socket or folder there (`/dev/stdout`, `/dev/null`, `mknod X c 1 3`) is refused, never
//!   replaced — fabcheck does not write a file to a stream; write it to a file;
//! - folders that do not exist are made (mode from the umask) and the caller is told which,
//!   so the console can say so.
//!
//! The file itself is written to a new temporary file in that folder (`O_EXCL`, `O_NOFOLLOW`)
//! and renamed over the name ([`write`]) or, when an existing file must never be replaced,
//! moved to the name only if the name is still free ([`write_new`]), both relative to the
//! folder's descriptor.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// How many links a path fabcheck writes may pass through (as the kernel's 40).
const MAX_LINKS: usize = 40;

/// The folder a written file goes into, opened, and the folders made to reach it.
pub(crate) struct Parent {
    fd: OwnedFd,
    /// Folders that did not exist and were made, outermost first.
    pub made: Vec<PathBuf>,
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| invalid("the path contains a NUL byte".into()))
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `fstatat` without following a link; `None` when nothing has that name.
fn stat_at(dir: RawFd, name: &OsStr) -> io::Result<Option<libc::stat>> {
    let c = cstr(name)?;
    // SAFETY: an all-zero stat is a valid value for the kernel to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor or AT_FDCWD, NUL-terminated name, writable stat.
    let r = unsafe { libc::fstatat(dir, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 {
        return Ok(Some(st));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOENT) {
        Ok(None)
    } else {
        Err(e)
    }
}

fn open_dir_at(dir: RawFd, name: &OsStr) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: valid descriptor or AT_FDCWD, NUL-terminated name.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor this function owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn read_link_at(dir: RawFd, name: &OsStr) -> io::Result<PathBuf> {
    let c = cstr(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: valid descriptor, NUL-terminated name, buffer of the given length.
    let n = unsafe { libc::readlinkat(dir, c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    use std::os::unix::ffi::OsStringExt;
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

fn kind(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a folder",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO (named pipe)",
        libc::S_IFSOCK => "a socket",
        libc::S_IFCHR | libc::S_IFBLK => "a device",
        _ => "not a regular file",
    }
}

/// A walk from a starting folder through path components, following only links this user or
/// root owns, making missing folders when `make` is set.
struct Walk {
    cur: OwnedFd,
    shown: PathBuf,
    links: usize,
    make: bool,
    made: Vec<PathBuf>,
}

impl Walk {
    fn start(absolute: bool) -> io::Result<Walk> {
        let root = if absolute { "/" } else { "." };
        let c = cstr(OsStr::new(root))?;
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Walk {
            // SAFETY: a fresh descriptor.
            cur: unsafe { OwnedFd::from_raw_fd(fd) },
            shown: PathBuf::from(if absolute { "/" } else { "" }),
            links: 0,
            make: false,
            made: vec![],
        })
    }

    /// Walk every component of `p` (relative to the current folder, or from `/`).
    fn walk(&mut self, p: &Path) -> io::Result<()> {
        for c in p.components() {
            match c {
                Component::RootDir => {
                    let w = Walk::start(true)?;
                    self.cur = w.cur;
                    self.shown = w.shown;
                }
                Component::CurDir | Component::Prefix(_) => {}
                Component::ParentDir => self.step(OsStr::new(".."))?,
                Component::Normal(n) => self.step(n)?,
            }
        }
        Ok(())
    }

    fn step(&mut self, name: &OsStr) -> io::Result<()> {
        let here = self.shown.join(name);
        let st = match stat_at(self.cur.as_raw_fd(), name)? {
            Some(st) => st,
            None if self.make => {
                let c = cstr(name)?;
                // SAFETY: valid descriptor, NUL-terminated name; the umask applies to 0777.
                if unsafe { libc::mkdirat(self.cur.as_raw_fd(), c.as_ptr(), 0o777) } != 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                } else {
                    self.made.push(here.clone());
                }
                return self.enter(name, here);
            }
            None => return Err(io::Error::from_raw_os_error(libc::ENOENT)),
        };
        match st.st_mode & libc::S_IFMT {
            libc::S_IFDIR => self.enter(name, here),
            libc::S_IFLNK => self.follow(name, st.st_uid, here),
            m => Err(invalid(format!(
                "{} is {}, not a folder",
                here.display(),
                kind(m)
            ))),
        }
    }

    fn enter(&mut self, name: &OsStr, here: PathBuf) -> io::Result<()> {
        self.cur = open_dir_at(self.cur.as_raw_fd(), name)?;
        self.shown = here;
        Ok(())
    }

    fn follow(&mut self, name: &OsStr, owner: u32, here: PathBuf) -> io::Result<()> {
        if owner != euid() && owner != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is a link that belongs to another user (uid {owner}; this run is uid \
                     {}), and fabcheck does not follow another user's link on a path it writes: \
                     give the real folder",
                    here.display(),
                    euid()
                ),
            ));
        }
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        let target = read_link_at(self.cur.as_raw_fd(), name)?;
        let make = std::mem::replace(&mut self.make, false);
        let r = self.walk(&target);
        self.make = make;
        r?;
        self.shown = here;
        Ok(())
    }
}

/// The folder `path` goes into, opened without following another user's link; with `make`,
/// missing folders are made. The last component is returned as the name to write.
pub(crate) fn open_parent(path: &Path, make: bool) -> io::Result<(Parent, OsString)> {
    let name = match path.components().next_back() {
        Some(Component::Normal(n)) if !path.as_os_str().as_bytes().ends_with(b"/") => {
            n.to_os_string()
        }
        _ => {
            return Err(invalid(format!(
                "{} names a folder, not a file: give a file name",
                path.display()
            )))
        }
    };
    let mut w = Walk::start(path.is_absolute())?;
    w.make = make;
    if let Some(parent) = path.parent() {
        w.walk(parent)?;
    }
    Ok((
        Parent {
            fd: w.cur,
            made: w.made,
        },
        name,
    ))
}

/// An error unless `name` in `dir` is absent or a regular file of this user.
fn check_name(dir: RawFd, name: &OsStr) -> io::Result<()> {
    let Some(st) = stat_at(dir, name)? else {
        return Ok(());
    };
    let m = st.st_mode & libc::S_IFMT;
    if m != libc::S_IFREG {
        return Err(invalid(format!(
            "it is {}; fabcheck writes only to a regular file or a new name (it never \
             replaces a link, device, FIFO, socket or folder, and does not write a report or \
             an inventory to a stream): give a file path",
            kind(m)
        )));
    }
    if st.st_uid != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the existing file belongs to another user (uid {}; this run is uid {}), and \
                 fabcheck does not replace another user's file: remove it, or write to another \
                 path",
                st.st_uid,
                euid()
            ),
        ));
    }
    Ok(())
}

/// Check a path before the run (before any node is read): an error for anything [`write`] would refuse that can
/// be seen now (folders that do not exist yet are fine: they will be made).
pub(crate) fn check(path: &Path) -> io::Result<()> {
    match open_parent(path, false) {
        Ok((p, name)) => check_name(p.fd.as_raw_fd(), &name),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Write `bytes` as the file at `path`: a new temporary file beside it, renamed over the
/// name (a regular file of this user there is replaced). Returns the folders that had to be
/// made.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<Vec<PathBuf>> {
    write_as(path, bytes, true)
}

/// As [`write`], but an existing file is never replaced, even one that appears while the file
/// is written: the temporary file is moved to the name only if the name is still free
/// (`RENAME_NOREPLACE`), else an `AlreadyExists` error.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> io::Result<Vec<PathBuf>> {
    write_as(path, bytes, false)
}

/// Move `tmp` to `name` in `dir` without replacing anything there.
fn rename_noreplace(dir: RawFd, tmp: &CString, name: &CString) -> io::Result<()> {
    // SAFETY: valid descriptor and NUL-terminated names.
    let r = unsafe {
        libc::renameat2(
            dir,
            tmp.as_ptr(),
            dir,
            name.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    // A file system without RENAME_NOREPLACE: a hard link fails as well on an existing name.
    // SAFETY: valid descriptor and NUL-terminated names; flags 0 does not follow links.
    if unsafe { libc::linkat(dir, tmp.as_ptr(), dir, name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: valid descriptor and NUL-terminated name.
    unsafe { libc::unlinkat(dir, tmp.as_ptr(), 0) };
    Ok(())
}

fn write_as(path: &Path, bytes: &[u8], replace: bool) -> io::Result<Vec<PathBuf>> {
    use std::io::Write;
    let (parent, name) = open_parent(path, true)?;
    let dir = parent.fd.as_raw_fd();
    check_name(dir, &name)?;
    let mut attempt = 0;
    let (tmp, mut f) = loop {
        let tmp = OsString::from(format!(
            ".{}.{}.{:016x}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            crate::util::random::random_u64()
        ));
        let c = cstr(&tmp)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid descriptor, NUL-terminated name; open(2) applies the umask to 0666.
        let fd = unsafe { libc::openat(dir, c.as_ptr(), flags, 0o666 as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: a fresh descriptor this function owns.
            break (tmp, unsafe { std::fs::File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EEXIST) && attempt < 8 {
            attempt += 1;
            continue;
        }
        return Err(e);
    };
    let written = f.write_all(bytes).and_then(|_| f.sync_all());
    drop(f);
    hold_before_rename(&name);
    let tmp_c = cstr(&tmp)?;
    let renamed = written.and_then(|_| {
        let to = cstr(&name)?;
        if !replace {
            return rename_noreplace(dir, &tmp_c, &to).map_err(|e| {
                if e.raw_os_error() == Some(libc::EEXIST) {
                    io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "the file exists, and this write never replaces one; nothing was written",
                    )
                } else {
                    e
                }
            });
        }
        // SAFETY: valid descriptors and NUL-terminated names. rename replaces a regular file
        // (checked above) and never writes through a link.
        if unsafe { libc::renameat(dir, tmp_c.as_ptr(), dir, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    });
    if let Err(e) = renamed {
        // SAFETY: valid descriptor and NUL-terminated name.
        unsafe { libc::unlinkat(dir, tmp_c.as_ptr(), 0) };
        return Err(e);
    }
    Ok(parent.made)
}

/// Tests stop a write exactly between the complete temporary file and its rename (to kill the
/// process there): with FABCHECK_TEST_HOLD_RENAME=NAME:FIFO a write of a file named NAME writes
/// one line into the FIFO (the test reads it: the temporary file is complete) and then waits
/// for a line back that the test never sends. Not a timing: the test acts once the line is read.
fn hold_before_rename(name: &OsStr) {
    let Some(v) = std::env::var_os("FABCHECK_TEST_HOLD_RENAME") else {
        return;
    };
    let v = v.to_string_lossy().into_owned();
    let Some((file, fifo)) = v.split_once(':') else {
        return;
    };
    if OsStr::new(file) != name {
        return;
    }
    use std::io::{Read, Write};
    if let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(fifo) {
        let _ = w.write_all(b"holding before the rename\n");
    }
    if let Ok(mut r) = std::fs::File::open(fifo) {
        let _ = r.read(&mut [0u8; 1]);
    }
}

/// A folder of this user only, for state kept between runs (`fabcheck health --state`): made
/// with mode 0700 where missing (parents by the rules above), else it must be a folder (not a
/// link) of this user that no one else can read or write (an existing `/tmp` or a shared
/// folder is refused, never chmodded). Returns the folders made.
pub(crate) fn private_folder(path: &Path) -> io::Result<Vec<PathBuf>> {
    let (parent, name) = open_parent(path, true)?;
    let dir = parent.fd.as_raw_fd();
    let c = cstr(&name)?;
    let mut made = parent.made;
    // SAFETY: valid descriptor, NUL-terminated name; the umask can only narrow 0700.
    if unsafe { libc::mkdirat(dir, c.as_ptr(), 0o700) } == 0 {
        made.push(path.to_path_buf());
        return Ok(made);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EEXIST) {
        return Err(e);
    }
    let st = stat_at(dir, &name)?.ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))?;
    let m = st.st_mode & libc::S_IFMT;
    if m != libc::S_IFDIR {
        return Err(invalid(format!("it is {}, not a folder", kind(m))));
    }
    if st.st_uid != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the folder belongs to another user (uid {}; this run is uid {})",
                st.st_uid,
                euid()
            ),
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the folder has mode {:o}: others can read or write it; give a folder of its \
                 own (fabcheck makes it with mode 0700), or chmod 700 it",
                st.st_mode & 0o7777
            ),
        ));
    }
    Ok(made)
}

/// The folder `path` itself, opened by the rules above (reached without another user's link;
/// with `make`, missing folders are made), and the folders made to reach it: for writers that
/// put several files in one folder (`--record DIR`), each made with [`create_new_at`].
pub(crate) fn open_folder(path: &Path, make: bool) -> io::Result<(OwnedFd, Vec<PathBuf>)> {
    let mut w = Walk::start(path.is_absolute())?;
    w.make = make;
    w.walk(path)?;
    Ok((w.cur, w.made))
}

/// A new file `name` in the folder `dir` (from [`open_folder`]), created exclusively: never an
/// existing file, never through a link (`O_CREAT | O_EXCL | O_NOFOLLOW`), with `mode` (less the
/// umask). An existing name is an `AlreadyExists` error.
pub(crate) fn create_new_at(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<std::fs::File> {
    let c = cstr(name)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: valid descriptor, NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor this function owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// What is at `name` in the folder `dir`, without following a link: `None` when nothing.
pub(crate) fn entry_at(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<(&'static str, u32)>> {
    Ok(stat_at(dir.as_raw_fd(), name)?.map(|st| (kind(st.st_mode), st.st_uid)))
}

/// A new folder in `parent` (made by the rules above if missing, reached without another
/// user's link): the first of `names` that is free, made with `mkdirat` (never an existing
/// folder, never through a link). Returns its path and the folders made to reach `parent`.
pub(crate) fn make_new_folder(
    parent: &Path,
    names: &[String],
) -> io::Result<(PathBuf, Vec<PathBuf>)> {
    let mut w = Walk::start(parent.is_absolute())?;
    w.make = true;
    w.walk(parent)?;
    for n in names {
        let c = cstr(OsStr::new(n))?;
        // SAFETY: valid descriptor, NUL-terminated name; the umask applies to 0777.
        if unsafe { libc::mkdirat(w.cur.as_raw_fd(), c.as_ptr(), 0o777) } == 0 {
            return Ok((parent.join(n), w.made));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free name for a new folder in {}", parent.display()),
    ))
}

/// `Some(message)` when two report options name the same file (the same path, or two paths of
/// one existing file): each report needs its own file, or one overwrites the other.
pub(crate) fn same_file(a: (&str, &Path), b: (&str, &Path)) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let norm = |p: &Path| -> PathBuf {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        abs.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    };
    let same =
        |x: &std::fs::Metadata, y: &std::fs::Metadata| x.dev() == y.dev() && x.ino() == y.ino();
    // One existing file under two names, or one new name in one folder reached two ways (a
    // linked folder: `out/r.xml` and `link-to-out/r.xml`), by device and inode.
    let folder = |p: &Path| match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => std::fs::metadata(d),
        _ => std::fs::metadata("."),
    };
    let same_inode = match (std::fs::metadata(a.1), std::fs::metadata(b.1)) {
        (Ok(x), Ok(y)) => same(&x, &y),
        (Err(_), Err(_)) => {
            a.1.file_name() == b.1.file_name()
                && matches!((folder(a.1), folder(b.1)), (Ok(x), Ok(y)) if same(&x, &y))
        }
        _ => false,
    };
    (norm(a.1) == norm(b.1) || same_inode).then(|| {
        format!(
            "{} {} and {} {} are the same file: each report needs its own file (one would \
             overwrite the other)",
            a.0,
            a.1.display(),
            b.0,
            b.1.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fc-target-{tag}-{}-{:x}",
            std::process::id(),
            crate::util::random::random_u64()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_new_name_and_a_regular_file_are_written_and_folders_made() {
        let d = tmp("new");
        let p = d.join("a/b/r.xml");
        let made = write(&p, b"one").unwrap();
        assert_eq!(made, vec![d.join("a"), d.join("a/b")]);
        assert_eq!(write(&p, b"two").unwrap(), Vec::<PathBuf>::new());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_fifos_and_folders_at_the_name_are_refused_not_replaced() {
        let d = tmp("special");
        std::fs::write(d.join("victim"), "precious").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("link.xml")).unwrap();
        std::os::unix::fs::symlink("/dev/stdout", d.join("out.xml")).unwrap();
        let fifo = CString::new(d.join("fifo.xml").as_os_str().as_bytes()).unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(d.join("dir.xml")).unwrap();
        for (n, what) in [
            ("link.xml", "symbolic link"),
            ("out.xml", "symbolic link"),
            ("fifo.xml", "FIFO"),
            ("dir.xml", "folder"),
        ] {
            let e = write(&d.join(n), b"x").unwrap_err().to_string();
            assert!(e.contains(what), "{n}: {e}");
            assert!(check(&d.join(n)).is_err(), "{n}");
            let t = std::fs::symlink_metadata(d.join(n)).unwrap().file_type();
            assert!(!t.is_file(), "{n} was replaced");
        }
        let e = write(Path::new("/dev/null"), b"x").unwrap_err().to_string();
        assert!(e.contains("device"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.join("victim")).unwrap(),
            "precious"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn own_links_on_the_way_are_followed_and_foreign_ones_refused() {
        let d = tmp("links");
        std::fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("mine")).unwrap();
        write(&d.join("mine/r.xml"), b"ok").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("real/r.xml")).unwrap(), "ok");
        // A relative link with `..` in it.
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("../real", d.join("sub/up")).unwrap();
        write(&d.join("sub/up/s.xml"), b"ok").unwrap();
        assert!(d.join("real/s.xml").exists());
        if euid() == 0 {
            // Another user's link on the way (as `nobody` could plant in its own folder).
            std::fs::create_dir(d.join("nb")).unwrap();
            std::os::unix::fs::chown(d.join("nb"), Some(65534), Some(65534)).unwrap();
            std::os::unix::fs::symlink(d.join("real"), d.join("nb/sub")).unwrap();
            std::os::unix::fs::lchown(d.join("nb/sub"), Some(65534), Some(65534)).unwrap();
            let e = write(&d.join("nb/sub/victim.xml"), b"x").unwrap_err();
            assert!(e.to_string().contains("another user"), "{e}");
            assert!(check(&d.join("nb/sub/victim.xml")).is_err());
            assert!(!d.join("real/victim.xml").exists());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn write_new_never_replaces_an_existing_file() {
        let d = tmp("new-only");
        let p = d.join("inv.toml");
        write_new(&p, b"one").unwrap();
        let e = write_new(&p, b"two").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_new_folder_takes_the_first_free_name_and_never_a_foreign_link() {
        let d = tmp("folder");
        let names = ["run".to_string(), "run-2".to_string()];
        let (a, made) = make_new_folder(&d.join("res"), &names).unwrap();
        assert_eq!((a, made), (d.join("res/run"), vec![d.join("res")]));
        let (b, _) = make_new_folder(&d.join("res"), &names).unwrap();
        assert_eq!(b, d.join("res/run-2"));
        assert!(make_new_folder(&d.join("res"), &names).is_err());
        if euid() == 0 {
            std::fs::create_dir(d.join("real")).unwrap();
            std::os::unix::fs::symlink(d.join("real"), d.join("theirs")).unwrap();
            std::os::unix::fs::lchown(d.join("theirs"), Some(65534), Some(65534)).unwrap();
            let e = make_new_folder(&d.join("theirs"), &names).unwrap_err();
            assert!(e.to_string().contains("another user"), "{e}");
            assert_eq!(std::fs::read_dir(d.join("real")).unwrap().count(), 0);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_same_file_twice_is_named() {
        let a = Path::new("out/r.xml");
        assert!(same_file(("--junit", a), ("--json", Path::new("./out/r.xml"))).is_some());
        assert!(same_file(("--junit", a), ("--json", Path::new("out/r.json"))).is_none());
        // A new name in one folder reached through a link (issue 50, low).
        let d = tmp("same");
        std::fs::create_dir(d.join("out")).unwrap();
        std::os::unix::fs::symlink(d.join("out"), d.join("ln")).unwrap();
        let (x, y) = (d.join("out/r.xml"), d.join("ln/r.xml"));
        assert!(same_file(("--junit", &x), ("--json", &y)).is_some());
        assert!(same_file(("--junit", &x), ("--json", &d.join("ln/s.xml"))).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
