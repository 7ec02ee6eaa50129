//! `--replay DIR` / `transport = "replay"`: answer commands from recorded transcripts
//! (`DIR/<node>.jsonl` from `--record`, or hand-built `DIR/<node>.toml` with `[[command]]`
//! tables). The same command recorded several times is answered in order (the last answer
//! repeats). An answer with `after = "PREFIX"` is given instead once the node has been sent a
//! command starting with PREFIX (the last such answer whose PREFIX was sent): counters read
//! after a load test differ from those read before, however often the script reads them.
//! An unknown command is an error naming the nearest recorded commands.
//!
//! `--scenario NAME` overlays a fault scenario on the transcripts: `DIR/scenarios/NAME/<node>.toml`
//! answers replace the healthy answers of the same commands (paths of captured files stay
//! relative to DIR), except that a command answered there only with `after` answers keeps its
//! healthy answers for the reads before (a fault that appears mid-run, e.g. after step 5's
//! restore); `DIR/scenarios/NAME/scenario.toml` describes the fault.

use super::recorder::Entry;
use super::{CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
struct NodeScript {
    entries: HashMap<String, Vec<Entry>>,
    served: HashMap<String, usize>,
}

pub(crate) struct ReplayTransport {
    /// Transcript dir per node (CLI `--replay` overrides the inventory's `replay_dir`).
    dir_override: Option<PathBuf>,
    /// `--scenario NAME`: the overlay under `<dir>/scenarios/NAME/`.
    scenario: Option<String>,
    loaded: Mutex<HashMap<String, Result<NodeScript, TranscriptError>>>,
}

#[derive(serde::Deserialize)]
struct TomlTranscript {
    #[serde(default)]
    command: Vec<Entry>,
}

/// A fault scenario's description (`scenarios/NAME/scenario.toml`); the rest of the file (what
/// the tests expect) is not the transport's business.
#[derive(serde::Deserialize)]
pub(crate) struct ScenarioInfo {
    pub description: String,
}

/// Why a transcript (or a scenario) could not be read: each names the file and what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum TranscriptError {
    #[error(
        "--scenario {name}: no such scenario in {dir} (known: {known}); see `scenarios/` there"
    )]
    NoScenario {
        name: String,
        dir: String,
        known: String,
    },
    #[error("{file}: {message}")]
    BadScenario { file: String, message: String },
    #[error("{path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("{path}: bad transcript: {message}")]
    BadToml { path: String, message: String },
    #[error("{path}:{line}: bad transcript line: {message}")]
    BadLine {
        path: String,
        line: usize,
        message: String,
    },
    #[error("no transcript for node `{node}` in {dir} (expected {node}.jsonl or {node}.toml)")]
    NoTranscript { node: String, dir: String },
    #[error("transcript for `{node}` points at `{file}`, outside the transcript directory {dir}")]
    Outside {
        node: String,
        file: String,
        dir: String,
    },
    #[error("transcript for `{node}` points at {path}: {message}")]
    Target {
        node: String,
        path: String,
        message: String,
    },
}

/// The directory of scenario `name` under transcript directory `dir`.
pub(crate) fn scenario_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join("scenarios").join(name)
}

/// Read scenario `name` of transcript directory `dir`; an unknown name is an error listing the
/// scenarios there.
pub(crate) fn scenario_info(dir: &Path, name: &str) -> Result<ScenarioInfo, TranscriptError> {
    let ok_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let file = scenario_dir(dir, name).join("scenario.toml");
    let text = match crate::util::fs::read_regular(&file) {
        Ok(t) if ok_name => t,
        _ => {
            return Err(TranscriptError::NoScenario {
                name: name.to_string(),
                dir: dir.join("scenarios").display().to_string(),
                known: scenario_names(dir).join(", "),
            })
        }
    };
    toml::from_str(&text).map_err(|e| TranscriptError::BadScenario {
        file: file.display().to_string(),
        message: crate::util::fmt::toml_message(&e),
    })
}

/// The scenario names under `dir/scenarios/`, sorted.
pub(crate) fn scenario_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().join("scenario.toml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn read_toml(path: &Path) -> Result<Vec<Entry>, TranscriptError> {
    let text = crate::util::fs::read_regular(path).map_err(|e| TranscriptError::Unreadable {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let t: TomlTranscript = toml::from_str(&text).map_err(|e| TranscriptError::BadToml {
        path: path.display().to_string(),
        message: crate::util::fmt::toml_message(&e),
    })?;
    Ok(t.command)
}

/// Load `node`'s transcript from `dir`, with scenario `scenario`'s answers replacing the
/// healthy answers of the same commands; a scenario whose answers to a command are all
/// `after` answers keeps the healthy ones for the reads before (a fault that appears mid-run).
fn load(dir: &Path, node: &str, scenario: Option<&str>) -> Result<NodeScript, TranscriptError> {
    let mut s = load_base(dir, node)?;
    let Some(name) = scenario else { return Ok(s) };
    let overlay = scenario_dir(dir, name).join(format!("{node}.toml"));
    if !overlay.exists() {
        return Ok(s);
    }
    let mut replaced: HashMap<String, Vec<Entry>> = HashMap::new();
    for e in resolve(dir, node, read_toml(&overlay)?)? {
        replaced.entry(e.command.clone()).or_default().push(e);
    }
    for (command, answers) in replaced {
        let list = s.entries.entry(command).or_default();
        if answers.iter().any(|e| e.after.is_none()) {
            // a plain answer replaces the healthy ones
            *list = answers;
        } else {
            // only `after` answers: the healthy ones still answer before the prefix is sent
            list.extend(answers);
        }
    }
    Ok(s)
}

/// Inline the captured files the entries point at (confined to `dir`).
fn resolve(dir: &Path, node: &str, entries: Vec<Entry>) -> Result<Vec<Entry>, TranscriptError> {
    let mut out = Vec::with_capacity(entries.len());
    for mut e in entries {
        if let Some(f) = &e.stdout_file {
            e.stdout = read_confined(dir, node, f)?;
        }
        if let Some(f) = &e.stderr_file {
            e.stderr = read_confined(dir, node, f)?;
        }
        out.push(e);
    }
    Ok(out)
}

fn load_base(dir: &Path, node: &str) -> Result<NodeScript, TranscriptError> {
    let mut s = NodeScript::default();
    let jsonl = dir.join(format!("{node}.jsonl"));
    let toml_path = dir.join(format!("{node}.toml"));
    let mut entries: Vec<Entry> = Vec::new();
    if jsonl.exists() {
        let text =
            crate::util::fs::read_regular(&jsonl).map_err(|e| TranscriptError::Unreadable {
                path: format!("transcript {}", jsonl.display()),
                message: e.to_string(),
            })?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            entries.push(
                serde_json::from_str(line).map_err(|e| TranscriptError::BadLine {
                    path: jsonl.display().to_string(),
                    line: i + 1,
                    message: e.to_string(),
                })?,
            );
        }
    } else if toml_path.exists() {
        entries = read_toml(&toml_path)?;
    } else {
        return Err(TranscriptError::NoTranscript {
            node: node.to_string(),
            dir: dir.display().to_string(),
        });
    }
    for e in resolve(dir, node, entries)? {
        s.entries.entry(e.command.clone()).or_default().push(e);
    }
    Ok(s)
}

/// Read a captured file a transcript points at: a relative path inside the transcript
/// directory (no `..`, not absolute, no symlink leading out of it), bounded like live output.
pub(crate) fn read_confined(dir: &Path, node: &str, file: &str) -> Result<String, TranscriptError> {
    use std::path::Component;
    let rel = Path::new(file);
    let outside = || TranscriptError::Outside {
        node: node.to_string(),
        file: file.to_string(),
        dir: dir.display().to_string(),
    };
    let target = |p: &Path, e: std::io::Error| TranscriptError::Target {
        node: node.to_string(),
        path: p.display().to_string(),
        message: e.to_string(),
    };
    if file.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(outside());
    }
    let p = dir.join(rel);
    let real_dir = std::fs::canonicalize(dir).map_err(|e| TranscriptError::Unreadable {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let real = std::fs::canonicalize(&p).map_err(|e| target(&p, e))?;
    if !real.starts_with(&real_dir) {
        return Err(outside());
    }
    let mut f = crate::util::fs::open_regular(&real).map_err(|e| target(&p, e))?;
    super::capture::read_capped(&mut f).map_err(|e| target(&p, e))
}

use crate::util::suggest::edit_distance as distance;

/// The answer to `command` now: the last `after` answer whose prefix the node has been sent,
/// else the N-th answer without `after` (N = how often it was asked; the last one repeats).
fn pick<'a>(list: &'a [Entry], served: &mut HashMap<String, usize>, command: &str) -> &'a Entry {
    let sent = |p: &str| served.keys().any(|c| c.starts_with(p));
    let late = list
        .iter()
        .rev()
        .find(|e| e.after.as_deref().is_some_and(sent));
    let plain: Vec<&Entry> = list.iter().filter(|e| e.after.is_none()).collect();
    let n = served.entry(command.to_string()).or_insert(0);
    let e = match late {
        Some(e) => e,
        None if plain.is_empty() => &list[0],
        None => plain[(*n).min(plain.len() - 1)],
    };
    *n += 1;
    e
}

impl ReplayTransport {
    pub(crate) fn new(dir_override: Option<PathBuf>, scenario: Option<String>) -> ReplayTransport {
        ReplayTransport {
            dir_override,
            scenario,
            loaded: Mutex::new(HashMap::new()),
        }
    }
}

impl Transport for ReplayTransport {
    fn run(&self, node: &Node, req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        let other = |message: String| TransportError::Other {
            node: node.name.clone(),
            message,
        };
        let dir = self
            .dir_override
            .clone()
            .or_else(|| node.replay_dir.clone())
            .ok_or_else(|| other("replay transport without a transcript directory".into()))?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let script = loaded
            .entry(node.name.clone())
            .or_insert_with(|| load(&dir, &node.name, self.scenario.as_deref()));
        let script = script.as_mut().map_err(|e| other(e.to_string()))?;
        let Some(list) = script.entries.get(&req.command) else {
            let mut near: Vec<(usize, &String)> = script
                .entries
                .keys()
                .map(|k| (distance(k, &req.command), k))
                .collect();
            near.sort();
            let names: Vec<String> = near.iter().take(3).map(|(_, k)| format!("`{k}`")).collect();
            return Err(other(format!(
                "replay: `{}` was not recorded for this node; nearest recorded: {}",
                req.command,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )));
        };
        let e = pick(list, &mut script.served, &req.command);
        if let Some(err) = &e.error {
            return Err(other(format!("(replayed) {err}")));
        }
        Ok(CmdOutput {
            notices: Vec::new(),
            stdout: e.stdout.clone(),
            stderr: e.stderr.clone(),
            exit_code: e.exit_code.or(Some(0)),
            duration: Duration::from_millis(e.duration_ms),
        })
    }
    fn probe(&self, _node: &Node) -> Result<(), TransportError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn captured_files_are_confined_to_the_transcript_directory() {
        let base = std::env::temp_dir().join(format!(
            "fc-replay-ut-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let dir = base.join("t");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(base.join("secret"), "root only").unwrap();
        std::fs::write(dir.join("ok.txt"), "fine").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), dir.join("link")).unwrap();
        let secret = base.join("secret").display().to_string();
        for bad in ["../secret", secret.as_str(), "link", "a/../../secret"] {
            let line = serde_json::json!({"command": "cat x", "stdout_file": bad}).to_string();
            std::fs::write(dir.join("n.jsonl"), line).unwrap();
            let e = super::load(&dir, "n", None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains("outside the transcript directory") && e.contains(bad),
                "{bad}: {e}"
            );
        }
        let line = serde_json::json!({"command": "cat x", "stdout_file": "ok.txt"}).to_string();
        std::fs::write(dir.join("n.jsonl"), line).unwrap();
        let s = super::load(&dir, "n", None)
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(s.entries["cat x"][0].stdout, "fine");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_scenario_of_only_after_answers_keeps_the_healthy_answers_before() {
        let base = std::env::temp_dir().join(format!("fc-replay-after-{}", std::process::id()));
        let over = base.join("scenarios/late");
        std::fs::create_dir_all(&over).unwrap();
        let line =
            |c: &str, out: &str| serde_json::json!({"command": c, "stdout": out}).to_string();
        std::fs::write(
            base.join("n.jsonl"),
            [line("ip -j addr", "healthy"), line("uname -r", "6.8")].join("\n"),
        )
        .unwrap();
        let toml =
            "[[command]]\ncommand = \"ip -j addr\"\nstdout = \"lost\"\nafter = \"restore\"\n\n\
                    [[command]]\ncommand = \"uname -r\"\nstdout = \"6.11\"\n";
        std::fs::write(over.join("n.toml"), toml).unwrap();
        let s = super::load(&base, "n", Some("late")).unwrap();
        let mut served = std::collections::HashMap::new();
        let addr = &s.entries["ip -j addr"];
        assert_eq!(
            super::pick(addr, &mut served, "ip -j addr").stdout,
            "healthy"
        );
        served.insert("restore now".into(), 1);
        assert_eq!(super::pick(addr, &mut served, "ip -j addr").stdout, "lost");
        // a plain scenario answer replaces the healthy one
        assert_eq!(s.entries["uname -r"].len(), 1);
        assert_eq!(s.entries["uname -r"][0].stdout, "6.11");
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn an_after_answer_is_given_once_its_prefix_was_sent() {
        let e = |out: &str, after: Option<&str>| super::Entry {
            command: "ethtool -S x".into(),
            stdout: out.into(),
            stdout_file: None,
            stderr: String::new(),
            stderr_file: None,
            exit_code: Some(0),
            duration_ms: 0,
            error: None,
            after: after.map(str::to_string),
        };
        let list = vec![
            e("first", None),
            e("second", None),
            e("late", Some("ib_write_bw")),
        ];
        let mut served = std::collections::HashMap::new();
        let ask = |s: &mut std::collections::HashMap<String, usize>| {
            super::pick(&list, s, "ethtool -S x").stdout.clone()
        };
        assert_eq!(ask(&mut served), "first");
        assert_eq!(ask(&mut served), "second");
        assert_eq!(ask(&mut served), "second");
        served.insert("ib_write_bw -d rocep1s0f1 -x 3".into(), 1);
        assert_eq!(ask(&mut served), "late");
        assert_eq!(ask(&mut served), "late");
    }

    #[test]
    fn nearest_commands_rank_by_edit_distance() {
        assert!(
            super::distance("ethtool fab0", "ethtool fab1")
                < super::distance("ethtool fab0", "ip -j addr")
        );
    }
}
