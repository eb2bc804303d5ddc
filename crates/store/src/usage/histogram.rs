//! Latency histograms: four buckets per doubling (each within 25% of its
//! values; 0–7 ms exact), so that hourly rollups can be summed and still
//! give p50/p95. Stored sparse: (bucket u8, count u32 LE) pairs.

/// Buckets for every u32 of milliseconds.
const BUCKETS: usize = 124;

/// Counts per latency bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Histogram(Box<[u32; BUCKETS]>);

impl Default for Histogram {
    fn default() -> Self {
        Self(Box::new([0; BUCKETS]))
    }
}

/// The bucket of `ms`: exact below 8, then the top three bits.
fn bucket(ms: u32) -> usize {
    if ms < 8 {
        return ms as usize;
    }
    let e = 31 - ms.leading_zeros() as usize;
    let sub = (ms >> (e - 2)) as usize & 3;
    4 * (e - 1) + sub
}

/// The middle of bucket `i`'s values.
fn middle(i: usize) -> u64 {
    if i < 8 {
        return i as u64;
    }
    let (e, sub) = (i / 4 + 1, (i % 4) as u64);
    let low = (4 + sub) << (e - 2);
    low + ((1u64 << (e - 2)) - 1) / 2
}

impl Histogram {
    /// Counts one call of `ms`.
    pub(super) fn add(&mut self, ms: u64) {
        let i = bucket(u32::try_from(ms).unwrap_or(u32::MAX));
        self.0[i] = self.0[i].saturating_add(1);
    }

    /// Adds every count of `other`.
    pub(super) fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0.iter()) {
            *mine = mine.saturating_add(*theirs);
        }
    }

    /// The nearest-rank `p`th percentile, as the middle of its bucket (0 when empty).
    pub(super) fn percentile(&self, p: u64) -> u64 {
        let total: u64 = self.0.iter().map(|&c| u64::from(c)).sum();
        if total == 0 {
            return 0;
        }
        let rank = (p * total).div_ceil(100).max(1);
        let mut seen = 0;
        for (i, &c) in self.0.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return middle(i);
            }
        }
        middle(BUCKETS - 1)
    }

    /// The sparse form kept in `usage_hours.latencies`.
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, &c) in self.0.iter().enumerate().filter(|(_, c)| **c > 0) {
            out.push(i as u8);
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// Reads [`Histogram::encode`]'s form; a malformed tail is ignored.
    pub(super) fn decode(bytes: &[u8]) -> Self {
        let mut h = Self::default();
        for pair in bytes.chunks_exact(5) {
            let i = pair[0] as usize;
            if i < BUCKETS {
                h.0[i] = h.0[i].saturating_add(u32::from_le_bytes([pair[1], pair[2], pair[3], pair[4]]));
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_within_a_quarter() {
        let mut last = 0;
        for ms in [0u32, 1, 7, 8, 9, 15, 16, 100, 1000, 65_535, 1 << 20, u32::MAX] {
            let b = bucket(ms);
            assert!(b >= last && b < BUCKETS, "{ms} -> {b}");
            last = b;
            let m = middle(b) as f64;
            assert!(
                (m - f64::from(ms)).abs() <= 0.25 * f64::from(ms).max(1.0),
                "{ms} shown as {m}"
            );
        }
        assert_eq!(bucket(10), bucket(11));
        assert_ne!(bucket(11), bucket(12));
    }

    #[test]
    fn percentiles_merge_and_survive_encoding() {
        let (mut a, mut b) = (Histogram::default(), Histogram::default());
        for ms in 1..=50 {
            a.add(ms);
        }
        for ms in 51..=100 {
            b.add(ms);
        }
        a.merge(&b);
        let p50 = a.percentile(50);
        let p95 = a.percentile(95);
        assert!((44..=56).contains(&p50), "p50 {p50}");
        assert!((84..=106).contains(&p95), "p95 {p95}");
        assert_eq!(Histogram::decode(&a.encode()), a);
        assert_eq!(Histogram::default().percentile(50), 0);
        assert_eq!(Histogram::decode(&[200, 1, 0, 0, 0, 7]), Histogram::default());
    }
}
