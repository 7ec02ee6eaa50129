//! Opening input files that fabcheck only reads (transcripts, captured outputs): a FIFO, a
//! device or a directory where a file is expected must not block the run or be read for ever.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Open `path` for reading if it is a regular file (after links). The open itself does not
/// wait (`O_NONBLOCK`: a FIFO with no writer would block `open` for ever); anything else is
/// an `InvalidInput` error saying what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_file() {
        return Ok(f);
    }
    use std::os::unix::fs::FileTypeExt;
    let what = if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a plain file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file; point at a captured output file"),
    ))
}

/// The whole text of a regular file ([`open_regular`]).
pub fn read_regular(path: &Path) -> io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    open_regular(path)?.read_to_string(&mut s)?;
    Ok(s)
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
