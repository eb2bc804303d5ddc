//! The encoder's matrix products in int8: a query's handful of tokens against
//! ten million weights. In f32 that is about 13 ms on one core of this class
//! of machine; with 8-bit codes and AVX2's byte multiply-add it is about
//! 3.5 ms, and the weights take a quarter of the memory.
//!
//! Weights are quantized once, per output row, to 7-bit codes: AVX2 adds
//! pairs of u8 × i8 products into i16, and 255 · 63 · 2 stays under 32,767,
//! so no sum ever saturates (8-bit weights could). Activations are quantized
//! per token row, asymmetrically, to u8: after GELU most values sit just
//! above -0.17, and a zero point keeps the full 256 steps for what is there.
//! The products are exact integers, so the AVX2 kernel and the portable one
//! agree to the bit.

use std::ops::Range;

use rayon::prelude::*;

use crate::vectors::quantize;

/// Largest weight code (see the module note).
const WEIGHT_MAX: f32 = 63.0;

/// Codes per AVX2 step; rows are padded with zero codes to a multiple.
const LANES: usize = 32;

/// Output rows per AVX2 block and token rows per block: 12 accumulators
/// plus three weight rows and one token row fill the 16 registers.
const OUT_BLOCK: usize = 3;
const ROW_BLOCK: usize = 4;

/// A tile of work handed to one thread: token rows × output rows.
const TILE_ROWS: usize = 64;
const TILE_OUTPUTS: usize = 96;

/// Below this many multiply-adds a product runs on the calling thread:
/// sharing it with the other core costs more than it saves.
const PARALLEL_FROM: usize = 1 << 20;

/// A linear layer, `y = x · Wᵀ + b`, with `W` as int8 codes.
#[derive(Debug)]
pub(crate) struct Linear {
    inputs: usize,
    /// `inputs` rounded up to [`LANES`].
    stride: usize,
    outputs: usize,
    /// `outputs` rows of `stride` codes.
    codes: Vec<i8>,
    /// Per output row: the weight of code 1.
    scales: Vec<f32>,
    /// Per output row: the sum of its codes, to take out the activations' zero point.
    sums: Vec<i32>,
    bias: Vec<f32>,
}

impl Linear {
    /// A layer from `weight` (`bias.len()` rows of `inputs`, row-major, as
    /// PyTorch stores a `Linear`) and `bias`.
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, inputs: usize) -> Self {
        let outputs = bias.len();
        assert_eq!(weight.len(), outputs * inputs, "weight is outputs × inputs");
        let stride = inputs.div_ceil(LANES) * LANES;
        let mut codes = vec![0i8; outputs * stride];
        let mut scales = Vec::with_capacity(outputs);
        let mut sums = Vec::with_capacity(outputs);
        for (row, out) in weight.chunks_exact(inputs).zip(codes.chunks_exact_mut(stride)) {
            scales.push(quantize(row, WEIGHT_MAX, out));
            sums.push(out.iter().map(|&c| i32::from(c)).sum());
        }
        Self {
            inputs,
            stride,
            outputs,
            codes,
            scales,
            sums,
            bias,
        }
    }

    /// `x` (rows of `inputs`, row-major) through the layer: rows of `outputs`.
    pub(crate) fn forward(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / self.inputs;
        let tokens = Activations::new(x, self.inputs, self.stride);
        let parallel = rows * self.outputs * self.inputs >= PARALLEL_FROM;
        // A query's few rows: a few shares of the outputs per thread, so a
        // core that joins late still takes some. A batch: tiles whose token
        // rows stay in cache while the weights stream by.
        let (row_tile, output_tile) = if rows <= TILE_ROWS {
            let shares = if parallel { 4 * rayon::current_num_threads() } else { 1 };
            (rows.max(1), self.outputs.div_ceil(shares * OUT_BLOCK) * OUT_BLOCK)
        } else {
            (TILE_ROWS, TILE_OUTPUTS)
        };
        let tiles: Vec<(Range<usize>, Range<usize>)> = split(rows, row_tile)
            .flat_map(|r| split(self.outputs, output_tile).map(move |o| (r.clone(), o)))
            .collect();
        let run = |(r, o): &(Range<usize>, Range<usize>)| self.tile(&tokens, r.clone(), o.clone());
        let parts: Vec<Vec<f32>> = if parallel {
            tiles.par_iter().map(run).collect()
        } else {
            tiles.iter().map(run).collect()
        };
        let mut y = vec![0f32; rows * self.outputs];
        for ((r, o), part) in tiles.iter().zip(parts) {
            for (m, values) in r.clone().zip(part.chunks_exact(o.len())) {
                y[m * self.outputs..][o.clone()].copy_from_slice(values);
            }
        }
        y
    }

    /// Outputs `outputs` of token rows `rows`, row-major.
    fn tile(&self, tokens: &Activations, rows: Range<usize>, outputs: Range<usize>) -> Vec<f32> {
        let mut dots = vec![0i32; rows.len() * outputs.len()];
        let codes = Codes {
            tokens: &tokens.codes,
            weights: &self.codes,
            stride: self.stride,
        };
        products(codes, rows.clone(), outputs.clone(), &mut dots);
        let (bias, scales, sums) = (
            &self.bias[outputs.clone()],
            &self.scales[outputs.clone()],
            &self.sums[outputs.clone()],
        );
        let mut values = vec![0f32; dots.len()];
        for ((m, dots), values) in rows
            .zip(dots.chunks_exact(outputs.len()))
            .zip(values.chunks_exact_mut(outputs.len()))
        {
            let (scale, zero) = (tokens.scales[m], tokens.zeros[m]);
            for ((((v, &dot), b), s), sum) in values.iter_mut().zip(dots).zip(bias).zip(scales).zip(sums) {
                *v = b + scale * s * (dot - zero * sum) as f32;
            }
        }
        values
    }
}

/// `0..n` in pieces of at most `size`.
fn split(n: usize, size: usize) -> impl Iterator<Item = Range<usize>> + Clone {
    (0..n).step_by(size).map(move |start| start..(start + size).min(n))
}

/// Token rows as u8 codes: `x ≈ scale · (code − zero)`.
struct Activations {
    codes: Vec<u8>,
    scales: Vec<f32>,
    zeros: Vec<i32>,
}

impl Activations {
    fn new(x: &[f32], inputs: usize, stride: usize) -> Self {
        let rows = x.len() / inputs;
        let mut codes = vec![0u8; rows * stride];
        let mut scales = Vec::with_capacity(rows);
        let mut zeros = Vec::with_capacity(rows);
        for (row, out) in x.chunks_exact(inputs).zip(codes.chunks_exact_mut(stride)) {
            // The range always holds 0, so that 0 has an exact code.
            let (lo, hi) = row.iter().fold((0f32, 0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            let scale = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
            let zero = (-lo / scale).round();
            // Adding ½ then a saturating cast rounds without a libm call per value.
            let (inverse, shift) = (1.0 / scale, zero + 0.5);
            for (code, v) in out.iter_mut().zip(row) {
                *code = (v * inverse + shift) as u8;
            }
            scales.push(scale);
            zeros.push(zero as i32);
        }
        Self { codes, scales, zeros }
    }
}

/// The two sides of a product: token rows and weight rows, each `stride` codes.
#[derive(Clone, Copy)]
struct Codes<'a> {
    tokens: &'a [u8],
    weights: &'a [i8],
    stride: usize,
}

/// `dots[m][j] = Σₖ tokens[m][k] · weights[j][k]` for the token rows `rows`
/// and output rows `outputs`.
fn products(codes: Codes, rows: Range<usize>, outputs: Range<usize>, dots: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::products(codes, rows, outputs, dots) };
    }
    products_portable(codes, rows, outputs, dots);
}

fn products_portable(codes: Codes, rows: Range<usize>, outputs: Range<usize>, dots: &mut [i32]) {
    let Codes {
        tokens,
        weights,
        stride,
    } = codes;
    let width = outputs.len();
    for (i, m) in rows.enumerate() {
        let t = &tokens[m * stride..][..stride];
        for (j, o) in outputs.clone().enumerate() {
            let w = &weights[o * stride..][..stride];
            dots[i * width + j] = t.iter().zip(w).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::{Codes, LANES, OUT_BLOCK, ROW_BLOCK};

    /// As [`super::products_portable`], [`OUT_BLOCK`] outputs × [`ROW_BLOCK`]
    /// rows at a time; outputs left over go to the portable loop.
    #[target_feature(enable = "avx2")]
    pub(super) fn products(codes: Codes, rows: Range<usize>, outputs: Range<usize>, dots: &mut [i32]) {
        let Codes {
            tokens,
            weights,
            stride,
        } = codes;
        assert!(tokens.len() >= rows.end * stride && weights.len() >= outputs.end * stride);
        assert!(dots.len() >= rows.len() * outputs.len() && stride.is_multiple_of(LANES));
        let width = outputs.len();
        let blocked = outputs.start + width / OUT_BLOCK * OUT_BLOCK;
        let mut block = [[0i32; OUT_BLOCK]; ROW_BLOCK];
        for o in (outputs.start..blocked).step_by(OUT_BLOCK) {
            for m in rows.clone().step_by(ROW_BLOCK) {
                let count = ROW_BLOCK.min(rows.end - m);
                // SAFETY: rows m..m+count and o..o+OUT_BLOCK are in bounds (asserted above).
                unsafe {
                    let t = tokens.as_ptr().add(m * stride);
                    let w = weights.as_ptr().add(o * stride);
                    match count {
                        4 => tile::<4>(t, w, stride, &mut block),
                        3 => tile::<3>(t, w, stride, &mut block),
                        2 => tile::<2>(t, w, stride, &mut block),
                        _ => tile::<1>(t, w, stride, &mut block),
                    }
                }
                for (r, sums) in block.iter().take(count).enumerate() {
                    let at = (m - rows.start + r) * width + (o - outputs.start);
                    dots[at..at + OUT_BLOCK].copy_from_slice(sums);
                }
            }
        }
        if blocked < outputs.end {
            let mut rest = vec![0i32; rows.len() * (outputs.end - blocked)];
            super::products_portable(codes, rows.clone(), blocked..outputs.end, &mut rest);
            let tail = outputs.end - blocked;
            for (r, sums) in rest.chunks_exact(tail).enumerate() {
                let at = r * width + (blocked - outputs.start);
                dots[at..at + tail].copy_from_slice(sums);
            }
        }
    }

    /// `ROWS` token rows at `t` against three weight rows at `w`.
    ///
    /// # Safety
    /// `t` must hold `ROWS` rows and `w` three rows, each of `stride` codes.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn tile<const ROWS: usize>(
        t: *const u8,
        w: *const i8,
        stride: usize,
        out: &mut [[i32; OUT_BLOCK]; ROW_BLOCK],
    ) {
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); OUT_BLOCK]; ROWS];
        for k in (0..stride).step_by(LANES) {
            // SAFETY: k + LANES ≤ stride, within each row (the caller's contract).
            let (w0, w1, w2) = unsafe {
                (
                    _mm256_loadu_si256(w.add(k).cast()),
                    _mm256_loadu_si256(w.add(stride + k).cast()),
                    _mm256_loadu_si256(w.add(2 * stride + k).cast()),
                )
            };
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: as above.
                let x = unsafe { _mm256_loadu_si256(t.add(r * stride + k).cast()) };
                // u8 × i8 pairs into i16 (7-bit weights: never saturates), then pairs into i32.
                acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w0), ones));
                acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w1), ones));
                acc[2] = _mm256_add_epi32(acc[2], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w2), ones));
            }
        }
        for (acc, out) in acc.iter().zip(out.iter_mut()) {
            for (v, out) in acc.iter().zip(out.iter_mut()) {
                let half = _mm_add_epi32(_mm256_castsi256_si128(*v), _mm256_extracti128_si256(*v, 1));
                let quarter = _mm_hadd_epi32(half, half);
                *out = _mm_cvtsi128_si32(_mm_hadd_epi32(quarter, quarter));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pseudo-random values in -1..1 (xorshift: sines of one frequency
    /// would correlate and cancel in the sums).
    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    fn exact(x: &[f32], w: &[f32], b: &[f32], inputs: usize) -> Vec<f32> {
        x.chunks_exact(inputs)
            .flat_map(|row| {
                w.chunks_exact(inputs)
                    .zip(b)
                    .map(|(w, b)| b + row.iter().zip(w).map(|(x, w)| x * w).sum::<f32>())
            })
            .collect()
    }

    #[test]
    fn int8_products_stay_close_to_f32_on_awkward_shapes() {
        // 40 inputs (not a multiple of 32), 7 outputs (not of 3), 6 rows (not of 4).
        for (rows, inputs, outputs) in [(6, 40, 7), (1, 384, 384), (70, 64, 100)] {
            let x = noise(rows * inputs, 7);
            let w = noise(outputs * inputs, 11);
            let b = noise(outputs, 13);
            let got = Linear::new(&w, b.clone(), inputs).forward(&x);
            let want = exact(&x, &w, &b, inputs);
            // 7-bit weights and 8-bit activations: about 1% of the signal is noise.
            let rms = |v: &mut dyn Iterator<Item = f32>| v.map(|x| x * x).sum::<f32>().sqrt();
            let noise = rms(&mut got.iter().zip(&want).map(|(g, e)| g - e)) / rms(&mut want.iter().copied());
            assert!(noise < 0.02, "{rows}×{inputs}→{outputs}: relative error {noise}");
        }
    }

    #[test]
    fn the_simd_kernel_and_the_portable_one_agree_to_the_bit() {
        let (rows, outputs, stride) = (9, 11, 64);
        let tokens: Vec<u8> = (0..rows * stride).map(|i| (i * 37 % 256) as u8).collect();
        let weights: Vec<i8> = (0..outputs * stride).map(|i| (i * 53 % 127) as i8 - 63).collect();
        let mut portable = vec![0; rows * outputs];
        let codes = Codes {
            tokens: &tokens,
            weights: &weights,
            stride,
        };
        products_portable(codes, 0..rows, 0..outputs, &mut portable);
        let mut dispatched = vec![0; rows * outputs];
        products(codes, 0..rows, 0..outputs, &mut dispatched);
        assert_eq!(dispatched, portable);
        // A sub-tile, as the threads see one.
        let mut part = vec![0; 5 * 4];
        products(codes, 3..8, 6..10, &mut part);
        for (i, m) in (3..8).enumerate() {
            assert_eq!(part[i * 4..i * 4 + 4], portable[m * outputs + 6..m * outputs + 10]);
        }
    }

    #[test]
    fn activations_keep_zero_exact_and_one_sided_rows_use_every_step() {
        let a = Activations::new(&[0.0, 0.5, 1.0, 0.0, 0.0, 0.0], 3, 32);
        assert_eq!((a.zeros[0], a.codes[0], a.codes[2]), (0, 0, 255));
        assert_eq!(a.zeros[1], 0, "an all-zero row");
        let b = Activations::new(&[-0.17, 2.0], 2, 32);
        assert!(b.codes[0] < b.zeros[0] as u8 && b.codes[1] == 255);
        let back = b.scales[0] * (f32::from(b.codes[0]) - b.zeros[0] as f32);
        assert!((back + 0.17).abs() < b.scales[0]);
    }
}
