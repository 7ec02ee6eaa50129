//! Issue 50 item 3: every parser's output is linear in its input. Each parser is fed its own
//! real sample grown towards 1 MiB in the ways that made `nvidia-smi topo -m` quadratic (the
//! whole sample repeated, every line repeated, the header kept once and the body repeated)
//! and the pathological inputs found for `nvidia-smi topo -m` (built in [`corpus`]); the result
//! (its JSON, or the error's text) must stay within `PER_BYTE` bytes per input byte. Inputs
//! grow in steps (16 KiB, 128 KiB, 1 MiB), and a parser stops at its first step over the bound,
//! so a quadratic parser fails the test at a small size instead of exhausting memory.

use fabcheck::parse;
use std::path::Path;

/// Output bytes allowed per input byte, plus a constant for small inputs. The densest linear
/// output is `nvidia-smi topo`'s: a one-character cell (`X` and a tab, 2 bytes) becomes
/// `"NAME":"X",` under a column name of up to 32 characters (39 bytes), and a GPU row also
/// names its nearest NICs: under 40 bytes per input byte. A quadratic parser is far above it
/// (the corpus's repeated rows: 55 KB in gave 16 MB out).
const PER_BYTE: usize = 40;
const SLACK: usize = 64 * 1024;
const STEPS: [usize; 3] = [16 << 10, 128 << 10, 1 << 20];

fn sample(p: &parse::Parser) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p.sample);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `head` once, then `body` repeated until the text is at least `size` bytes.
fn grow(head: &str, body: &str, size: usize) -> String {
    let mut s = String::from(head);
    if body.is_empty() {
        return s;
    }
    while s.len() < size {
        s.push_str(body);
    }
    s
}

/// Each line of `text` repeated `times` times in place.
fn lines_repeated(text: &str, times: usize) -> String {
    let mut s = String::new();
    for l in text.lines() {
        for _ in 0..times {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// The inputs of one size grown from `text`, named.
fn grown(text: &str, size: usize) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len().max(1);
    let mut out = vec![
        (
            "sample repeated".to_string(),
            grow("", &format!("{text}\n"), size),
        ),
        (
            "every line repeated".to_string(),
            lines_repeated(text, (size / text.len().max(1)).max(2)),
        ),
    ];
    for h in [1, 2, 3, n / 2] {
        if h == 0 || h >= n {
            continue;
        }
        let head = lines[..h].join("\n") + "\n";
        let body = lines[h..].join("\n") + "\n";
        out.push((
            format!("first {h} line(s) once, the rest repeated"),
            grow(&head, &body, size),
        ));
    }
    out
}

/// The size of what a parser gives back: its result's JSON, or its error's text.
fn output_size(kind: &str, text: &str) -> usize {
    match parse::parse(kind, text) {
        Ok(v) => serde_json::to_string(&v).unwrap().len(),
        Err(e) => e.to_string().len(),
    }
}

/// The pathological inputs found for `nvidia-smi topo -m` (issue 50 item 3), built from its
/// real sample: a GPU row repeated (55 KB gave 16 MB out before the fix), device columns with
/// names far longer than a device's, and a NIC legend of long names (193 KB gave 15 MB); plus
/// the fuzz target's seeds (`fuzz/seeds/parse_all/`, kept in git: smaller versions of these)
/// and whatever the local fuzz corpus holds (`fuzz/corpus/parse_all/`, not committed: cargo
/// fuzz writes there). With the fix of item 3 reverted (checked), the matrix's rows repeated
/// give 3.5 MB in, 259 MB out.
fn corpus() -> Vec<(String, String)> {
    let topo = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt"),
    )
    .expect("the nvidia-smi topo sample");
    let mut lines = topo.lines();
    let header = lines.next().unwrap_or("").to_string();
    let matrix: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    let mut v = vec![
        (
            "topo: a GPU row repeated".to_string(),
            format!("{header}\n{}", format!("{}\n", matrix[0]).repeat(2000)),
        ),
        (
            "topo: the matrix's rows repeated (every GPU row naming every NIC row)".to_string(),
            format!(
                "{header}\n{}",
                format!("{}\n", matrix.join("\n")).repeat(1500)
            ),
        ),
    ];
    let long: Vec<String> = (0..64)
        .map(|i| format!("NIC{i}{}", "x".repeat(200)))
        .collect();
    let cells = vec!["PIX"; 64].join("\t");
    v.push((
        "topo: long device columns".to_string(),
        format!(
            "\t{}\n{}",
            long.join("\t"),
            format!("GPU0\t{cells}\n").repeat(200)
        ),
    ));
    let legend: String = (0..2000)
        .map(|i| format!("  NIC{i}: mlx5_{i}{}\n", "y".repeat(100)))
        .collect();
    v.push((
        "topo: a NIC legend of long names".to_string(),
        format!("{topo}\nNIC Legend:\n\n{legend}"),
    ));
    // The fuzz target's seeds (kept in git: the pathological inputs found so far, smaller than
    // the ones above) and, where a fuzzing run left one, its local corpus.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = read_folder(&root.join("fuzz/seeds/parse_all"), "seed");
    assert!(
        seeds.len() >= 4,
        "fuzz/seeds/parse_all holds the pathological inputs"
    );
    v.extend(seeds);
    v.extend(read_folder(&root.join("fuzz/corpus/parse_all"), "corpus"));
    v
}

/// Every UTF-8 file of `dir` (none when it is missing), by name.
fn read_folder(dir: &Path, tag: &str) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut v: Vec<(String, String)> = rd
        .flatten()
        .filter(|e| e.path().extension().is_none_or(|x| x != "md"))
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((format!("{tag} {}", e.file_name().to_string_lossy()), text))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_parsers_output_is_linear_in_its_input() {
    let corpus = corpus();
    let mut over = Vec::new();
    for p in parse::parsers() {
        let text = sample(p);
        let mut inputs: Vec<(String, String)> = corpus.clone();
        let mut failed = false;
        for size in STEPS {
            for (what, input) in grown(&text, size) {
                inputs.push((format!("{what} to {} KiB", size >> 10), input));
            }
            for (what, input) in inputs.drain(..) {
                let out = output_size(p.kind, &input);
                if out > PER_BYTE * input.len() + SLACK {
                    over.push(format!(
                        "`{}`: {what}: {} bytes in, {out} bytes out",
                        p.kind,
                        input.len()
                    ));
                    failed = true;
                }
            }
            if failed {
                break;
            }
        }
    }
    assert!(
        over.is_empty(),
        "parser output above {PER_BYTE} bytes per input byte:\n{}",
        over.join("\n")
    );
}
