//! `--record DIR`: every command with node, stdout, stderr, exit code and duration, one JSON
//! line per command in `DIR/<node>.jsonl` (full output, never capped: a stream larger than
//! [`INLINE`] goes to its own file as it arrives). Files are created 0600 without following
//! links. `--replay DIR` reads it.

use super::{CmdOutput, CmdRequest, Stream, Transport, TransportError};
use crate::inventory::Node;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One recorded command, as stored in a transcript.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub command: String,
    #[serde(default)]
    pub stdout: String,
    /// Replay transcripts written by hand may point at a captured file instead of inlining it
    /// (relative to the transcript directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_file: Option<String>,
    #[serde(default)]
    pub stderr: String,
    /// Like `stdout_file`, for stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_file: Option<String>,
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub duration_ms: u64,
    /// An infrastructure error instead of an output (replayed as an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Replay only: this answer is given once the node has been sent a command starting with
    /// this text (`after = "ib_write_bw"`: the counters read after the load); until then the
    /// command's answers without `after` are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

pub(crate) struct Recorder {
    inner: Arc<dyn Transport>,
    dir: PathBuf,
    lock: Mutex<()>,
    seq: std::sync::atomic::AtomicU64,
}

/// Output up to this size is inlined in the transcript line; beyond it, the stream goes to
/// its own file (`NODE.N.stdout` / `.stderr`, `stdout_file` / `stderr_file` in the line).
pub(crate) const INLINE: usize = 64 * 1024;

/// Open a transcript file for writing without following a planted link: `O_NOFOLLOW`, mode
/// 0600, and (with `exclusive`) `O_EXCL`. An existing file must be a plain file of ours with
/// one link.
pub(crate) fn open_private(path: &Path, exclusive: bool) -> std::io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut o = std::fs::OpenOptions::new();
    o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    if exclusive {
        o.write(true).create_new(true);
    } else {
        o.append(true).create(true);
    }
    let f = o.open(path)?;
    let m = f.metadata()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.is_file() || m.nlink() != 1 || m.uid() != me {
        return Err(std::io::Error::other(format!(
            "{}: not a plain file of ours with one link; refusing to write to it",
            path.display()
        )));
    }
    Ok(f)
}

/// Check `--record DIR` before the run: each node's transcript `DIR/<node>.jsonl` is absent
/// or a plain file of this user with one link (a link, another user's file or anything else
/// there would drop that node's transcript: an error now, not a warning later).
pub(crate) fn check_dir(dir: &Path, nodes: &[&str]) -> Result<(), UnsafeTranscript> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for n in nodes {
        let p = dir.join(format!("{n}.jsonl"));
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let why = if m.file_type().is_symlink() {
            "is a symbolic link".to_string()
        } else if !m.is_file() {
            "is not a plain file".to_string()
        } else if m.uid() != me {
            format!(
                "belongs to another user (uid {}; this run is uid {me})",
                m.uid()
            )
        } else if m.nlink() != 1 {
            "has other hard links".to_string()
        } else {
            continue;
        };
        return Err(UnsafeTranscript {
            dir: dir.to_path_buf(),
            file: p,
            why,
        });
    }
    Ok(())
}

/// A node's transcript file under `--record DIR` that fabcheck will not write through.
#[derive(Debug, thiserror::Error)]
#[error("--record {}: {} {why}, and fabcheck does not write a transcript through it; remove it or record into another folder", dir.display(), file.display())]
pub(crate) struct UnsafeTranscript {
    dir: std::path::PathBuf,
    file: std::path::PathBuf,
    why: String,
}

/// One stream of one recorded command: kept in memory while small, in its own file (written
/// as it arrives) once it is not.
struct Tee {
    inline: Vec<u8>,
    file: Option<(File, String)>,
    failed: Option<String>,
}

impl Tee {
    fn new() -> Tee {
        Tee {
            inline: Vec::new(),
            file: None,
            failed: None,
        }
    }

    fn write(&mut self, dir: &Path, name: &dyn Fn() -> String, b: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.file.is_none() && self.inline.len() + b.len() <= INLINE {
            self.inline.extend_from_slice(b);
            return;
        }
        if self.file.is_none() {
            let rel = name();
            match open_private(&dir.join(&rel), true) {
                Ok(mut f) => {
                    if let Err(e) = f.write_all(&self.inline) {
                        self.failed = Some(format!("{rel}: {e}"));
                        return;
                    }
                    self.inline = Vec::new();
                    self.file = Some((f, rel));
                }
                Err(e) => {
                    self.failed = Some(format!("{rel}: {e}"));
                    return;
                }
            }
        }
        if let Some((f, rel)) = &mut self.file {
            if let Err(e) = f.write_all(b) {
                self.failed = Some(format!("{rel}: {e}"));
            }
        }
    }

    /// (inline text, file name)
    fn finish(self) -> (String, Option<String>) {
        match self.file {
            Some((_, rel)) => (String::new(), Some(rel)),
            None => (super::text(&self.inline), None),
        }
    }
}

impl Recorder {
    pub(crate) fn new(inner: Arc<dyn Transport>, dir: PathBuf) -> std::io::Result<Recorder> {
        std::fs::create_dir_all(&dir)?;
        Ok(Recorder {
            inner,
            dir,
            lock: Mutex::new(()),
            seq: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// A name for a new output file of `node`, not used yet in this directory.
    fn output_name(&self, node: &str, ext: &str) -> String {
        loop {
            let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let rel = format!("{node}.{n}.{ext}");
            if std::fs::symlink_metadata(self.dir.join(&rel)).is_err() {
                return rel;
            }
        }
    }
}

impl Transport for Recorder {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let mut tees = [Tee::new(), Tee::new()];
        let out_name = || self.output_name(&node.name, "stdout");
        let err_name = || self.output_name(&node.name, "stderr");
        let res = self.inner.run_streaming(node, req, &mut |s, b| match s {
            Stream::Stdout => tees[0].write(&self.dir, &out_name, b),
            Stream::Stderr => tees[1].write(&self.dir, &err_name, b),
        });
        let [to, te] = tees;
        let failed: Vec<String> = [&to.failed, &te.failed]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let (stdout, stdout_file) = to.finish();
        let (stderr, stderr_file) = te.finish();
        let mut entry = Entry {
            command: req.command.clone(),
            stdout,
            stdout_file,
            stderr,
            stderr_file,
            exit_code: None,
            duration_ms: 0,
            error: None,
            after: None,
        };
        match &res {
            Ok(o) => {
                entry.exit_code = o.exit_code;
                entry.duration_ms = o.duration.as_millis() as u64;
            }
            Err(e) => entry.error = Some(e.to_string()),
        }
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let path = self.dir.join(format!("{}.jsonl", node.name));
        let written = open_private(&path, false).and_then(|mut f| {
            let line = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
            writeln!(f, "{line}")
        });
        if let Some(e) = written
            .err()
            .map(|e| e.to_string())
            .or(failed.first().cloned())
        {
            // The transcript asked for is incomplete: an error of this command, not a warning.
            return Err(TransportError::Other {
                node: node.name.clone(),
                message: format!(
                    "--record {}: cannot write the transcript ({e}); the command ran, its \
                     record is missing",
                    self.dir.display()
                ),
            });
        }
        res
    }
    fn cleanup(&self) -> Vec<super::Leftover> {
        self.inner.cleanup()
    }
    fn cleanup_pending(&self) -> Vec<super::Leftover> {
        self.inner.cleanup_pending()
    }
    fn close(&self) {
        self.inner.close()
    }
    fn probe(&self, node: &Node) -> Result<(), TransportError> {
        self.inner.probe(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_files_do_not_follow_planted_links_and_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!(
            "fc-record-ut-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("a.jsonl")).unwrap();
        assert!(open_private(&dir.join("a.jsonl"), false).is_err());
        assert!(open_private(&dir.join("a.jsonl"), true).is_err());
        std::fs::hard_link(&victim, dir.join("b.jsonl")).unwrap();
        assert!(open_private(&dir.join("b.jsonl"), false).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let f = open_private(&dir.join("c.jsonl"), false).unwrap();
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
