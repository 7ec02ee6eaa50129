//! `--record DIR`: every command with node, stdout, stderr, exit code and duration, one JSON
//! line per command in `DIR/<node>.jsonl` (full output, never capped: a stream larger than
//! [`INLINE`] goes to its own file as it arrives). `DIR` is reached by the one writer's rules
//! (`util::target`: never through another user's link); every file in it is created by this
//! run, exclusively and without following a link, mode 0600 — an existing transcript is never
//! appended to. `--replay DIR` reads it.

use super::{CmdOutput, CmdRequest, Stream, Transport, TransportError};
use crate::inventory::Node;
use crate::util::target;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
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
    /// `DIR`, opened once by the one writer's rules (`util::target`): every file of the
    /// recording is made in it by descriptor, so a link swapped in later changes nothing.
    folder: OwnedFd,
    /// Each node's transcript, created by this run (exclusively) at its first command.
    transcripts: Mutex<HashMap<String, File>>,
    seq: std::sync::atomic::AtomicU64,
}

/// Output up to this size is inlined in the transcript line; beyond it, the stream goes to
/// its own file (`NODE.N.stdout` / `.stderr`, `stdout_file` / `stderr_file` in the line).
pub(crate) const INLINE: usize = 64 * 1024;

/// Transcript files are private: raw node output.
const MODE: u32 = 0o600;

/// Check `--record DIR` before the run: `DIR` is reached by the one writer's rules (never
/// through another user's link), and no node's transcript `DIR/<node>.jsonl` exists yet — a
/// run records into files of its own and never appends to one it did not start (a link,
/// another user's file or an earlier recording there is an error now, not a gap later).
pub(crate) fn check_dir(dir: &Path, nodes: &[&str]) -> Result<(), UnsafeTranscript> {
    let refused = |why: String| UnsafeTranscript {
        dir: dir.to_path_buf(),
        why,
    };
    let folder = match target::open_folder(dir, false) {
        Ok((fd, _)) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
        Err(e) => return Err(refused(e.to_string())),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for n in nodes {
        let name = format!("{n}.jsonl");
        let entry = target::entry_at(&folder, OsStr::new(&name))
            .map_err(|e| refused(format!("{name}: {e}")))?;
        let Some((kind, uid)) = entry else {
            continue;
        };
        let why = if kind != "a regular file" {
            format!("is {kind}")
        } else if uid != me {
            format!("belongs to another user (uid {uid}; this run is uid {me})")
        } else {
            "exists (an earlier recording): a run records into new files and never appends \
             to a transcript it did not start"
                .to_string()
        };
        return Err(refused(format!(
            "{} {why}, and fabcheck does not write a transcript through it; remove it or \
             record into another folder",
            dir.join(&name).display()
        )));
    }
    Ok(())
}

/// `--record DIR` that fabcheck will not record into: its folder, or a node's transcript there.
#[derive(Debug, thiserror::Error)]
#[error("--record {}: {why}", dir.display())]
pub(crate) struct UnsafeTranscript {
    dir: PathBuf,
    why: String,
}

/// Makes a new output file: its file and its name in the recording's folder.
type Create<'a> = dyn Fn() -> std::io::Result<(File, String)> + 'a;

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

    fn write(&mut self, create: &Create, b: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.file.is_none() && self.inline.len() + b.len() <= INLINE {
            self.inline.extend_from_slice(b);
            return;
        }
        if self.file.is_none() {
            match create() {
                Ok((mut f, rel)) => {
                    if let Err(e) = f.write_all(&self.inline) {
                        self.failed = Some(format!("{rel}: {e}"));
                        return;
                    }
                    self.inline = Vec::new();
                    self.file = Some((f, rel));
                }
                Err(e) => {
                    self.failed = Some(e.to_string());
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
        let (folder, _) = target::open_folder(&dir, true)?;
        Ok(Recorder {
            inner,
            dir,
            folder,
            transcripts: Mutex::new(HashMap::new()),
            seq: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// A new output file of `node` (`NODE.N.EXT`), the first free `N`, created exclusively.
    fn create_output(&self, node: &str, ext: &str) -> std::io::Result<(File, String)> {
        loop {
            let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let rel = format!("{node}.{n}.{ext}");
            match target::create_new_at(&self.folder, OsStr::new(&rel), MODE) {
                Ok(f) => return Ok((f, rel)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(std::io::Error::new(e.kind(), format!("{rel}: {e}"))),
            }
        }
    }

    /// Append one line to `node`'s transcript, created by this run at its first line.
    fn append(&self, node: &str, entry: &Entry) -> std::io::Result<()> {
        let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        let mut files = self.transcripts.lock().unwrap_or_else(|p| p.into_inner());
        if !files.contains_key(node) {
            let name = format!("{node}.jsonl");
            let f = target::create_new_at(&self.folder, OsStr::new(&name), MODE).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    std::io::Error::new(
                        e.kind(),
                        format!(
                            "{name} appeared in the folder during the run; fabcheck never \
                             appends to a transcript it did not start"
                        ),
                    )
                } else {
                    std::io::Error::new(e.kind(), format!("{name}: {e}"))
                }
            })?;
            files.insert(node.to_string(), f);
        }
        let f = files.get_mut(node).expect("inserted above");
        writeln!(f, "{line}")
    }
}

impl Transport for Recorder {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let mut tees = [Tee::new(), Tee::new()];
        let out = || self.create_output(&node.name, "stdout");
        let err = || self.create_output(&node.name, "stderr");
        let res = self.inner.run_streaming(node, req, &mut |s, b| match s {
            Stream::Stdout => tees[0].write(&out, b),
            Stream::Stderr => tees[1].write(&err, b),
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
        let written = self.append(&node.name, &entry);
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

    fn entry() -> Entry {
        Entry {
            command: "true".into(),
            stdout: String::new(),
            stdout_file: None,
            stderr: String::new(),
            stderr_file: None,
            exit_code: Some(0),
            duration_ms: 0,
            error: None,
            after: None,
        }
    }

    #[test]
    fn transcripts_are_new_private_files_never_a_planted_link_or_an_earlier_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!(
            "fc-record-ut-{}-{:x}",
            std::process::id(),
            crate::util::random::random_u64()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("a.jsonl")).unwrap();
        std::fs::write(dir.join("b.jsonl"), "earlier\n").unwrap();
        let e = check_dir(&dir, &["a"]).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = check_dir(&dir, &["b"]).unwrap_err().to_string();
        assert!(e.contains("earlier recording"), "{e}");
        check_dir(&dir, &["c"]).unwrap();
        let r = Recorder::new(Arc::new(super::super::local::LocalTransport), dir.clone()).unwrap();
        for node in ["a", "b"] {
            let e = r.append(node, &entry()).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        }
        r.append("c", &entry()).unwrap();
        r.append("c", &entry()).unwrap();
        let text = std::fs::read_to_string(dir.join("c.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 2);
        let m = std::fs::metadata(dir.join("c.jsonl")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(dir.join("b.jsonl")).unwrap(),
            "earlier\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
