//! The sentence-embedding model: a BERT encoder (candle, CPU) and its
//! WordPiece tokenizer, mean-pooled over real tokens and L2-normalised, as
//! sentence-transformers does for all-MiniLM-L6-v2.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use super::Error;

/// Tokens read per text: all-MiniLM-L6-v2 was trained on 128-token inputs,
/// and the attention cost grows with the square of the length, so a longer
/// window costs time for little (a folder may ask for less).
const MAX_TOKENS: usize = 128;

/// A loaded model, ready to embed.
pub struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    max_tokens: usize,
}

impl Model {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    /// Any mismatch between them is an error here, not at the first query.
    pub fn load(dir: &Path) -> Result<Self, Error> {
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
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file is mapped read-only and never written while mapped;
        // a model folder is not edited under a running gateway.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
            .map_err(|e| bad(format!("model.safetensors: {e}")))?;
        let bert = BertModel::load(vb, &config)
            .map_err(|e| bad(format!("model.safetensors does not fit config.json: {e}")))?;
        Ok(Self {
            bert,
            tokenizer,
            dim: config.hidden_size,
            max_tokens,
        })
    }

    /// Length of every embedding.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Tokens read per text (the rest is cut).
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// One unit vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let fail = |e: &dyn std::fmt::Display| Error::Embed(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| fail(&e))?;
        let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, Error> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &Device::Cpu))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| fail(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| fail(&e))
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let types = ids.zeros_like()?;
            let hidden = self.bert.forward(&ids, &types, Some(&mask))?; // (batch, tokens, dim)
            // Mean over real tokens only: padding must not dilute short texts.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norms)?.to_vec2::<f32>()
        };
        run().map_err(|e| fail(&e))
    }
}
