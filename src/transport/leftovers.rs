//! What a command leaves running on its node. Every command fabcheck starts carries two
//! environment markers, inherited by everything it starts (also what leaves its process group
//! with `setsid`): `FABCHECK_RUN=<run marker>` (the whole run, see [`super::run_marker`]) and
//! `FABCHECK_CMD=<command tag>` (this one command). When a command times out, its process group
//! is killed by `timeout` (ssh) or by fabcheck (local); what it detached from the group is
//! found here by its command tag, ended, and named in the timeout message.

use std::sync::atomic::{AtomicU64, Ordering};

/// Environment variable that carries the command tag (see [`command_tag`]).
pub(crate) const CMD_ENV: &str = "FABCHECK_CMD";

/// A tag of its own for every command of this run: `<run marker>-c<n>`.
pub(crate) fn command_tag() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}-c{}",
        super::run_marker(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// `marker` with its first character in brackets: as a grep/pgrep pattern it matches the
/// marker, but not the command line of the grep or shell that holds the pattern.
pub(crate) fn bracketed(marker: &str) -> String {
    let mut chars = marker.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphanumeric() => format!("[{c}]{}", chars.as_str()),
        _ => marker.to_string(),
    }
}

/// A POSIX sh function `envp` listing the processes whose environment holds exactly
/// `VAR=value`: one NUL-ended "line" per variable (-z), anchored, so that another run's or
/// command's longer marker that starts with this one does not match.
pub(crate) fn envp_function(var: &str, value: &str) -> String {
    let pattern = super::quote(&format!("^{var}={}$", bracketed(value)));
    format!("envp() {{ grep -lsaz -- {pattern} /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }}")
}

/// The node line that runs a POSIX sh SCRIPT whatever the login shell is (sh, bash, zsh,
/// fish): like every other node command, the login shell only sees `exec [sudo -n] sh -c
/// 'SCRIPT'` (`sudo`: for what a command run with sudo left, owned by root).
pub(crate) fn in_sh(script: &str, sudo: bool) -> String {
    let sudo = if sudo { "sudo -n " } else { "" };
    format!("exec {sudo}sh -c {}", super::quote(script))
}

/// Node-side script: end every process that carries command `tag` (TERM, KILL a second later
/// what is still there) and print `ended PID ARGS` of each, one a line, before ending it (the
/// prefix tells these lines from what a login shell prints when it starts).
pub(crate) fn end_command_script(tag: &str) -> String {
    format!(
        "{}; d=$(envp); [ -n \"$d\" ] || exit 0; \
         for p in $d; do echo \"ended $(ps -o pid=,args= -p \"$p\")\"; done; \
         kill -TERM $d 2>/dev/null; sleep 1; kill -KILL $(envp) 2>/dev/null; true",
        envp_function(CMD_ENV, tag)
    )
}

/// What the timeout message adds, from what [`end_command_script`] printed (or why it could
/// not be run): nothing when the command left nothing behind.
pub(crate) fn ended_note<E: std::fmt::Display>(printed: Result<String, E>) -> String {
    const SHOWN: usize = 5;
    match printed {
        Err(why) => format!(
            "; processes it started outside its process group may still run (they could not be looked for: {why})"
        ),
        Ok(text) => {
            let lines: Vec<String> = text
                .lines()
                .filter_map(|l| l.strip_prefix("ended "))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect();
            if lines.is_empty() {
                return String::new();
            }
            let mut shown: Vec<String> = lines.iter().take(SHOWN).map(|l| format!("`{l}`")).collect();
            if lines.len() > SHOWN {
                shown.push(format!("and {} more", lines.len() - SHOWN));
            }
            format!(
                "; it had left {} process(es) running outside its process group, ended too: {}",
                lines.len(),
                shown.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The line that ends a timed-out command's leftovers, run by each login shell as it is:
    /// the process carrying the command's tag (detached, TERM ignored) is named and ended; one
    /// of another command, whose tag starts with this one, is left alone.
    /// Whether `pid` has a child `sleep`.
    fn has_child_sleep(pid: u32) -> bool {
        Command::new("pgrep")
            .args(["-P", &pid.to_string(), "-x", "sleep"])
            .output()
            .is_ok_and(|o| !o.stdout.is_empty())
    }

    #[test]
    fn what_a_command_left_is_ended_and_named_in_every_login_shell() {
        for shell in ["sh", "bash", "zsh", "fish"] {
            if Command::new(shell).args(["-c", "true"]).status().is_err() {
                crate::util::skip::skip(&format!("the login shell {shell} is not installed"));
                continue;
            }
            let tag = command_tag();
            let spawn = |tag: &str| {
                Command::new("setsid")
                    .args(["sh", "-c", "trap '' TERM; sleep 39; :"])
                    .env(CMD_ENV, tag)
                    .spawn()
                    .unwrap()
            };
            let (mut mine, mut other) = (spawn(&tag), spawn(&format!("{tag}0")));
            // Both shells have set their trap once they have started their `sleep`: waited
            // for, not a pause.
            for p in [mine.id(), other.id()] {
                let t = std::time::Instant::now();
                while !has_child_sleep(p) {
                    assert!(
                        t.elapsed().as_secs() < 120,
                        "{shell}: the sleep never started"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
            let o = Command::new(shell)
                .arg("-c")
                .arg(in_sh(&end_command_script(&tag), false))
                .output()
                .unwrap();
            // Ended by a signal (a survivor would end on its own after 39 s, with status 0).
            use std::os::unix::process::ExitStatusExt;
            let gone = mine.wait().unwrap().signal().is_some();
            let kept = other.try_wait().unwrap().is_none();
            let _ = other.kill();
            let _ = other.wait();
            let note = ended_note(Ok::<_, String>(
                String::from_utf8_lossy(&o.stdout).into_owned(),
            ));
            assert!(o.status.success(), "{shell}: {o:?}");
            assert!(gone, "{shell}: the command's detached process survived");
            assert!(kept, "{shell}: another command's process was ended");
            let named = format!(
                "running outside its process group, ended too: `{} sh -c",
                mine.id()
            );
            assert!(note.contains(&named), "{shell}: {note}");
        }
    }

    #[test]
    fn command_tags_differ_and_carry_the_run_marker() {
        let (a, b) = (command_tag(), command_tag());
        assert_ne!(a, b);
        assert!(a.starts_with(super::super::run_marker()), "{a}");
    }

    #[test]
    fn the_note_names_what_was_ended_and_says_when_it_could_not_look() {
        assert_eq!(
            ended_note(Ok::<_, String>("Welcome to node 7\nended \n".into())),
            ""
        );
        let n = ended_note(Ok::<_, String>("Welcome\nended   4242 sleep   41\n".into()));
        assert!(
            n.contains("1 process(es)") && n.contains("`4242 sleep 41`"),
            "{n}"
        );
        let many: String = (0..7).map(|i| format!("ended {i} sleep 9\n")).collect();
        let n = ended_note(Ok::<_, String>(many));
        assert!(
            n.contains("7 process(es)") && n.contains("and 2 more"),
            "{n}"
        );
        assert!(!n.contains("`5 sleep 9`"), "{n}");
        let n = ended_note(Err::<String, _>("connection lost"));
        assert!(
            n.contains("may still run") && n.contains("connection lost"),
            "{n}"
        );
    }
}
