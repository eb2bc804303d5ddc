//! CPU inference for a sentence-embedding model, in int8: the gateway's
//! hybrid search embeds each new query on the request path, so a dozen
//! tokens must go through BERT in a few milliseconds on two cores.
//!
//! A crate of its own so that debug builds (and so the test suite, which
//! embeds a benchmark's 1,764 tools) can run it optimized: at opt-level 0
//! the kernels are some fifty times slower.
//!
//! - [`bert`]: the encoder (feature `encoder`), read from `model.safetensors`.
//! - `int8`: its linear layers, int8 products with an AVX2 kernel.
//! - [`vectors`]: int8 unit-vector rows, for the word embeddings and for
//!   scanning tool vectors by cosine.

// The one crate of the workspace where unsafe is the point: the AVX2 kernel
// and its feature check. Each block says why it holds.
#![allow(unsafe_code)]

#[cfg(feature = "encoder")]
pub mod bert;
#[cfg(feature = "encoder")]
mod int8;
pub mod vectors;

#[cfg(feature = "encoder")]
pub use bert::{Config, Encoder};
pub use vectors::{QueryVector, Vectors};
