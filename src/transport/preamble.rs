//! What a node's login shell prints before fabcheck's command runs is not the command's
//! output: a `~/.bashrc` that echoes a banner, `module load` chatter on stderr, `set -x`
//! traces. sshd runs every command through the user's shell, so that text would land in
//! front of `ethtool`'s or `ip -j`'s output and break the parse (or worse, be parsed).
//! The wrapped command line (see [`super::wrap_command`]) first prints a start line on both
//! streams; [`Preamble`] sets aside everything up to and including it. A stream where the
//! start line never comes (a `ForceCommand`, a shell that did not run the line) is passed
//! through whole when it is small; nothing is ever dropped without the start line.
//!
//! The search is bounded in time, not in bytes: it goes on past [`MAX_PREAMBLE`] (a 1.1 MB
//! banner from `.bashrc` is set aside like a short one) until the start line comes, the
//! stream ends or the command's timeout ends the command. Memory stays bounded: past
//! [`MAX_PREAMBLE`] only the first [`MAX_PREAMBLE`] bytes are kept (for the notice) and the
//! rest is counted. A stream that printed more than that and never the start line is
//! [`Preamble::flooded`]: the transport makes it an error; the banner never reaches a parser.

/// Bytes of a preamble kept (for the notice that names it) and, when no start line comes,
/// passed through as output; past that, a stream without the start line is an error.
pub(crate) const MAX_PREAMBLE: usize = 1024 * 1024;

/// The start line for a run marker, as printed on the node (without its newline). The
/// command line prints it from two words (see [`start_words`]), so that the line itself never
/// appears in the command line, nor in a `set -x` trace of it.
pub(crate) fn start_line(marker: &str) -> String {
    let (a, b) = start_words(marker);
    format!("{a}{b}")
}

/// The two words that `printf '%s%s\n'` joins into the start line.
pub(crate) fn start_words(marker: &str) -> (String, String) {
    let cut = marker.len().min(4);
    (
        marker[..cut].to_string(),
        format!("{}:start", &marker[cut..]),
    )
}

/// One stream's filter.
pub(crate) struct Preamble {
    needle: Vec<u8>,
    held: Vec<u8>,
    passing: bool,
    found: bool,
    set_aside: Vec<u8>,
    /// How much of `held` is already known not to contain the start line (so every byte is
    /// searched about once, however small the chunks).
    searched: usize,
    /// Bytes of the preamble beyond [`MAX_PREAMBLE`] that were searched and let go.
    dropped: u64,
}

impl Preamble {
    pub(crate) fn new(start_line: &str) -> Preamble {
        let mut needle = start_line.as_bytes().to_vec();
        needle.push(b'\n');
        Preamble {
            needle,
            held: Vec::new(),
            passing: false,
            found: false,
            set_aside: Vec::new(),
            searched: 0,
            dropped: 0,
        }
    }

    /// Feed a chunk as it arrives; returns what is the command's output (possibly nothing
    /// yet, while the start line has not come).
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.passing {
            return chunk.to_vec();
        }
        self.held.extend_from_slice(chunk);
        // The start line may straddle the previous chunk's end: search from just before it.
        let from = self.searched.saturating_sub(self.needle.len() - 1);
        self.searched = self.held.len();
        if let Some(i) = find(&self.held[from..], &self.needle).map(|i| i + from) {
            self.passing = true;
            self.found = true;
            let rest = self.held.split_off(i + self.needle.len());
            self.held.truncate(i);
            let held = std::mem::take(&mut self.held);
            self.keep_aside(&held);
            return rest;
        }
        if self.held.len() > MAX_PREAMBLE {
            // Keep searching; keep only what could be the start of a straddling start line.
            let keep = self.needle.len() - 1;
            let tail = self.held.split_off(self.held.len() - keep);
            let head = std::mem::replace(&mut self.held, tail);
            self.keep_aside(&head);
            self.searched = self.held.len();
        }
        Vec::new()
    }

    /// Keep `bytes` of the preamble, up to [`MAX_PREAMBLE`] in all; count the rest.
    fn keep_aside(&mut self, bytes: &[u8]) {
        let room = MAX_PREAMBLE
            .saturating_sub(self.set_aside.len())
            .min(bytes.len());
        self.set_aside.extend_from_slice(&bytes[..room]);
        self.dropped += (bytes.len() - room) as u64;
    }

    /// At the end of the stream: what is still held back (the start line never came, so it
    /// is all output — unless the stream was [`Self::flooded`]).
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.passing = true;
        if self.flooded().is_some() {
            // What was let go cannot be handed on whole; the transport reports it instead.
            self.dropped += self.held.len() as u64;
            self.held.clear();
        }
        std::mem::take(&mut self.held)
    }

    /// `Some(bytes)`: the stream printed more than [`MAX_PREAMBLE`] bytes and never the start
    /// line, so its output cannot be told from what the login shell printed.
    pub(crate) fn flooded(&self) -> Option<u64> {
        (!self.found && !self.set_aside.is_empty())
            .then(|| self.set_aside.len() as u64 + self.dropped + self.held.len() as u64)
    }

    /// Whether the start line came.
    pub(crate) fn started(&self) -> bool {
        self.found
    }

    /// What the shell printed before the start line (empty when nothing, or no start line).
    pub(crate) fn set_aside(&self) -> &[u8] {
        &self.set_aside
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &str = "fabcheck-42-abc";

    fn feed(chunks: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let mut p = Preamble::new(&start_line(M));
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c));
        }
        out.extend(p.finish());
        (out, p.set_aside().to_vec())
    }

    #[test]
    fn banner_before_the_start_line_is_set_aside() {
        let (out, aside) = feed(&[b"Welcome to spark-01\nfabcheck-42-abc:start\n{\"a\":1}\n"]);
        assert_eq!(out, b"{\"a\":1}\n");
        assert_eq!(aside, b"Welcome to spark-01\n");
        let mut p = Preamble::new(&start_line(M));
        assert!(!p.started());
        p.push(b"fabcheck-42-abc:start\n");
        assert!(p.started(), "a start line with nothing before it");
    }

    #[test]
    fn start_line_split_across_chunks_and_banner_without_newline() {
        let (out, aside) = feed(&[
            b"no newline",
            b"fabch",
            b"eck-42-abc:st",
            b"art\nout",
            b"put\n",
        ]);
        assert_eq!(out, b"output\n");
        assert_eq!(aside, b"no newline");
    }

    #[test]
    fn without_a_start_line_nothing_is_dropped() {
        let (out, aside) = feed(&[b"forced command output\n", b"more\n"]);
        assert_eq!(out, b"forced command output\nmore\n");
        assert!(aside.is_empty());
        // A different run's marker is not ours.
        let (out, _) = feed(&[b"fabcheck-43-abc:start\nx\n"]);
        assert_eq!(out, b"fabcheck-43-abc:start\nx\n");
    }

    #[test]
    fn a_banner_over_64_kib_is_still_set_aside() {
        // A long MOTD (or chatty `module load`) of 100 KiB, in one piece and in small chunks:
        // it used to turn the filter off at 64 KiB and land in front of the command's output.
        let mut banner = Vec::new();
        while banner.len() < 100 * 1024 {
            banner.extend_from_slice(b"Welcome to spark-01; maintenance window tonight\n");
        }
        let start = b"fabcheck-42-abc:start\n{\"a\":1}\n";
        let (out, aside) = feed(&[&banner, start]);
        assert_eq!(out, b"{\"a\":1}\n");
        assert_eq!(aside, banner);
        let mut stream = banner.clone();
        stream.extend_from_slice(start);
        let chunks: Vec<&[u8]> = stream.chunks(7).collect();
        let (out, aside) = feed(&chunks);
        assert_eq!(out, b"{\"a\":1}\n");
        assert_eq!(aside, banner);
    }

    #[test]
    fn a_banner_over_1_mib_is_set_aside_and_a_flood_without_start_line_is_flooded() {
        // 1.1 MB of banner, in one piece and in 4 KiB chunks: the output is only the command's.
        let big = vec![b'x'; 1_100_000];
        let mut stream = big.clone();
        stream.extend_from_slice(b"fabcheck-42-abc:start\nhello\n");
        for size in [stream.len(), 4096, 7] {
            let mut p = Preamble::new(&start_line(M));
            let mut out = Vec::new();
            for c in stream.chunks(size) {
                out.extend(p.push(c));
            }
            out.extend(p.finish());
            assert_eq!(out, b"hello\n", "chunks of {size}");
            assert!(p.flooded().is_none());
            assert_eq!(
                p.set_aside().len(),
                MAX_PREAMBLE,
                "kept for the notice, bounded"
            );
        }
        // No start line after more than MAX_PREAMBLE: flooded, nothing handed on as output.
        let mut p = Preamble::new(&start_line(M));
        let mut out = p.push(&big);
        out.extend(p.finish());
        assert!(out.is_empty());
        assert_eq!(p.flooded(), Some(big.len() as u64));
    }

    #[test]
    fn the_start_line_is_not_in_the_words_that_print_it() {
        let (a, b) = start_words(M);
        let line = start_line(M);
        assert_eq!(format!("{a}{b}"), line);
        let printed = format!("printf '%s%s\\n' {a} {b}");
        assert!(!printed.contains(&line), "{printed}");
        // Only the first occurrence ends the preamble: output that repeats it is kept.
        let (out, _) = feed(&[b"fabcheck-42-abc:start\nfabcheck-42-abc:start\n"]);
        assert_eq!(out, b"fabcheck-42-abc:start\n");
    }
}
