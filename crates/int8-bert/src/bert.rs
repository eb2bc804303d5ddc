//! A BERT encoder for inference, shaped for what the gateway asks of it: a
//! query of a dozen tokens, answered in a few milliseconds on two cores.
//!
//! Texts are not padded: each batch's tokens are stacked into one matrix for
//! the linear layers (where the time goes, see `int8.rs`) and attend
//! only within their own text. Q, K and V are one layer of three times the
//! width, so a block wakes the thread pool once for all three.

use std::path::Path;

use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::int8::Linear;
use crate::vectors::Vectors;

/// The parts of a Hugging Face `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub vocab_size: usize,
    #[serde(default = "default_segments")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f32,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_segments() -> usize {
    2
}

fn default_eps() -> f32 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

/// A loaded encoder.
pub struct Encoder {
    /// Word embeddings as int8 rows: 12 MB instead of 47, and a query reads a dozen rows.
    words: Vectors,
    positions: Vec<f32>,
    /// Token type 0 (sentence embeddings use one segment).
    segment: Vec<f32>,
    norm: Norm,
    blocks: Vec<Block>,
    heads: usize,
    dim: usize,
}

struct Block {
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Encoder {
    /// Reads `model.safetensors` for `config`. The error names what is wrong.
    pub fn load(weights: &Path, config: &Config) -> Result<Self, String> {
        if config.hidden_act != "gelu" {
            return Err(format!(
                "config.json: hidden_act {:?} is not supported (this encoder runs BERT's gelu)",
                config.hidden_act
            ));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err("config.json: hidden_size is not a multiple of num_attention_heads".into());
        }
        let bytes = std::fs::read(weights).map_err(|e| e.to_string())?;
        let file = SafeTensors::deserialize(&bytes).map_err(|e| e.to_string())?;
        // Some exports keep the "bert." prefix of a BertForX model.
        let prefix = if file.names().iter().any(|n| n.starts_with("bert.")) {
            "bert."
        } else {
            ""
        };
        let dim = config.hidden_size;
        let read = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
            let name = format!("{prefix}{name}");
            let view = file.tensor(&name).map_err(|_| format!("no tensor {name}"))?;
            if view.dtype() != Dtype::F32 || view.shape() != shape {
                return Err(format!(
                    "{name} is {:?} {:?}, expected F32 {shape:?}",
                    view.dtype(),
                    view.shape()
                ));
            }
            Ok(view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let norm = |name: &str| -> Result<Norm, String> {
            Ok(Norm {
                weight: read(&format!("{name}.weight"), &[dim])?,
                bias: read(&format!("{name}.bias"), &[dim])?,
                eps: config.layer_norm_eps,
            })
        };
        let linear = |names: &[String], inputs: usize, outputs: usize| -> Result<Linear, String> {
            let (mut weight, mut bias) = (Vec::new(), Vec::new());
            for name in names {
                weight.extend(read(&format!("{name}.weight"), &[outputs, inputs])?);
                bias.extend(read(&format!("{name}.bias"), &[outputs])?);
            }
            Ok(Linear::new(&weight, bias, inputs))
        };
        let words = read("embeddings.word_embeddings.weight", &[config.vocab_size, dim])?;
        let blocks = (0..config.num_hidden_layers)
            .map(|i| {
                let at = |name: &str| format!("encoder.layer.{i}.{name}");
                let qkv = ["query", "key", "value"].map(|p| at(&format!("attention.self.{p}")));
                Ok(Block {
                    qkv: linear(&qkv, dim, dim)?,
                    attention_out: linear(&[at("attention.output.dense")], dim, dim)?,
                    attention_norm: norm(&at("attention.output.LayerNorm"))?,
                    intermediate: linear(&[at("intermediate.dense")], dim, config.intermediate_size)?,
                    output: linear(&[at("output.dense")], config.intermediate_size, dim)?,
                    output_norm: norm(&at("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            words: Vectors::from_rows(&words.chunks_exact(dim).collect::<Vec<_>>()),
            positions: read(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, dim],
            )?,
            segment: read(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, dim],
            )?[..dim]
                .to_vec(),
            norm: norm("embeddings.LayerNorm")?,
            blocks,
            heads: config.num_attention_heads,
            dim,
        })
    }

    /// The last layer's hidden states of each text's tokens, one row of
    /// `dim` per token. Ids must be below the vocabulary size and texts no
    /// longer than the position table (the tokenizer sees to both).
    pub fn forward(&self, texts: &[&[u32]]) -> Vec<Vec<f32>> {
        // On a pool thread, this thread works through a product's tiles while
        // the other core steals some (a caller from outside the pool would
        // sleep, and be woken, for every product).
        rayon::scope(|_| self.run(texts))
    }

    fn run(&self, texts: &[&[u32]]) -> Vec<Vec<f32>> {
        let dim = self.dim;
        let lengths: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let mut h: Vec<f32> = Vec::with_capacity(lengths.iter().sum::<usize>() * dim);
        for ids in texts {
            for (position, &id) in ids.iter().enumerate() {
                let word = self.words.row(id);
                let place = &self.positions[position * dim..][..dim];
                h.extend(word.iter().zip(place).zip(&self.segment).map(|((w, p), s)| w + p + s));
            }
        }
        self.norm.apply(&mut h);
        for block in &self.blocks {
            let context = attention(&block.qkv.forward(&h), &lengths, self.heads, dim);
            let mut attended = block.attention_out.forward(&context);
            add(&mut attended, &h);
            block.attention_norm.apply(&mut attended);
            let mut inner = block.intermediate.forward(&attended);
            gelu(&mut inner);
            h = block.output.forward(&inner);
            add(&mut h, &attended);
            block.output_norm.apply(&mut h);
        }
        let mut rest = h.as_slice();
        lengths
            .iter()
            .map(|&n| {
                let (text, after) = rest.split_at(n * dim);
                rest = after;
                text.to_vec()
            })
            .collect()
    }
}

fn add(to: &mut [f32], from: &[f32]) {
    to.iter_mut().zip(from).for_each(|(a, b)| *a += b);
}

impl Norm {
    fn apply(&self, rows: &mut [f32]) {
        let n = self.weight.len() as f32;
        for row in rows.chunks_exact_mut(self.weight.len()) {
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

/// Self-attention of each text's tokens over its own tokens. `qkv` holds,
/// per token, its query, key and value (each `dim` wide, `heads` heads).
fn attention(qkv: &[f32], lengths: &[usize], heads: usize, dim: usize) -> Vec<f32> {
    let width = dim / heads;
    let scale = 1.0 / (width as f32).sqrt();
    let starts: Vec<usize> = lengths
        .iter()
        .scan(0, |at, &n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect();
    // One head of one text: n rows of `width`.
    let one_head = |start: usize, n: usize, head: usize| -> Vec<f32> {
        // The head's queries, keys and values, each a contiguous n × width.
        let (mut q, mut k, mut v) = (vec![0f32; n * width], vec![0f32; n * width], vec![0f32; n * width]);
        for t in 0..n {
            let token = &qkv[(start + t) * 3 * dim..][..3 * dim];
            let at = head * width;
            q[t * width..][..width].copy_from_slice(&token[at..][..width]);
            k[t * width..][..width].copy_from_slice(&token[dim + at..][..width]);
            v[t * width..][..width].copy_from_slice(&token[2 * dim + at..][..width]);
        }
        let mut out = vec![0f32; n * width];
        let mut weights = vec![0f32; n];
        for (query, out) in q.chunks_exact(width).zip(out.chunks_exact_mut(width)) {
            for (w, key) in weights.iter_mut().zip(k.chunks_exact(width)) {
                *w = dot(query, key) * scale;
            }
            let max = weights.iter().fold(f32::NEG_INFINITY, |m, &w| m.max(w));
            weights.iter_mut().for_each(|w| *w = (*w - max).exp());
            let inverse = 1.0 / weights.iter().sum::<f32>();
            for (&w, value) in weights.iter().zip(v.chunks_exact(width)) {
                out.iter_mut().zip(value).for_each(|(o, x)| *o += w * inverse * x);
            }
        }
        out
    };
    // Heads in parallel even for one text: it keeps the other core busy,
    // and awake for the next product.
    let one_text = |(&start, &n): (&usize, &usize)| -> Vec<f32> {
        let heads: Vec<Vec<f32>> = (0..heads).into_par_iter().map(|h| one_head(start, n, h)).collect();
        let mut out = vec![0f32; n * dim];
        for (h, rows) in heads.iter().enumerate() {
            for (row, part) in out.chunks_exact_mut(dim).zip(rows.chunks_exact(width)) {
                row[h * width..][..width].copy_from_slice(part);
            }
        }
        out
    };
    let texts: Vec<Vec<f32>> = starts.par_iter().zip(lengths).map(one_text).collect();
    texts.concat()
}

/// Dot product in eight running sums: one sum would be a chain of dependent
/// adds the compiler may not reorder.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8.remainder().iter().zip(b8.remainder()).map(|(x, y)| x * y).sum();
    for (a, b) in a8.zip(b8) {
        for i in 0..8 {
            sums[i] += a[i] * b[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// GELU as BERT has it, `x · Φ(x)`, with erf from Abramowitz and Stegun
/// 7.1.28 (error under 3e-7, far below the int8 step of the next layer's
/// input). Plain arithmetic, no branch and no libm call, so the loop runs in
/// vector lanes: calling erf per value cost more than a query's attention.
fn gelu(values: &mut [f32]) {
    const A: [f32; 6] = [
        0.070_523_08,
        0.042_282_01,
        0.009_270_527,
        0.000_152_014_3,
        0.000_276_567_2,
        0.000_043_063_8,
    ];
    for x in values {
        let a = x.abs() * std::f32::consts::FRAC_1_SQRT_2;
        let p = 1.0 + a * (A[0] + a * (A[1] + a * (A[2] + a * (A[3] + a * (A[4] + a * A[5])))));
        let p2 = p * p;
        let p4 = p2 * p2;
        let p8 = p4 * p4;
        // 1 / p¹⁶ goes to 0 for large |x| (p¹⁶ overflows to infinity, never NaN).
        let erf = (1.0 - 1.0 / (p8 * p8)).copysign(*x);
        *x *= 0.5 * (1.0 + erf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_from_the_table_matches_erf() {
        let xs: Vec<f32> = (-1000..=1000).map(|i| i as f32 / 97.0).collect();
        let mut got = xs.clone();
        gelu(&mut got);
        for (x, got) in xs.iter().zip(got) {
            let want = 0.5 * f64::from(*x) * (1.0 + libm::erf(f64::from(*x) / std::f64::consts::SQRT_2));
            assert!((f64::from(got) - want).abs() < 1e-5, "gelu({x})");
        }
        let mut far = [-9.0, 9.0, -1e30, 1e30];
        gelu(&mut far);
        assert!(far[0].abs() < 1e-9 && far[2].abs() < 1e-9, "{far:?}");
        assert_eq!((far[1], far[3]), (9.0, 1e30));
    }

    #[test]
    fn attention_stays_within_each_text() {
        // Two texts (2 tokens, 1 token), one head of width 2: the lone
        // token attends only to itself, so its output is its own value.
        let dim = 2;
        let token = |q: [f32; 2], k: [f32; 2], v: [f32; 2]| [q, k, v].concat();
        let qkv = [
            token([1.0, 0.0], [1.0, 0.0], [1.0, 1.0]),
            token([0.0, 1.0], [0.0, 1.0], [3.0, 3.0]),
            token([5.0, 5.0], [5.0, 5.0], [7.0, -7.0]),
        ]
        .concat();
        let out = attention(&qkv, &[2, 1], 1, dim);
        assert_eq!(&out[4..], &[7.0, -7.0]);
        // Token 0 leans to itself (q·k 1 against 0), between both values.
        assert!(out[0] > 1.0 && out[0] < 2.0, "{out:?}");
    }

    #[test]
    fn layer_norm_centres_and_scales_each_row() {
        let norm = Norm {
            weight: vec![2.0; 4],
            bias: vec![1.0; 4],
            eps: 1e-12,
        };
        let mut rows = vec![1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0];
        norm.apply(&mut rows);
        let first: f32 = rows[..4].iter().sum::<f32>() / 4.0;
        assert!((first - 1.0).abs() < 1e-5, "{rows:?}");
        assert_eq!(&rows[4..], &[1.0; 4], "a flat row is all bias");
    }
}
