//! The one place that says which names and words may reach a remote shell. Everything that
//! primitives, the inventory or the transports put on a command line goes through here (and is
//! shell-quoted besides).

/// A name that reaches a remote command or a file name: node, interface, RDMA device, bond.
pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:@%".contains(c))
        && !s.starts_with('-')
}

/// An IP address, or a host name (no `%` scope or `@`).
pub(crate) fn valid_address(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok() || (valid_name(s) && !s.contains('%') && !s.contains('@'))
}

/// An environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn valid_env_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An environment option (`env: #{ NCCL_DEBUG: "INFO" }`), for
/// `#[serde(deserialize_with = "…")]`: every name valid, values as text, by name (a script map's order).
pub(crate) fn env_map<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, String)>, D::Error> {
    struct Env;
    impl<'de> serde::de::Visitor<'de> for Env {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map, e.g. env: #{ NCCL_DEBUG: \"INFO\" }")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = m.next_entry::<String, Text>()? {
                if !valid_env_name(&k) {
                    return Err(serde::de::Error::custom(format!(
                        "environment variable name `{k}` is not valid"
                    )));
                }
                out.push((k, v.0));
            }
            Ok(out)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
    }
    d.deserialize_map(Env)
}

/// Any scalar written as text (an environment value: `1`, `true`, `"INFO"`; a node given
/// as an option reads as its name).
pub(crate) struct Text(pub(crate) String);

impl<'de> serde::Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Text, E> {
                Ok(Text("()".to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A program path given by a script (`binary:` options).
pub(crate) fn valid_program(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./+".contains(c))
}

/// One argument word of `extra_args` / `args` options.
pub(crate) fn valid_arg_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.:,/+@".contains(c))
}

/// Characters that need no shell quoting.
pub(crate) fn shell_safe(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
}

/// `--set` keys and script parameter names.
pub(crate) fn valid_param_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// POSIX shell single-quoting.
pub(crate) fn quote(s: &str) -> String {
    if shell_safe(s) {
        return s.to_string();
    }
    // A backslash goes outside the quotes as `\\`: POSIX shells keep it literal inside single
    // quotes, but fish reads `\\` there as one backslash; `'…'\\'…'` means the same to both.
    let mut q = String::with_capacity(s.len() + 2);
    q.push('\'');
    for c in s.chars() {
        match c {
            '\'' => q.push_str("'\\''"),
            '\\' => q.push_str("'\\\\'"),
            c => q.push(c),
        }
    }
    q.push('\'');
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_shell_syntax_and_options() {
        assert!(valid_name("enP2p1s0f1np1"));
        assert!(!valid_name("-Efoo"));
        assert!(!valid_name("eth0;reboot"));
        assert!(!valid_name(""));
        assert!(
            valid_address("192.168.100.10")
                && valid_address("fe80::1")
                && valid_address("spark-01")
        );
        assert!(!valid_address("a@b") && !valid_address("x y"));
        assert!(
            valid_env_name("NCCL_IB_HCA")
                && !valid_env_name("")
                && !valid_env_name("1X")
                && !valid_env_name("A-B")
        );
        assert!(
            valid_program("/opt/nccl-tests/build/all_reduce_perf")
                && !valid_program("-x")
                && !valid_program("a b")
        );
        assert!(valid_arg_word("--report_gbits") && !valid_arg_word("$(id)"));
    }

    #[test]
    fn quoting_defuses_shell_syntax() {
        assert_eq!(quote("enp1s0f1np1"), "enp1s0f1np1");
        assert_eq!(quote("eth0; touch /tmp/x"), "'eth0; touch /tmp/x'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }

    /// Quoted words come back unchanged from every login shell a node may have (fish reads
    /// backslashes inside single quotes, POSIX shells do not).
    #[test]
    fn quoted_words_survive_sh_bash_zsh_and_fish() {
        let samples = [
            "plain",
            "it's",
            r"a\\b",
            r"tab\t and \n",
            r"end\",
            r"\'mixed'\\",
            "$HOME `x` \"q\" ;|&",
        ];
        for shell in ["sh", "bash", "zsh", "fish"] {
            for sample in samples {
                let line = format!("printf '%s' {}", quote(sample));
                let Ok(o) = std::process::Command::new(shell)
                    .arg("-c")
                    .arg(&line)
                    .output()
                else {
                    crate::util::skip::skip(&format!("the shell {shell} is not installed"));
                    break;
                };
                assert_eq!(
                    String::from_utf8_lossy(&o.stdout),
                    sample,
                    "{shell}: {line}"
                );
            }
        }
    }
}
