//! Opening input files that fabcheck only reads (transcripts, captured outputs): a FIFO, a
//! device or a directory where a file is expected must not block the run or be read for ever.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most fabcheck reads of a script or a module (8 MiB; the largest shipped script is a
/// few dozen KiB).
pub(crate) const SCRIPT_CAP: u64 = 8 << 20;
/// The most fabcheck reads of an inventory (16 MiB: thousands of nodes fit in a few MiB).
pub(crate) const INVENTORY_CAP: u64 = 16 << 20;
/// The most fabcheck reads of a `--json` result (`--baseline`, `compare`): 256 MiB (a run
/// keeps at most 1 MiB of a test's output and caps every message; a result of thousands of
/// testcases is tens of MiB).
pub(crate) const RESULT_CAP: u64 = 256 << 20;
/// The most `fabcheck parse KIND FILE` reads of a captured output: 64 MiB (a run hands a
/// parser at most 1 MiB of a command's output; a whole fabric's `ibdiagnet` or `iblinkinfo`
/// capture is a few MiB).
pub(crate) const CAPTURE_CAP: u64 = 64 << 20;

/// What a file of this type is, when it is not a regular file.
fn not_regular(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if t.is_file() {
        return None;
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a plain file"
    })
}

/// Open `path` for reading if it is a regular file (after links); `hint` says what to point
/// at instead. The open itself does not wait (`O_NONBLOCK`: a FIFO with no writer would block
/// `open` for ever); anything else is an `InvalidInput` error saying what it is.
fn open_regular_for(path: &Path, hint: &str) -> io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    match not_regular(f.metadata()?.file_type()) {
        None => Ok(f),
        Some(what) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file; {hint}"),
        )),
    }
}

/// Open `path` for reading if it is a regular file (a captured output, a transcript).
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_for(path, "point at a captured output file")
}

/// The whole text of a regular file ([`open_regular`]).
pub(crate) fn read_regular(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    open_regular(path)?.read_to_string(&mut s)?;
    Ok(s)
}

/// The error for more than `cap` bytes of a `what`.
fn too_large(cap: u64, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "larger than {}, the most fabcheck reads of a {what}; is it the right file?",
            crate::util::fmt::human_bytes(cap as f64)
        ),
    )
}

/// At most `cap` bytes from `r`, else an error saying so (stdin, a file already opened).
pub(crate) fn read_all_capped(r: impl io::Read, cap: u64, what: &str) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    r.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_large(cap, what));
    }
    Ok(buf)
}

/// The bytes of `path` (a `what`), read only if it is a regular file of at most `cap` bytes:
/// a FIFO, a device (`/dev/zero`) or a directory is refused at once, a larger file before it
/// is read (or after `cap` bytes, if it grows meanwhile), with an error that says so.
pub(crate) fn read_capped_bytes(path: &Path, cap: u64, what: &str) -> io::Result<Vec<u8>> {
    let f = open_regular_for(path, &format!("point at the {what} file"))?;
    if f.metadata()?.len() > cap {
        return Err(too_large(cap, what));
    }
    read_all_capped(f, cap, what)
}

/// The text of `path` (a script, a module, an inventory, a result: `what`), read only if it is
/// a regular file of at most `cap` bytes ([`read_capped_bytes`]) and UTF-8 text.
pub(crate) fn read_capped(path: &Path, cap: u64, what: &str) -> io::Result<String> {
    let buf = read_capped_bytes(path, cap, what)?;
    String::from_utf8(buf).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (byte {}); is it the right file?",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking_and_a_file_is_read() {
        let dir = std::env::temp_dir().join(format!("fc-fs-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_regular(&dir).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        std::fs::write(dir.join("f"), "text").unwrap();
        assert_eq!(read_regular(&dir.join("f")).unwrap(), "text");
        // Capped reads: a FIFO and /dev/zero at once (on a thread: a read that blocks on the
        // FIFO fails the test at the bound instead of holding it), a file over the cap with
        // the cap named.
        let (tx, rx) = std::sync::mpsc::channel();
        let f = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send((
                read_capped(&f, SCRIPT_CAP, "script").map_err(|e| e.to_string()),
                read_capped(Path::new("/dev/zero"), SCRIPT_CAP, "script")
                    .map_err(|e| e.to_string()),
            ));
        });
        let (from_fifo, from_zero) = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("reading a FIFO or /dev/zero blocked");
        let e = from_fifo.unwrap_err();
        assert!(e.contains("FIFO"), "{e}");
        let e = from_zero.unwrap_err();
        assert!(e.contains("a device"), "{e}");
        std::fs::write(dir.join("big"), vec![b'x'; 2049]).unwrap();
        let e = read_capped(&dir.join("big"), 2048, "inventory").unwrap_err();
        assert!(e.to_string().contains("larger than 2KiB"), "{e}");
        assert_eq!(
            read_capped(&dir.join("f"), 2048, "inventory").unwrap(),
            "text"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
