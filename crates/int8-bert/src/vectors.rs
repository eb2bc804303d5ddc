//! Tool vectors as a query scans them: one contiguous matrix of int8 codes
//! with a scale per row. A hybrid query reads every visible tool's vector,
//! and at 10k tools f32 rows were 15 MB a query, more than the caches hold:
//! the scan waited on memory. Int8 is a quarter of that, and moves a cosine
//! by about 0.003 (tested below), far under what separates tools.

/// Unit vectors of a snapshot's tools, by ordinal.
#[derive(Debug, Default, PartialEq)]
pub struct Vectors {
    dim: usize,
    /// Row-major codes, `dim` per tool.
    codes: Vec<i8>,
    /// Per tool: the value of code 1.
    scales: Vec<f32>,
}

/// A query vector quantized once for a whole scan.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryVector {
    codes: Vec<i8>,
    scale: f32,
}

impl QueryVector {
    /// `vector` (a unit vector) as codes.
    pub fn new(vector: &[f32]) -> Self {
        let mut codes = vec![0; vector.len()];
        let scale = quantize(vector, CODE_MAX, &mut codes);
        Self { codes, scale }
    }

    /// Length of the vector.
    pub fn dim(&self) -> usize {
        self.codes.len()
    }

    /// The codes, then the scale (little-endian): `dim + 4` bytes, a quarter
    /// of the f32 vector, for keeping a query's meaning in a store.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.codes.iter().map(|&c| c as u8).collect();
        out.extend_from_slice(&self.scale.to_le_bytes());
        out
    }

    /// A vector kept by [`QueryVector::to_bytes`]; `None` when `bytes` is too
    /// short to hold one.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let (codes, scale) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
        (!codes.is_empty()).then(|| Self {
            codes: codes.iter().map(|&c| c as i8).collect(),
            scale: f32::from_le_bytes(scale.try_into().expect("four bytes")),
        })
    }
}

/// Largest code of a tool or query vector.
const CODE_MAX: f32 = 127.0;

/// Writes `v`'s codes into `codes` (as long as `v`; the rest is left alone)
/// and returns its scale, the value of code 1: the largest magnitude maps to
/// ±`limit`.
pub(crate) fn quantize(v: &[f32], limit: f32, codes: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / limit } else { 1.0 };
    for (code, x) in codes.iter_mut().zip(v) {
        *code = (x / scale).round().clamp(-limit, limit) as i8;
    }
    scale
}

impl Vectors {
    /// Vectors from rows already computed (one unit vector per tool, by ordinal).
    pub fn from_rows<R: AsRef<[f32]>>(rows: &[R]) -> Self {
        let dim = rows.first().map_or(0, |r| r.as_ref().len());
        let mut codes = vec![0; dim * rows.len()];
        let scales = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                debug_assert_eq!(r.as_ref().len(), dim, "one length for every row");
                quantize(r.as_ref(), CODE_MAX, &mut codes[i * dim..][..dim])
            })
            .collect();
        Self { dim, codes, scales }
    }

    /// The vector of tool `ordinal`, as stored (dequantized).
    pub fn row(&self, ordinal: u32) -> Vec<f32> {
        let scale = self.scales[ordinal as usize];
        self.codes(ordinal).iter().map(|&c| f32::from(c) * scale).collect()
    }

    fn codes(&self, ordinal: u32) -> &[i8] {
        let at = ordinal as usize * self.dim;
        &self.codes[at..at + self.dim]
    }

    /// Cosine similarity of tool `ordinal` with the unit vector `query`.
    pub fn cosine(&self, ordinal: u32, query: &QueryVector) -> f32 {
        dot(self.codes(ordinal), &query.codes) as f32 * self.scales[ordinal as usize] * query.scale
    }

    /// Appends `row` (a query vector kept as a row, e.g. a remembered
    /// query's meaning); rows of another length than the first are refused.
    pub fn push(&mut self, row: &QueryVector) -> bool {
        if self.scales.is_empty() {
            self.dim = row.codes.len();
        } else if row.codes.len() != self.dim {
            return false;
        }
        self.codes.extend_from_slice(&row.codes);
        self.scales.push(row.scale);
        true
    }

    /// Removes row `ordinal`, moving the last row into its place (O(dim)).
    pub fn swap_remove(&mut self, ordinal: u32) {
        let (i, last) = (ordinal as usize, self.scales.len() - 1);
        if i != last {
            let (head, tail) = self.codes.split_at_mut(last * self.dim);
            head[i * self.dim..][..self.dim].copy_from_slice(&tail[..self.dim]);
        }
        self.codes.truncate(last * self.dim);
        self.scales.swap_remove(i);
    }

    /// Bytes the rows hold.
    pub fn heap_bytes(&self) -> usize {
        self.codes.capacity() + self.scales.capacity() * 4
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }
}

/// The integer dot product of two code rows. With AVX2 (checked at run time,
/// so the binary still runs on any x86-64) the same loop runs 16 lanes wide.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { dot_avx2(a, b) };
    }
    dot_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_lanes(a, b)
}

/// Integer sums may be reordered, so the compiler spreads this over vector lanes.
#[inline(always)]
fn dot_lanes(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit vector of `n` pseudo-random values.
    fn unit(n: usize, seed: f32) -> Vec<f32> {
        let v: Vec<f32> = (0..n).map(|i| ((i as f32 + 1.0) * seed).sin()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn int8_cosines_stay_within_a_hair_of_f32() {
        let rows: Vec<Vec<f32>> = (0..50).map(|i| unit(384, 0.37 + i as f32 * 0.011)).collect();
        let vectors = Vectors::from_rows(&rows);
        assert_eq!((vectors.len(), vectors.is_empty()), (50, false));
        for q in [unit(384, 0.5), unit(384, 0.371), rows[7].clone()] {
            let query = QueryVector::new(&q);
            for (i, r) in rows.iter().enumerate() {
                let exact: f32 = r.iter().zip(&q).map(|(x, y)| x * y).sum();
                let got = vectors.cosine(i as u32, &query);
                assert!((got - exact).abs() < 0.01, "row {i}: {got} vs {exact}");
            }
        }
        assert!((vectors.cosine(7, &QueryVector::new(&rows[7])) - 1.0).abs() < 0.01);
    }

    #[test]
    fn rows_come_back_close_and_odd_lengths_work() {
        let rows = [vec![0.6, -0.8, 0.0], vec![0.0, 0.0, 0.0]];
        let v = Vectors::from_rows(&rows);
        for (got, want) in v.row(0).iter().zip(&rows[0]) {
            assert!((got - want).abs() < 0.005);
        }
        assert_eq!(v.row(1), [0.0, 0.0, 0.0]);
        assert!((v.cosine(0, &QueryVector::new(&[0.6, -0.8, 0.0])) - 1.0).abs() < 0.01);
        assert!(Vectors::default().is_empty());
        assert_eq!(dot(&[1, -2, 3], &[4, 5, -6]), 4 - 10 - 18);
    }

    #[test]
    fn rows_push_and_remove_and_query_vectors_round_trip_as_bytes() {
        let rows: Vec<Vec<f32>> = (0..3).map(|i| unit(8, 0.3 + i as f32 * 0.2)).collect();
        let mut v = Vectors::default();
        for r in &rows {
            assert!(v.push(&QueryVector::new(r)));
        }
        assert!(!v.push(&QueryVector::new(&unit(4, 0.1))), "another length");
        assert_eq!(v, Vectors::from_rows(&rows));
        v.swap_remove(0);
        assert_eq!(v, Vectors::from_rows(&[rows[2].clone(), rows[1].clone()]));
        v.swap_remove(1);
        v.swap_remove(0);
        assert!(v.is_empty());
        let q = QueryVector::new(&rows[1]);
        let bytes = q.to_bytes();
        assert_eq!(bytes.len(), 8 + 4);
        let back = QueryVector::from_bytes(&bytes).unwrap();
        assert_eq!((back.dim(), &back), (8, &q));
        assert!(QueryVector::from_bytes(&[1, 2, 3]).is_none());
        assert!(QueryVector::from_bytes(&[1, 2, 3, 4]).is_none());
    }
}
