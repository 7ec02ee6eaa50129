//! `--record DIR`: every command with node, stdout, stderr, exit code and duration, one JSON
//! line per command in `DIR/<node>.jsonl` (full output, never capped). `--replay DIR` reads it.

use super::{CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// One recorded command, as stored in a transcript.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub command: String,
    #[serde(default)]
    pub stdout: String,
    /// Replay transcripts written by hand may point at a captured file instead of inlining it
    /// (relative to the transcript directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_file: Option<String>,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub duration_ms: u64,
    /// An infrastructure error instead of an output (replayed as an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub struct Recorder {
    inner: Arc<dyn Transport>,
    dir: PathBuf,
    lock: Mutex<()>,
}

impl Recorder {
    pub fn new(inner: Arc<dyn Transport>, dir: PathBuf) -> std::io::Result<Recorder> {
        std::fs::create_dir_all(&dir)?;
        Ok(Recorder {
            inner,
            dir,
            lock: Mutex::new(()),
        })
    }
}

impl Transport for Recorder {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let res = self.inner.run(node, req);
        let entry = match &res {
            Ok(o) => Entry {
                command: req.command.clone(),
                stdout: o.stdout.clone(),
                stdout_file: None,
                stderr: o.stderr.clone(),
                exit_code: o.exit_code,
                duration_ms: o.duration.as_millis() as u64,
                error: None,
            },
            Err(e) => Entry {
                command: req.command.clone(),
                stdout: String::new(),
                stdout_file: None,
                stderr: String::new(),
                exit_code: None,
                duration_ms: 0,
                error: Some(e.to_string()),
            },
        };
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let path = self.dir.join(format!("{}.jsonl", node.name));
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            if let Ok(line) = serde_json::to_string(&entry) {
                let _ = writeln!(f, "{line}");
            }
        }
        res
    }
    fn cleanup(&self) {
        self.inner.cleanup()
    }
    fn close(&self) {
        self.inner.close()
    }
    fn probe(&self, node: &Node) -> Result<(), TransportError> {
        self.inner.probe(node)
    }
}
