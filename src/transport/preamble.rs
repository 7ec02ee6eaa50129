//! What a node's login shell prints before fabcheck's command runs is not the command's
//! output: a `~/.bashrc` that echoes a banner, `module load` chatter on stderr, `set -x`
//! traces. sshd runs every command through the user's shell, so that text would land in
//! front of `ethtool`'s or `ip -j`'s output and break the parse (or worse, be parsed).
//! The wrapped command line (see [`super::wrap_command`]) first prints a start line on both
//! streams; [`Preamble`] sets aside everything up to and including it. A stream where the
//! start line never comes (a `ForceCommand`, a shell that did not run the line) is passed
//! through whole: nothing is ever dropped without the start line.

/// Bytes held back while looking for the start line; past that the stream is passed through
/// whole (nothing is dropped). Generous: a login banner, an MOTD and `module load` chatter of
/// a few hundred KiB still leave the command's output clean; bounded, so that a `ForceCommand`
/// that floods its stdout costs at most this much memory per stream before it streams.
pub const MAX_PREAMBLE: usize = 1024 * 1024;

/// The start line for a run marker, as printed on the node (without its newline). The
/// command line prints it from two words (see [`start_words`]), so that the line itself never
/// appears in the command line, nor in a `set -x` trace of it.
pub fn start_line(marker: &str) -> String {
    let (a, b) = start_words(marker);
    format!("{a}{b}")
}

/// The two words that `printf '%s%s\n'` joins into the start line.
pub fn start_words(marker: &str) -> (String, String) {
    let cut = marker.len().min(4);
    (
        marker[..cut].to_string(),
        format!("{}:start", &marker[cut..]),
    )
}

/// One stream's filter.
pub struct Preamble {
    needle: Vec<u8>,
    held: Vec<u8>,
    passing: bool,
    found: bool,
    set_aside: Vec<u8>,
    /// How much of `held` is already known not to contain the start line (so every byte is
    /// searched about once, however small the chunks).
    searched: usize,
}

impl Preamble {
    pub fn new(start_line: &str) -> Preamble {
        let mut needle = start_line.as_bytes().to_vec();
        needle.push(b'\n');
        Preamble {
            needle,
            held: Vec::new(),
            passing: false,
            found: false,
            set_aside: Vec::new(),
            searched: 0,
        }
    }

    /// Feed a chunk as it arrives; returns what is the command's output (possibly nothing
    /// yet, while the start line has not come).
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
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
            self.set_aside = std::mem::take(&mut self.held);
            return rest;
        }
        if self.held.len() > MAX_PREAMBLE {
            self.passing = true;
            return std::mem::take(&mut self.held);
        }
        Vec::new()
    }

    /// At the end of the stream: what is still held back (the start line never came, so it
    /// is all output).
    pub fn finish(&mut self) -> Vec<u8> {
        self.passing = true;
        std::mem::take(&mut self.held)
    }

    /// Whether the start line came.
    pub fn started(&self) -> bool {
        self.found
    }

    /// What the shell printed before the start line (empty when nothing, or no start line).
    pub fn set_aside(&self) -> &[u8] {
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
    fn a_huge_preamble_gives_up_and_passes_everything() {
        let big = vec![b'x'; MAX_PREAMBLE + 10];
        let (out, aside) = feed(&[&big, b"fabcheck-42-abc:start\nlate\n"]);
        assert_eq!(out.len(), big.len() + "fabcheck-42-abc:start\nlate\n".len());
        assert!(aside.is_empty());
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
