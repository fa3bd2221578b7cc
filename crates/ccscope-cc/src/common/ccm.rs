//! The `.ccm` model file: a sparse (delay, window) Markov transition matrix (paper 000 §3.1, §4.2).
//!
//! Layout, all little-endian: magic `b"CCSCOPEM"`; `u32` version (2); `u32 meta_len`; `meta_len`
//! bytes of UTF-8 JSON metadata (`quantize_ms`, `d_min_ms`, `d_max_ms`, `w_min`, `w_max`, `n_d`,
//! `n_w`, and any other keys); `u64 n_states` (= `n_d * n_w`); `u64 n_rows` (non-empty rows); `u64
//! nnz`; `n_rows` `u32` state indices of the non-empty rows, increasing; `(n_rows + 1)` `u64` row
//! pointers into the entries, increasing from 0 to `nnz`; `nnz` `u32` column indices; `nnz` `f64`
//! probabilities; a `u64` trailer, the FNV-1a 64-bit hash of every preceding byte. Only the rows the
//! chain ever left are stored, so the size follows the samples, not the grid (a 1 ms grid of Verus
//! windows has millions of states). State `d_bin * n_w + (w - w_min)` is delay bin `d_bin`, whose
//! interval is `[d_min_ms + d_bin quantize_ms, d_min_ms + (d_bin + 1) quantize_ms)`, and window `w`.
//!
//! The metadata is read with a small extractor of top-level numeric fields (no JSON dependency): the
//! first `"key": number` occurrence of each key counts; other keys are kept verbatim in `meta_json`.

use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

const MAGIC: &[u8; 8] = b"CCSCOPEM";
const VERSION: u32 = 2;
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// A non-empty row's probabilities must sum to 1 within this (paper 000 Eq. 5); the Python reader uses
/// the same bound.
const ROW_SUM_TOLERANCE: f64 = 1e-9;
/// Refuse matrices above this many states (the paper's largest has 25 488).
const MAX_STATES: u64 = 1 << 28;

#[derive(Debug, thiserror::Error)]
pub enum CcmError {
    #[error("cannot read the model: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a .ccm model (bad magic)")]
    BadMagic,
    #[error("unsupported .ccm version {0} (this build reads version {VERSION})")]
    UnsupportedVersion(u32),
    #[error("truncated .ccm model: {expected} bytes expected, {found} found")]
    Truncated { expected: u64, found: u64 },
    #[error(".ccm checksum mismatch (file corrupted)")]
    Checksum,
    #[error("inconsistent .ccm model: {0}")]
    Inconsistent(String),
}

/// FNV-1a 64-bit.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(FNV_OFFSET, |h, &b| (h ^ b as u64).wrapping_mul(FNV_PRIME))
}

/// The state space of a model (the metadata fields the controller uses).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// Width of a delay bin, ms (paper 000 §4.2: 2, 5, 10 or 20).
    pub quantize_ms: f64,
    /// Lower edge of delay bin 0, ms.
    pub d_min_ms: f64,
    /// Largest delay of the training samples after truncation, ms (informational).
    pub d_max_ms: f64,
    /// Smallest window (packets per epoch) of the state space.
    pub w_min: u32,
    /// Largest window of the state space.
    pub w_max: u32,
    /// Number of delay bins.
    pub n_d: u32,
    /// Number of windows, `w_max - w_min + 1`.
    pub n_w: u32,
}

impl Meta {
    pub fn n_states(&self) -> u64 {
        self.n_d as u64 * self.n_w as u64
    }

    fn check(&self) -> Result<(), CcmError> {
        let bad = |s: &str| Err(CcmError::Inconsistent(s.to_string()));
        if !(self.quantize_ms > 0.0 && self.quantize_ms.is_finite()) {
            return bad("quantize_ms must be > 0 and finite");
        }
        if !(self.d_min_ms.is_finite()
            && self.d_max_ms.is_finite()
            && self.d_max_ms >= self.d_min_ms)
        {
            return bad("need finite d_min_ms <= d_max_ms");
        }
        if self.w_max < self.w_min {
            return bad("w_max < w_min");
        }
        if self.n_w as u64 != self.w_max as u64 - self.w_min as u64 + 1 {
            return bad("n_w != w_max - w_min + 1");
        }
        if self.n_d == 0 {
            return bad("n_d must be >= 1");
        }
        if self.n_states() > MAX_STATES {
            return bad("too many states");
        }
        Ok(())
    }

    fn to_json(&self) -> String {
        format!(
            "{{\"quantize_ms\": {:?}, \"d_min_ms\": {:?}, \"d_max_ms\": {:?}, \"w_min\": {}, \"w_max\": {}, \"n_d\": {}, \"n_w\": {}}}",
            self.quantize_ms, self.d_min_ms, self.d_max_ms, self.w_min, self.w_max, self.n_d, self.n_w
        )
    }

    fn from_json(json: &str) -> Result<Meta, CcmError> {
        let int = |key: &str| -> Result<u32, CcmError> {
            let v = json_number(json, key)?;
            if v >= 0.0 && v <= u32::MAX as f64 && v.fract() == 0.0 {
                Ok(v as u32)
            } else {
                Err(CcmError::Inconsistent(format!(
                    "metadata `{key}` must be a non-negative integer, got {v}"
                )))
            }
        };
        Ok(Meta {
            quantize_ms: json_number(json, "quantize_ms")?,
            d_min_ms: json_number(json, "d_min_ms")?,
            d_max_ms: json_number(json, "d_max_ms")?,
            w_min: int("w_min")?,
            w_max: int("w_max")?,
            n_d: int("n_d")?,
            n_w: int("n_w")?,
        })
    }
}

/// The number after the first `"key":` in `json`.
fn json_number(json: &str, key: &str) -> Result<f64, CcmError> {
    let missing = || CcmError::Inconsistent(format!("metadata lacks a numeric `{key}`"));
    let quoted = format!("\"{key}\"");
    let mut from = 0;
    while let Some(i) = json[from..].find(&quoted) {
        let rest = json[from + i + quoted.len()..].trim_start();
        from += i + quoted.len();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(rest.len());
        return rest[..end].parse::<f64>().map_err(|_| missing());
    }
    Err(missing())
}

/// A loaded, validated model: the metadata and the transition matrix in CSR form.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub meta: Meta,
    /// The metadata JSON as stored.
    pub meta_json: String,
    /// The non-empty rows' state indices, increasing; row `rows[i]` holds entries
    /// `row_ptr[i]..row_ptr[i + 1]`.
    pub rows: Vec<u32>,
    pub row_ptr: Vec<u64>,
    pub indices: Vec<u32>,
    pub probs: Vec<f64>,
}

/// A little-endian reader over the file bytes; running past the end is `Truncated`.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The file's length as the structure says it should be (for the error).
    expected: u64,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], CcmError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(CcmError::Truncated {
                expected: self.expected.max((self.pos + n) as u64),
                found: self.bytes.len() as u64,
            });
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, CcmError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, CcmError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

impl Model {
    /// Build a model from its rows: `rows[s]` lists `(next state, probability)` for state `s`.
    pub fn from_rows(meta: Meta, rows: &[Vec<(u32, f64)>]) -> Result<Model, CcmError> {
        meta.check()?;
        if rows.len() as u64 != meta.n_states() {
            return Err(CcmError::Inconsistent(format!(
                "{} rows for {} states",
                rows.len(),
                meta.n_states()
            )));
        }
        let (mut ids, mut row_ptr) = (Vec::new(), vec![0u64]);
        let (mut indices, mut probs) = (Vec::new(), Vec::new());
        for (s, row) in rows.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            for &(c, p) in row {
                indices.push(c);
                probs.push(p);
            }
            ids.push(s as u32);
            row_ptr.push(indices.len() as u64);
        }
        let m = Model {
            meta_json: meta.to_json(),
            meta,
            rows: ids,
            row_ptr,
            indices,
            probs,
        };
        m.check_matrix()?;
        Ok(m)
    }

    pub fn n_states(&self) -> usize {
        self.meta.n_states() as usize
    }

    /// State index of (delay bin, window); `None` outside the state space.
    pub fn state(&self, d_bin: u32, w: u32) -> Option<usize> {
        if d_bin >= self.meta.n_d || w < self.meta.w_min || w > self.meta.w_max {
            return None;
        }
        Some(d_bin as usize * self.meta.n_w as usize + (w - self.meta.w_min) as usize)
    }

    /// (delay bin, window) of a state index.
    pub fn state_of(&self, s: u32) -> (u32, u32) {
        (s / self.meta.n_w, self.meta.w_min + s % self.meta.n_w)
    }

    /// The stored transitions `(next state, probability)` out of state `s` (none if it was never left).
    pub fn row(&self, s: usize) -> impl Iterator<Item = (u32, f64)> + Clone + '_ {
        let i = u32::try_from(s)
            .ok()
            .and_then(|s| self.rows.binary_search(&s).ok());
        self.entries(i)
    }

    fn entries(&self, i: Option<usize>) -> impl Iterator<Item = (u32, f64)> + Clone + '_ {
        let (lo, hi) = i.map_or((0, 0), |i| {
            (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize)
        });
        self.indices[lo..hi]
            .iter()
            .copied()
            .zip(self.probs[lo..hi].iter().copied())
    }

    /// The non-empty rows of delay bin `d_bin` with windows from `w` down to `w_min`, largest window
    /// first, as `(w, transitions)`: the §5.1 walk-down visits only rows that exist.
    pub fn rows_down_from(
        &self,
        d_bin: u32,
        w: u32,
    ) -> impl Iterator<Item = (u32, impl Iterator<Item = (u32, f64)> + Clone + '_)> + '_ {
        let w = w.min(self.meta.w_max);
        let (first, top) = match (self.state(d_bin, self.meta.w_min), self.state(d_bin, w)) {
            (Some(a), Some(b)) if w >= self.meta.w_min => (a as u32, b as u32),
            _ => (1, 0), // an empty range
        };
        let end = self.rows.partition_point(|&r| r <= top);
        (0..end)
            .rev()
            .take_while(move |&i| self.rows[i] >= first)
            .map(move |i| (self.state_of(self.rows[i]).1, self.entries(Some(i))))
    }

    /// The smallest window with a stored row in delay bin `d_bin`, if any.
    pub fn lowest_window_with_row(&self, d_bin: u32) -> Option<u32> {
        let first = self.state(d_bin, self.meta.w_min)? as u32;
        let i = self.rows.partition_point(|&r| r < first);
        self.rows
            .get(i)
            .filter(|&&r| r < first + self.meta.n_w)
            .map(|&r| self.state_of(r).1)
    }

    /// The file bytes (the spec's layout, checksum included).
    pub fn to_bytes(&self) -> Vec<u8> {
        let meta = self.meta_json.as_bytes();
        let mut b =
            Vec::with_capacity(48 + meta.len() + self.rows.len() * 12 + self.indices.len() * 12);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        b.extend_from_slice(meta);
        b.extend_from_slice(&(self.n_states() as u64).to_le_bytes());
        b.extend_from_slice(&(self.rows.len() as u64).to_le_bytes());
        b.extend_from_slice(&(self.indices.len() as u64).to_le_bytes());
        self.rows
            .iter()
            .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        self.row_ptr
            .iter()
            .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        self.indices
            .iter()
            .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        self.probs
            .iter()
            .for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        let h = fnv1a64(&b);
        b.extend_from_slice(&h.to_le_bytes());
        b
    }

    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), CcmError> {
        std::fs::write(path, self.to_bytes())?;
        Ok(())
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Model, CcmError> {
        let most = ccscope_core::file::MAX_INPUT_BYTES;
        Model::from_bytes(&ccscope_core::file::read_bounded(path.as_ref(), most)?)
    }

    /// `load`, but every controller that asks for the same unchanged file (same canonical path, length,
    /// modification time and inode) while one copy is alive gets that copy: N users, and a new
    /// connection per ON period, share one model instead of reading and checking the file each time.
    /// The most recently loaded model is kept alive, so the scenario checks and the controllers built
    /// after them do not read it again.
    pub fn load_shared(path: impl AsRef<Path>) -> Result<Arc<Model>, CcmError> {
        type Key = (std::path::PathBuf, u64, Option<std::time::SystemTime>, u64);
        static CACHE: Mutex<Vec<(Key, Weak<Model>)>> = Mutex::new(Vec::new());
        static RECENT: Mutex<Option<Arc<Model>>> = Mutex::new(None);
        let path = path.as_ref();
        let md = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&md);
        #[cfg(not(unix))]
        let inode = 0;
        // A file replaced by a new one (an atomic save) has a new inode even within one mtime tick.
        let key: Key = (
            std::fs::canonicalize(path)?,
            md.len(),
            md.modified().ok(),
            inode,
        );
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|(_, w)| w.strong_count() > 0);
        if let Some(m) = cache
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(m);
        }
        let m = Arc::new(Model::load(path)?);
        cache.push((key, Arc::downgrade(&m)));
        *RECENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&m));
        Ok(m)
    }

    /// Parse and validate file bytes. A short file is `Truncated` (the length its header implies vs.
    /// the length found) even though its checksum fails too; any other damage is `Checksum`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, CcmError> {
        let found = bytes.len() as u64;
        let mut r = Reader {
            bytes,
            pos: 0,
            expected: 0,
        };
        if r.take(8)? != MAGIC {
            return Err(CcmError::BadMagic);
        }
        let version = r.u32()?;
        if version != VERSION {
            return Err(CcmError::UnsupportedVersion(version));
        }
        let meta_len = r.u32()? as u64;
        // Length implied by the header, computed before reading the body so truncation is reported as such.
        let expected = (|| -> Option<u64> {
            let counts_at = 16 + meta_len;
            let at = |o: u64| {
                bytes
                    .get(o as usize..o as usize + 8)
                    .map(|s| u64::from_le_bytes(s.try_into().expect("8")))
            };
            let n_rows = at(counts_at + 8)?;
            let nnz = at(counts_at + 16)?;
            let body = n_rows
                .checked_mul(12)?
                .checked_add(8)?
                .checked_add(nnz.checked_mul(12)?)?;
            counts_at.checked_add(24)?.checked_add(body)?.checked_add(8)
        })();
        let checksum_ok = found >= 8 && {
            let (body, trailer) = bytes.split_at(bytes.len() - 8);
            fnv1a64(body) == u64::from_le_bytes(trailer.try_into().expect("8"))
        };
        let counts_readable = found >= 16 + meta_len + 24;
        match expected {
            None if !counts_readable => {
                return Err(CcmError::Truncated {
                    expected: (16 + meta_len + 24 + 8).max(found + 1),
                    found,
                })
            }
            None if !checksum_ok => return Err(CcmError::Checksum),
            None => {
                return Err(CcmError::Inconsistent(
                    "the header's counts overflow".into(),
                ))
            }
            Some(e) if e > found => return Err(CcmError::Truncated { expected: e, found }),
            _ if !checksum_ok => return Err(CcmError::Checksum),
            Some(e) if e < found => {
                return Err(CcmError::Inconsistent(format!(
                    "{} bytes after the trailer",
                    found - e
                )))
            }
            _ => {}
        }
        r.expected = expected.unwrap_or(found);
        let meta_json = std::str::from_utf8(r.take(meta_len as usize)?)
            .map_err(|_| CcmError::Inconsistent("metadata is not UTF-8".into()))?
            .to_string();
        if !meta_json.trim_start().starts_with('{') {
            return Err(CcmError::Inconsistent(
                "metadata is not a JSON object".into(),
            ));
        }
        let meta = Meta::from_json(&meta_json)?;
        meta.check()?;
        let n_states = r.u64()?;
        if n_states != meta.n_states() {
            return Err(CcmError::Inconsistent(format!(
                "n_states {n_states} != n_d * n_w = {}",
                meta.n_states()
            )));
        }
        let n_rows = r.u64()?;
        let nnz = r.u64()?;
        if n_rows > n_states {
            return Err(CcmError::Inconsistent(format!(
                "n_rows {n_rows} > n_states {n_states}"
            )));
        }
        let rows = (0..n_rows)
            .map(|_| r.u32())
            .collect::<Result<Vec<_>, _>>()?;
        let row_ptr = (0..=n_rows)
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let indices = (0..nnz).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        let probs = (0..nnz)
            .map(|_| r.u64().map(f64::from_bits))
            .collect::<Result<Vec<_>, _>>()?;
        let m = Model {
            meta,
            meta_json,
            rows,
            row_ptr,
            indices,
            probs,
        };
        m.check_matrix()?;
        Ok(m)
    }

    /// CSR structure, column range, probabilities in [0, 1], each non-empty row summing to 1 (Eq. 5).
    fn check_matrix(&self) -> Result<(), CcmError> {
        let bad = |s: String| Err(CcmError::Inconsistent(s));
        let nnz = self.indices.len() as u64;
        if self.row_ptr.len() != self.rows.len() + 1
            || self.row_ptr.first() != Some(&0)
            || self.row_ptr.last() != Some(&nnz)
            || self.probs.len() as u64 != nnz
        {
            return bad(format!("row pointers must run from 0 to nnz = {nnz}"));
        }
        if let Some(i) = self.row_ptr.windows(2).position(|w| w[1] <= w[0]) {
            return bad(format!("stored row {i} is empty or its pointer decreases"));
        }
        let n = self.n_states() as u64;
        if let Some(i) = self.rows.windows(2).position(|w| w[1] <= w[0]) {
            return bad(format!(
                "row indices not increasing at stored row {}",
                i + 1
            ));
        }
        if let Some(&s) = self.rows.last().filter(|&&s| s as u64 >= n) {
            return bad(format!("row {s} >= n_states {n}"));
        }
        if let Some(&c) = self.indices.iter().find(|&&c| c as u64 >= n) {
            return bad(format!("column {c} >= n_states {n}"));
        }
        if let Some(p) = self.probs.iter().find(|p| !(**p > 0.0 && **p <= 1.0)) {
            return bad(format!("probability {p} outside (0, 1]"));
        }
        for (i, &s) in self.rows.iter().enumerate() {
            let (lo, hi) = (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize);
            if self.indices[lo..hi].windows(2).any(|c| c[1] <= c[0]) {
                return bad(format!("row {s}: column indices not strictly increasing"));
            }
            let sum: f64 = self.entries(Some(i)).map(|(_, p)| p).sum();
            if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return bad(format!("row {s} sums to {sum}, not 1"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            quantize_ms: 10.0,
            d_min_ms: 20.0,
            d_max_ms: 40.0,
            w_min: 1,
            w_max: 3,
            n_d: 2,
            n_w: 3,
        }
    }

    fn model() -> Model {
        let mut rows = vec![Vec::new(); 6];
        rows[0] = vec![(1, 0.25), (3, 0.75)];
        rows[4] = vec![(5, 1.0)];
        Model::from_rows(meta(), &rows).expect("valid")
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("ccscope-ccm-{}-{name}.ccm", std::process::id()))
    }

    #[test]
    fn ccm_write_then_load_round_trips() {
        let path = temp("roundtrip");
        let m = model();
        m.write(&path).expect("write");
        let back = Model::load(&path).expect("load");
        std::fs::remove_file(&path).ok();
        assert_eq!(back, m);
        assert_eq!(back.row(0).collect::<Vec<_>>(), vec![(1, 0.25), (3, 0.75)]);
        assert_eq!(back.state(1, 2), Some(4));
        assert_eq!(back.state_of(4), (1, 2));
    }

    #[test]
    fn ccm_stores_only_the_rows_the_chain_left() {
        let m = model();
        assert_eq!(
            (m.rows.clone(), m.row_ptr.clone()),
            (vec![0, 4], vec![0, 2, 3])
        );
        assert_eq!(m.row(3).count(), 0);
        // Header 16 + metadata + 3 counts + 2 row ids + 3 pointers + 3 entries + trailer.
        assert_eq!(
            m.to_bytes().len(),
            16 + m.meta_json.len() + 24 + 2 * 4 + 3 * 8 + 3 * 12 + 8
        );
    }

    #[test]
    fn ccm_rows_down_from_lists_a_delay_bins_existing_rows_largest_window_first() {
        let mut rows = vec![Vec::new(); 6];
        rows[0] = vec![(0, 1.0)]; // (bin 0, w 1)
        rows[2] = vec![(1, 1.0)]; // (bin 0, w 3)
        rows[3] = vec![(2, 1.0)]; // (bin 1, w 1)
        let m = Model::from_rows(meta(), &rows).expect("valid");
        let ws = |d, w| {
            m.rows_down_from(d, w)
                .map(|(w, r)| (w, r.collect::<Vec<_>>()))
                .collect::<Vec<_>>()
        };
        assert_eq!(ws(0, 3), vec![(3, vec![(1, 1.0)]), (1, vec![(0, 1.0)])]);
        assert_eq!(ws(0, 2), vec![(1, vec![(0, 1.0)])]);
        assert_eq!(ws(1, 3), vec![(1, vec![(2, 1.0)])]);
        assert_eq!(ws(0, 99), ws(0, 3), "windows above w_max start at w_max");
        assert!(ws(0, 0).is_empty() && ws(2, 3).is_empty());
    }

    #[test]
    fn ccm_lowest_window_with_row_finds_a_delay_bins_first_stored_row() {
        let m = model(); // rows (0, 1) and (1, 2)
        assert_eq!(
            (m.lowest_window_with_row(0), m.lowest_window_with_row(1)),
            (Some(1), Some(2))
        );
        let mut rows = vec![Vec::new(); 6];
        rows[5] = vec![(0, 1.0)];
        let m = Model::from_rows(meta(), &rows).expect("valid");
        assert_eq!(
            (
                m.lowest_window_with_row(0),
                m.lowest_window_with_row(1),
                m.lowest_window_with_row(2)
            ),
            (None, Some(3), None)
        );
    }

    #[test]
    fn ccm_fnv1a_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn ccm_corrupt_byte_is_a_checksum_error() {
        let mut b = model().to_bytes();
        let n = b.len();
        b[n - 12] ^= 0x01; // inside the last probability
        assert!(matches!(Model::from_bytes(&b), Err(CcmError::Checksum)));
        let mut b = model().to_bytes();
        b[20] ^= 0x20; // inside the metadata
        assert!(matches!(Model::from_bytes(&b), Err(CcmError::Checksum)));
    }

    #[test]
    fn ccm_truncated_file_reports_expected_and_found_lengths() {
        let b = model().to_bytes();
        let full = b.len() as u64;
        for cut in [1usize, 8, 30] {
            match Model::from_bytes(&b[..b.len() - cut]) {
                Err(CcmError::Truncated { expected, found }) => {
                    assert_eq!(expected, full);
                    assert_eq!(found, full - cut as u64);
                }
                other => panic!("cut {cut}: {other:?}"),
            }
        }
        assert!(matches!(
            Model::from_bytes(&b[..5]),
            Err(CcmError::Truncated { found: 5, .. })
        ));
        assert!(matches!(
            Model::from_bytes(&b[..14]),
            Err(CcmError::Truncated { found: 14, .. })
        ));
    }

    #[test]
    fn ccm_wrong_magic_and_version_are_refused() {
        let mut b = model().to_bytes();
        b[0] = b'X';
        assert!(matches!(Model::from_bytes(&b), Err(CcmError::BadMagic)));
        let mut b = model().to_bytes();
        b[8] = 1;
        assert!(matches!(
            Model::from_bytes(&b),
            Err(CcmError::UnsupportedVersion(1))
        ));
    }

    #[test]
    fn ccm_inconsistent_structure_is_refused_even_with_a_good_checksum() {
        let mut m = model();
        m.probs[0] = 0.5; // row 0 sums to 1.25
        assert!(matches!(
            Model::from_bytes(&m.to_bytes()),
            Err(CcmError::Inconsistent(_))
        ));
        let mut m = model();
        m.indices[0] = 6; // column out of range
        assert!(matches!(
            Model::from_bytes(&m.to_bytes()),
            Err(CcmError::Inconsistent(_))
        ));
        let mut m = model();
        m.meta_json = m.meta_json.replace("\"n_w\": 3", "\"n_w\": 4");
        assert!(matches!(
            Model::from_bytes(&m.to_bytes()),
            Err(CcmError::Inconsistent(_))
        ));
    }

    use proptest::prelude::*;

    proptest! {
        /// A damaged file is an error, never a panic: any truncation, any flipped byte, any counts.
        #[test]
        fn ccm_damaged_bytes_are_an_error_never_a_panic(cut in 0usize..200, flip in 0usize..200, bit in 0u8..8, fix_checksum: bool) {
            let mut b = model().to_bytes();
            let i = flip % b.len();
            b[i] ^= 1 << bit;
            if fix_checksum {
                // Re-sign the damaged body so that the structural checks, not the checksum, must catch it.
                let n = b.len() - 8;
                let h = fnv1a64(&b[..n]);
                b[n..].copy_from_slice(&h.to_le_bytes());
            }
            let b = &b[..b.len().saturating_sub(cut % 8)];
            if let Ok(m) = Model::from_bytes(b) {
                // Whatever parses must be a valid model that round-trips.
                prop_assert_eq!(Model::from_bytes(&m.to_bytes()).expect("re-parses"), m);
            }
        }

        /// Any row-stochastic sparse model round-trips through its bytes and lists its rows alike.
        #[test]
        fn ccm_random_models_round_trip(n_d in 1u32..5, n_w in 1u32..6, seed in 0u64..1000) {
            let meta = Meta { quantize_ms: 2.0, d_min_ms: 40.0, d_max_ms: 40.0 + 2.0 * n_d as f64, w_min: 0, w_max: n_w - 1, n_d, n_w };
            let n = (n_d * n_w) as usize;
            let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut next = || { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); x >> 33 };
            let rows: Vec<Vec<(u32, f64)>> = (0..n).map(|_| {
                let k = (next() % 3) as usize; // 0, 1 or 2 entries
                let cols: std::collections::BTreeSet<u32> = (0..k).map(|_| (next() % n as u64) as u32).collect();
                cols.iter().map(|&c| (c, 1.0 / cols.len() as f64)).collect()
            }).collect();
            let m = Model::from_rows(meta, &rows).expect("valid");
            let back = Model::from_bytes(&m.to_bytes()).expect("parses");
            prop_assert_eq!(&back, &m);
            for (s, row) in rows.iter().enumerate() {
                prop_assert_eq!(back.row(s).collect::<Vec<_>>(), row.clone());
            }
            for d in 0..n_d {
                let down: Vec<u32> = back.rows_down_from(d, n_w - 1).map(|(w, _)| w).collect();
                let want: Vec<u32> = (0..n_w).rev().filter(|&w| !rows[(d * n_w + w) as usize].is_empty()).collect();
                prop_assert_eq!(down, want);
            }
        }
    }

    #[test]
    fn ccm_counts_that_overflow_are_inconsistent_not_truncated() {
        let m = model();
        let mut b = m.to_bytes();
        let nnz_at = 16 + m.meta_json.len() + 16;
        b[nnz_at..nnz_at + 8].copy_from_slice(&(1u64 << 62).to_le_bytes());
        let n = b.len() - 8;
        let h = fnv1a64(&b[..n]);
        b[n..].copy_from_slice(&h.to_le_bytes());
        assert!(
            matches!(Model::from_bytes(&b), Err(CcmError::Inconsistent(ref s)) if s.contains("overflow")),
            "{:?}",
            Model::from_bytes(&b)
        );
    }

    #[test]
    fn ccm_zero_probabilities_and_unsorted_columns_are_refused() {
        let mut m = model();
        m.indices.swap(0, 1); // row 0: columns 3, 1
        m.probs.swap(0, 1);
        assert!(
            matches!(Model::from_bytes(&m.to_bytes()), Err(CcmError::Inconsistent(ref s)) if s.contains("increasing"))
        );
        let mut rows = vec![Vec::new(); 6];
        rows[0] = vec![(1, 0.0), (3, 1.0)];
        assert!(Model::from_rows(meta(), &rows).is_err());
    }

    #[test]
    fn ccm_metadata_extractor_reads_numbers_among_other_keys() {
        let json = r#"{"name": "x", "nested": {"a": [1, 2]}, "quantize_ms" : 5, "d_min_ms": 1.5e1,
            "d_max_ms": 300.0, "w_min": 0, "w_max": 99, "n_d": 57, "n_w": 100, "trained_on": ["t1"]}"#;
        let m = Meta::from_json(json).expect("parses");
        assert_eq!(
            m,
            Meta {
                quantize_ms: 5.0,
                d_min_ms: 15.0,
                d_max_ms: 300.0,
                w_min: 0,
                w_max: 99,
                n_d: 57,
                n_w: 100
            }
        );
        assert!(Meta::from_json(r#"{"quantize_ms": 5}"#).is_err());
        assert!(Meta::from_json(r#"{"quantize_ms": 5, "d_min_ms": 0, "d_max_ms": 1, "w_min": 1.5, "w_max": 2, "n_d": 1, "n_w": 1}"#).is_err());
    }
}
