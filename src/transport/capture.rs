//! Bounded capture of a command's output: the first [`HEAD`] and the last [`TAIL`] bytes of a
//! stream are kept, whatever is between them is counted and replaced by a marker. Memory per
//! stream is bounded by `HEAD + TAIL` however much a node prints; the full output goes only to
//! `--record` files, written as it arrives (see `recorder.rs`).

/// Bytes kept from the start of a stream.
pub(crate) const HEAD: usize = 512 * 1024;
/// Bytes kept from the end of a stream.
pub(crate) const TAIL: usize = 512 * 1024;

/// Which stream a chunk of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Head + tail of one stream.
pub(crate) struct Capped {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// Ring buffer of the last bytes once the head is full.
    tail: Vec<u8>,
    /// Next write position in `tail` once it is full.
    pos: usize,
    total: u64,
}

impl Default for Capped {
    fn default() -> Self {
        Capped::new(HEAD, TAIL)
    }
}

impl Capped {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Capped {
        Capped {
            head_cap,
            tail_cap,
            head: Vec::new(),
            tail: Vec::new(),
            pos: 0,
            total: 0,
        }
    }

    /// All bytes seen so far, kept or not.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Bytes that were seen but are not kept.
    pub(crate) fn cut(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    pub(crate) fn push(&mut self, mut b: &[u8]) {
        self.total += b.len() as u64;
        if self.head.len() < self.head_cap {
            let n = b.len().min(self.head_cap - self.head.len());
            if self.head.capacity() == 0 {
                self.head.reserve_exact(n.max(b.len().min(self.head_cap)));
            }
            self.head.extend_from_slice(&b[..n]);
            b = &b[n..];
        }
        if b.is_empty() || self.tail_cap == 0 {
            return;
        }
        if b.len() >= self.tail_cap {
            // Only the last tail_cap bytes of this chunk survive.
            self.tail.clear();
            self.tail.extend_from_slice(&b[b.len() - self.tail_cap..]);
            self.pos = 0;
            return;
        }
        if self.tail.len() < self.tail_cap {
            let n = b.len().min(self.tail_cap - self.tail.len());
            self.tail.extend_from_slice(&b[..n]);
            b = &b[n..];
            if b.is_empty() {
                return;
            }
        }
        // Full ring: overwrite the oldest bytes, wrapping once at most.
        let first = b.len().min(self.tail_cap - self.pos);
        self.tail[self.pos..self.pos + first].copy_from_slice(&b[..first]);
        let rest = &b[first..];
        self.tail[..rest.len()].copy_from_slice(rest);
        self.pos = (self.pos + b.len()) % self.tail_cap;
    }

    /// The kept bytes in order, with a marker line where bytes were cut.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        let cut = self.cut();
        let marker = if cut > 0 {
            format!("\n[fabcheck: {cut} bytes of output cut here; --record keeps all]\n")
        } else {
            String::new()
        };
        let mut out = self.head;
        out.reserve_exact(marker.len() + self.tail.len());
        out.extend_from_slice(marker.as_bytes());
        out.extend_from_slice(&self.tail[self.pos..]);
        out.extend_from_slice(&self.tail[..self.pos]);
        out
    }

    /// As text; valid UTF-8 is not copied again.
    pub(crate) fn into_string(self) -> String {
        String::from_utf8(self.into_bytes())
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// A capped output read back: the text without the cut marker and without the two partial
/// lines either side of the cut (the head's last line and the tail's first end or start
/// mid-line), and how many bytes were cut; `None` when nothing was cut. A parser is given
/// this text, never the marker (it was read as a GPU name), and is told what was cut.
pub(crate) fn without_cut(text: &str) -> Option<(String, u64)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\n\[fabcheck: (\d+) bytes of output cut here; --record keeps all\]\n")
            .expect("valid regex")
    });
    let c = re.captures(text)?;
    let m = c.get(0)?;
    let cut = c[1].parse().ok()?;
    let head = &text[..m.start()];
    let tail = &text[m.end()..];
    let head = &head[..head.rfind('\n').map_or(0, |i| i + 1)];
    let tail = &tail[tail.find('\n').map_or(tail.len(), |i| i + 1)..];
    Some((format!("{head}{tail}"), cut))
}

/// Read a file into a bounded string (head + tail), e.g. a replayed `stdout_file`.
pub(crate) fn read_capped(r: &mut impl std::io::Read) -> std::io::Result<String> {
    let mut c = Capped::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => c.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(c.into_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capped::new(4, 4);
        c.push(b"abc");
        c.push(b"defg");
        assert_eq!(c.cut(), 0);
        assert_eq!(c.into_bytes(), b"abcdefg");
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_a_marker() {
        for chunk in [1usize, 3, 5, 7, 100] {
            let data: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
            let mut c = Capped::new(10, 8);
            for p in data.chunks(chunk) {
                c.push(p);
            }
            assert_eq!(c.total(), 1000);
            assert_eq!(c.cut(), 982, "chunk {chunk}");
            let s = c.into_string();
            assert!(s.starts_with(std::str::from_utf8(&data[..10]).unwrap()));
            assert!(
                s.ends_with(std::str::from_utf8(&data[992..]).unwrap()),
                "chunk {chunk}: {s}"
            );
            assert!(s.contains("982 bytes of output cut"), "{s}");
        }
    }

    #[test]
    fn memory_stays_bounded() {
        let mut c = Capped::new(1024, 1024);
        let chunk = vec![b'y'; 65536];
        for _ in 0..1000 {
            c.push(&chunk);
        }
        assert!(c.head.capacity() <= 4096 && c.tail.capacity() <= 4096);
        assert_eq!(c.total(), 65_536_000);
    }
}
