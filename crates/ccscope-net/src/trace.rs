//! Mahimahi packet-delivery traces.
//!
//! Format (Mahimahi `link_queue.cc`): one non-negative integer per line, milliseconds since the
//! start; each line is one delivery opportunity of `MAHIMAHI_MTU` bytes; repeated timestamps are
//! several opportunities in the same millisecond; timestamps never decrease; the trace repeats with
//! period equal to its last timestamp.

use std::path::{Path, PathBuf};

use ccscope_core::{Dur, Time};

/// Bytes one delivery opportunity can carry (Mahimahi's `PACKET_SIZE`).
pub const MAHIMAHI_MTU: u32 = 1504;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: cannot read trace: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error(
        "{path}:{line}: field `timestamp`: `{text}` is not a non-negative integer of milliseconds"
    )]
    NotANumber {
        path: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{path}:{line}: field `timestamp`: {got} ms is earlier than the previous line's {prev} ms (timestamps must not decrease)")]
    Decreasing {
        path: PathBuf,
        line: usize,
        prev: u64,
        got: u64,
    },
    #[error("{path}:1: field `timestamp`: the trace is empty (it needs at least one delivery opportunity)")]
    Empty { path: PathBuf },
    #[error("{path}:{line}: field `timestamp`: the last timestamp is 0 ms, so the trace has a zero-length period")]
    ZeroPeriod { path: PathBuf, line: usize },
}

/// A parsed trace: opportunity timestamps in ms, non-decreasing, with a non-zero period.
#[derive(Debug, Clone)]
pub struct Trace {
    pub path: PathBuf,
    ms: Vec<u64>,
}

impl Trace {
    pub fn from_file(path: &Path) -> Result<Trace, TraceError> {
        let most = ccscope_core::file::MAX_INPUT_BYTES;
        let bytes = ccscope_core::file::read_bounded(path, most).map_err(|e| TraceError::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        // A byte that is not UTF-8 cannot be part of a number: name its line like any other bad one.
        let text = String::from_utf8(bytes).map_err(|e| {
            let bad = e.utf8_error().valid_up_to();
            let raw = e.as_bytes();
            let line = raw[..bad].iter().filter(|&&b| b == b'\n').count() + 1;
            let start = raw[..bad]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let end = raw[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(raw.len(), |i| start + i);
            TraceError::NotANumber {
                path: path.to_path_buf(),
                line,
                text: String::from_utf8_lossy(&raw[start..end])
                    .chars()
                    .take(40)
                    .collect(),
            }
        })?;
        Trace::parse(path, &text)
    }

    /// Parse trace text; `path` only labels errors.
    pub fn parse(path: &Path, text: &str) -> Result<Trace, TraceError> {
        let mut ms = Vec::with_capacity(text.len() / 6);
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let t: u64 = line.parse().map_err(|_| TraceError::NotANumber {
                path: path.to_path_buf(),
                line: i + 1,
                text: line.chars().take(40).collect(),
            })?;
            if let Some(&prev) = ms.last() {
                if t < prev {
                    return Err(TraceError::Decreasing {
                        path: path.to_path_buf(),
                        line: i + 1,
                        prev,
                        got: t,
                    });
                }
            }
            ms.push(t);
            last_line = i + 1;
        }
        match ms.last() {
            None => Err(TraceError::Empty {
                path: path.to_path_buf(),
            }),
            Some(0) => Err(TraceError::ZeroPeriod {
                path: path.to_path_buf(),
                line: last_line,
            }),
            Some(_) => Ok(Trace {
                path: path.to_path_buf(),
                ms,
            }),
        }
    }

    /// Build from timestamps already in memory (tests, synthetic traces).
    pub fn from_ms(ms: Vec<u64>) -> Result<Trace, TraceError> {
        let text: String = ms.iter().map(|t| format!("{t}\n")).collect();
        Trace::parse(Path::new("<memory>"), &text)
    }

    pub fn period(&self) -> Dur {
        Dur::from_ms(*self.ms.last().expect("non-empty"))
    }

    pub fn opportunities(&self) -> usize {
        self.ms.len()
    }

    pub fn timestamps_ms(&self) -> &[u64] {
        &self.ms
    }

    /// Mean capacity over one period, in bits per second, counting `bytes` per opportunity.
    pub fn mean_bps(&self, bytes: u32) -> f64 {
        self.ms.len() as f64 * bytes as f64 * 8.0 / self.period().as_secs_f64()
    }
}

/// Walks a trace's opportunities in time order, looping unless `once`.
#[derive(Debug, Clone)]
pub struct TraceCursor {
    trace: std::sync::Arc<Trace>,
    idx: usize,
    loop_base_ms: u64,
    once: bool,
}

impl TraceCursor {
    pub fn new(trace: std::sync::Arc<Trace>, once: bool) -> Self {
        TraceCursor {
            trace,
            idx: 0,
            loop_base_ms: 0,
            once,
        }
    }

    /// The time of the next unused opportunity, or `None` after a single pass with `once`.
    #[inline]
    pub fn peek(&self) -> Option<Time> {
        let ms = self.trace.ms.get(self.idx)?;
        Some(Time::from_ms(self.loop_base_ms + ms))
    }

    /// Use up the next opportunity.
    #[inline]
    pub fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.ms.len() && !self.once {
            self.idx = 0;
            self.loop_base_ms += self.trace.ms.last().expect("non-empty");
        }
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn times(c: &mut TraceCursor, n: usize) -> Vec<Option<u64>> {
        (0..n)
            .map(|_| {
                let t = c.peek().map(|t| t.as_ms_floor());
                c.advance();
                t
            })
            .collect()
    }

    #[test]
    fn the_trace_loops_with_period_equal_to_its_last_timestamp() {
        let tr = Arc::new(Trace::from_ms(vec![0, 2, 2, 5]).unwrap());
        let mut c = TraceCursor::new(tr, false);
        assert_eq!(times(&mut c, 9), [0, 2, 2, 5, 5, 7, 7, 10, 10].map(Some));
    }

    #[test]
    fn once_stops_after_one_pass() {
        let tr = Arc::new(Trace::from_ms(vec![1, 3]).unwrap());
        let mut c = TraceCursor::new(tr, true);
        assert_eq!(times(&mut c, 4), [Some(1), Some(3), None, None]);
    }

    #[test]
    fn bad_traces_name_the_line_and_field() {
        let p = Path::new("t.up");
        let e = Trace::parse(p, "1\n5\n3\n").unwrap_err();
        assert_eq!(e.to_string(), "t.up:3: field `timestamp`: 3 ms is earlier than the previous line's 5 ms (timestamps must not decrease)");
        assert!(matches!(
            Trace::parse(p, "1\nx2\n"),
            Err(TraceError::NotANumber { line: 2, .. })
        ));
        assert!(matches!(
            Trace::parse(p, "1\n-2\n"),
            Err(TraceError::NotANumber { line: 2, .. })
        ));
        assert!(matches!(Trace::parse(p, ""), Err(TraceError::Empty { .. })));
        assert!(matches!(
            Trace::parse(p, "0\n0\n"),
            Err(TraceError::ZeroPeriod { line: 2, .. })
        ));
    }

    #[test]
    fn a_byte_that_is_not_utf8_names_its_line() {
        let dir = std::env::temp_dir().join(format!("ccscope-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.up");
        std::fs::write(&p, b"0\n5\n1\xff0\n20\n").unwrap();
        let e = Trace::from_file(&p).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(e, TraceError::NotANumber { line: 3, .. }), "{e}");
        assert!(e.to_string().contains("t.up:3: field `timestamp`"), "{e}");
    }
}
