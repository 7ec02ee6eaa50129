//! The short commands fabcheck itself sends a node besides the script's (the timeout's
//! clean-up of what a command left, the interrupt's node clean-up): bounded in time and in
//! bytes like every other command. They print a few lines; a login shell that floods instead
//! (a `~/.bashrc` that never reaches the command) is stopped at [`MAX_BYTES`] and told as such,
//! never read on for the whole time allowed (which used to be GBs in memory).

use std::time::Duration;

/// The most a short command's two streams may bring together: the login banner fabcheck sets
/// aside before any command (see [`crate::transport::preamble::MAX_PREAMBLE`]) and the
/// command's own few lines.
pub(super) const MAX_BYTES: usize = crate::transport::preamble::MAX_PREAMBLE + 64 * 1024;

/// Why a short command gave no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unanswered {
    #[error("the node did not answer within {}", crate::transport::human(*.0))]
    NoAnswer(Duration),
    /// The node printed more than [`MAX_BYTES`] (its login shell floods): reading stopped.
    #[error(
        "the node printed over {} without ending the command (a login shell that floods: its \
         start-up files, ~/.bashrc or /etc/profile.d, print without end), so fabcheck stopped \
         reading",
        crate::util::fmt::human_bytes(*.0 as f64)
    )]
    Flooded(usize),
    /// The ssh error, with its causes.
    #[error("{0}")]
    Ssh(String),
}

/// What a short command printed on stdout (stderr is counted, not kept) and whether it ended
/// well.
pub(super) struct Answer {
    pub stdout: Vec<u8>,
    pub success: bool,
}

/// Run `line` over `session`: its output read until both streams end, at most [`MAX_BYTES`]
/// in all, then its exit status; the whole within `within`.
pub(super) async fn run(
    session: &openssh::Session,
    line: &str,
    within: Duration,
) -> Result<Answer, Unanswered> {
    tokio::time::timeout(within, read(session, line))
        .await
        .unwrap_or(Err(Unanswered::NoAnswer(within)))
}

async fn read(session: &openssh::Session, line: &str) -> Result<Answer, Unanswered> {
    use tokio::io::AsyncReadExt;
    let ssh = |e: openssh::Error| Unanswered::Ssh(super::connect::error_chain(&e));
    let mut cmd = session.raw_command(line);
    cmd.stdin(openssh::Stdio::null())
        .stdout(openssh::Stdio::piped())
        .stderr(openssh::Stdio::piped());
    let mut child = cmd.spawn().await.map_err(ssh)?;
    let mut out = child.stdout().take();
    let mut err = child.stderr().take();
    let (mut stdout, mut total) = (Vec::new(), 0usize);
    let (mut bo, mut be) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    // Both streams to their end before the exit status is asked for (native-mux stops a
    // session's output once its exit is taken: see exec.rs).
    while out.is_some() || err.is_some() {
        tokio::select! {
            r = async { out.as_mut().expect("open").read(&mut bo).await }, if out.is_some() => match r {
                Ok(n) if n > 0 => {
                    total += n;
                    stdout.extend_from_slice(&bo[..n.min(MAX_BYTES.saturating_sub(stdout.len()))]);
                }
                _ => out = None,
            },
            r = async { err.as_mut().expect("open").read(&mut be).await }, if err.is_some() => match r {
                Ok(n) if n > 0 => total += n,
                _ => err = None,
            },
        }
        if total > MAX_BYTES {
            return Err(Unanswered::Flooded(total));
        }
    }
    let status = child.wait().await.map_err(ssh)?;
    Ok(Answer {
        stdout,
        success: status.success(),
    })
}
