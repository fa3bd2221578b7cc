//! Black-box regression set: every scenario under `tests/scenarios/<family>/` runs as the
//! `dump_scenario` example runs it (window log on, packet log as the file says), must break no
//! conservation law, and must keep its line in `tests/scenarios/expected.txt`: headline counters and
//! a 64-bit digest of the whole `RunResult` Debug text and packet log. What each family covers, how
//! the files are written and how to diff two builds: `tests/scenarios/README.md`.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ccscope_sim::{load_scenario, Simulation};

/// Set to rewrite `expected.txt` from this build (only after reviewing why the digests moved).
const BLESS: &str = "CCSCOPE_BLESS_SCENARIOS";

/// FNV-1a, 64 bits, fed through `fmt::Write` so the Debug text is hashed as it is formatted.
struct Fnv1a(u64);

impl Fnv1a {
    // draft-eastlake-fnv §2.2 (FNV-1a) with §5's 64-bit offset basis and prime.
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
}

impl Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for b in s.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(Self::PRIME);
        }
        Ok(())
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

/// `family/name` of every scenario file, sorted.
fn scenarios() -> Vec<String> {
    let mut names = Vec::new();
    for family in std::fs::read_dir(root()).expect("tests/scenarios") {
        let family = family.unwrap().path();
        if !family.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&family).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "toml") {
                let fam = family.file_name().unwrap().to_string_lossy();
                let stem = f.file_stem().unwrap().to_string_lossy();
                names.push(format!("{fam}/{stem}"));
            }
        }
    }
    names.sort();
    names
}

/// The scenario's expected-file line, or why it has none (a load error or a broken conservation law).
fn line(name: &str) -> Result<String, String> {
    let p = root().join(format!("{name}.toml"));
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ccscope/data/traces");
    let text = std::fs::read_to_string(&p).map_err(|e| e.to_string())?;
    let mut sc = load_scenario(&text, Some(&p), &[traces]).map_err(|e| e.to_string())?;
    sc.cwnd_log = true;
    let (r, log) = Simulation::new(&sc).map_err(|e| e.to_string())?.run();
    let broken = r.conservation_violations();
    if !broken.is_empty() {
        return Err(broken.join("; "));
    }
    // The same text dump_scenario prints after its `== file` line, so a dump's digest can be checked.
    let mut h = Fnv1a(Fnv1a::OFFSET_BASIS);
    writeln!(h, "{r:?}\n{log:?}").unwrap();
    let t = &r.total;
    Ok(format!(
        "{name} {} {} {} {} {} {} {:016x}",
        t.sent, t.delivered, t.dropped, t.retransmissions, t.rtos, r.events, h.0
    ))
}

/// Every scenario's line (or error), in name order; scenarios run on all cores, each on its own.
fn run_all(names: &[String]) -> Vec<Result<String, String>> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(vec![None; names.len()]);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(name) = names.get(i) else { break };
                let got = std::panic::catch_unwind(|| line(name)).unwrap_or_else(|e| {
                    let why = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
                    Err(format!("panicked: {}", why.unwrap_or_default()))
                });
                out.lock().unwrap()[i] = Some(got);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

const HEADER: &str = "\
# Black-box regression set (tests/scenarios.rs; see README.md): one line per scenario,
# scenario sent delivered dropped retransmissions rtos events digest
# (totals over all flows; digest = FNV-1a 64 of dump_scenario's text for the file, its `==` line left out)
";

#[test]
fn every_scenario_keeps_its_counters_and_digest() {
    let names = scenarios();
    assert!(!names.is_empty(), "no scenario under {}", root().display());
    let results = run_all(&names);
    let expected_path = root().join("expected.txt");

    let mut failed = Vec::new();
    let mut got = Vec::new();
    for (name, r) in names.iter().zip(&results) {
        match r {
            Ok(l) => got.push(l.clone()),
            Err(e) => failed.push(format!("  {name}: {e}")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} scenario(s) failed to run cleanly:\n{}",
        failed.len(),
        failed.join("\n")
    );

    if std::env::var_os(BLESS).is_some() {
        let mut text = HEADER.to_string();
        for l in &got {
            writeln!(text, "{l}").unwrap();
        }
        std::fs::write(&expected_path, text).unwrap();
        return;
    }

    let expected_text = std::fs::read_to_string(&expected_path).unwrap_or_default();
    let expected: Vec<&str> = expected_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let key = |l: &str| l.split(' ').next().unwrap_or("").to_string();
    let want: std::collections::BTreeMap<String, &str> =
        expected.iter().map(|l| (key(l), *l)).collect();

    let mut report = Vec::new();
    let mut moved = Vec::new();
    for l in &got {
        let name = key(l);
        match want.get(&name) {
            Some(w) if *w == l.as_str() => {}
            Some(w) => {
                report.push(format!("  {name}\n    expected {w}\n    now      {l}"));
                moved.push(name);
            }
            None => report.push(format!("  {name}: not in expected.txt (now {l})")),
        }
    }
    for name in want.keys() {
        if !names.contains(name) {
            report.push(format!("  {name}: in expected.txt but its file is gone"));
        }
    }
    if report.is_empty() {
        return;
    }
    let files: Vec<String> = moved
        .iter()
        .take(8)
        .map(|n| format!("crates/ccscope-sim/tests/scenarios/{n}.toml"))
        .collect();
    panic!(
        "{} of {} black-box scenarios differ from tests/scenarios/expected.txt:\n{}\n\n\
         To see what moved, dump them with main's build and with this one, then diff:\n  \
         cargo run --release -p ccscope-sim --example dump_scenario -- {} > this.txt\n  \
         (same command in a checkout of main > main.txt)\n  diff main.txt this.txt\n\
         If every move is intended and reviewed, rewrite the file: {BLESS}=1 cargo test -p ccscope-sim --test scenarios",
        report.len(),
        names.len(),
        report.join("\n"),
        if files.is_empty() { "<files>".to_string() } else { files.join(" ") },
    );
}
