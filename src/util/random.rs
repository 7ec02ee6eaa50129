//! The one source of unpredictable values: names of temporary files and control directories,
//! the run marker, retry jitter. From the kernel (`/dev/urandom`); a clock/pid mix only if
//! that cannot be read.

use std::io::Read;

/// `N` random bytes.
fn bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ (u64::from(std::process::id()) << 32);
        for v in b.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = x as u8;
        }
    }
    b
}

/// 64 unpredictable bits.
pub(crate) fn random_u64() -> u64 {
    u64::from_le_bytes(bytes::<8>())
}

/// 12 random characters [a-z0-9].
pub(crate) fn random_name() -> String {
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    bytes::<RANDOM_NAME_LEN>()
        .iter()
        .map(|v| ALPHA[*v as usize % ALPHA.len()] as char)
        .collect()
}

/// The length of [`random_name`].
pub(crate) const RANDOM_NAME_LEN: usize = 12;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_alphanumeric_and_differ() {
        let (a, b) = (random_name(), random_name());
        assert_eq!(a.len(), RANDOM_NAME_LEN);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            "{a}"
        );
        assert_ne!(a, b);
        assert_ne!(random_u64(), random_u64());
    }
}
