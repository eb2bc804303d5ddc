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
#[derive(Debug)]
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
}
