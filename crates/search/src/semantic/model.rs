//! The sentence-embedding model: a BERT encoder ([`int8_bert`], int8 on
//! the CPU) and its WordPiece tokenizer, mean-pooled over the tokens and
//! L2-normalised, as sentence-transformers does for all-MiniLM-L6-v2.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationParams};

use super::Error;
use int8_bert::{Config, Encoder};

/// Tokens read per text: all-MiniLM-L6-v2 was trained on 128-token inputs,
/// and the attention cost grows with the square of the length, so a longer
/// window costs time for little (a folder may ask for less).
const MAX_TOKENS: usize = 128;

/// A loaded model, ready to embed.
pub(super) struct Model {
    encoder: Encoder,
    tokenizer: Tokenizer,
    dim: usize,
    max_tokens: usize,
}

impl Model {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    /// Any mismatch between them is an error here, not at the first query.
    pub(super) fn load(dir: &Path) -> Result<Self, Error> {
        let bad = |reason: String| Error::Model {
            dir: dir.display().to_string(),
            reason,
        };
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| bad(format!("{name}: {e}")));
        let config: Config =
            serde_json::from_str(&read("config.json")?).map_err(|e| bad(format!("config.json: {e}")))?;
        let max_tokens = std::fs::read_to_string(dir.join("sentence_bert_config.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v.get("max_seq_length")?.as_u64())
            .map_or(MAX_TOKENS, |n| n as usize)
            .min(MAX_TOKENS)
            .min(config.max_position_embeddings);
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        if tokenizer.get_vocab_size(true) > config.vocab_size {
            return Err(bad(format!(
                "tokenizer.json has {} tokens but config.json's vocab_size is {}: they are not the same model",
                tokenizer.get_vocab_size(true),
                config.vocab_size
            )));
        }
        // Texts are not padded: the encoder runs each at its own length
        // (a tokenizer.json may ask to pad to a fixed length).
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        let encoder = Encoder::load(&dir.join("model.safetensors"), &config)
            .map_err(|e| bad(format!("model.safetensors does not fit config.json: {e}")))?;
        Ok(Self {
            encoder,
            tokenizer,
            dim: config.hidden_size,
            max_tokens,
        })
    }

    /// Length of every embedding.
    pub(super) fn dim(&self) -> usize {
        self.dim
    }

    /// Tokens read per text (the rest is cut).
    pub(super) fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// One unit vector per text, in order.
    pub(super) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Embed(e.to_string()))?;
        let ids: Vec<&[u32]> = encodings.iter().map(tokenizers::Encoding::get_ids).collect();
        let vectors = self
            .encoder
            .forward(&ids)
            .into_iter()
            .map(|tokens| mean_unit(&tokens, self.dim))
            .collect();
        Ok(vectors)
    }
}

/// The mean of `rows` (each `dim` long), scaled to unit length.
fn mean_unit(rows: &[f32], dim: usize) -> Vec<f32> {
    let mut mean = vec![0f32; dim];
    for row in rows.chunks_exact(dim) {
        mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
    }
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        mean.iter_mut().for_each(|v| *v /= norm);
    }
    mean
}
