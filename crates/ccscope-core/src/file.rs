//! Input files (traces, models, tables) read within a bound: a file larger than any real input, or one
//! that never ends (`/dev/zero`, a pipe), is refused instead of read until memory runs out.

use std::io::{self, Read};
use std::path::Path;

/// At most this many bytes in one input file (256 MiB; a Mahimahi trace of an hour at 12 Mbit/s is about 22 MB).
pub const MAX_INPUT_BYTES: u64 = 1 << 28;

/// The bytes of `path` if there are at most `most`: a regular file's length is checked before reading,
/// anything else (a device, a pipe) is read no further than one byte past the bound.
pub fn read_bounded(path: &Path, most: u64) -> io::Result<Vec<u8>> {
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("more than {most} bytes, the most an input file may be"),
        )
    };
    let f = std::fs::File::open(path)?;
    if f.metadata().is_ok_and(|m| m.is_file() && m.len() > most) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    f.take(most + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > most {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_beyond_the_bound_is_refused_and_an_endless_one_is_read_no_further_than_it() {
        let p = std::env::temp_dir().join(format!("ccscope-bounded-{}", std::process::id()));
        std::fs::write(&p, [b'1'; 100]).unwrap();
        assert_eq!(read_bounded(&p, 100).unwrap().len(), 100);
        let e = read_bounded(&p, 99).unwrap_err();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(
            e.to_string(),
            "more than 99 bytes, the most an input file may be"
        );
        if Path::new("/dev/zero").exists() {
            let e = read_bounded(Path::new("/dev/zero"), 1000).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        }
    }
}
