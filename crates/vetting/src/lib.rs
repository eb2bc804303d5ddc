//! Vetting tool definitions: what the gateway shows a model of each
//! downstream tool is trusted on first sight and pinned, scanned for text
//! aimed at the model, and held for an operator when it changes or looks
//! hostile. See the [`README`](../README.md).
//!
//! - [`pins`]: a definition's canonical hash, and the decision for one tool
//!   given what the store remembers of it;
//! - [`scan`]: the findings in a tool's texts (hidden characters, comments,
//!   instructions, shadowing, length);
//! - [`PinStore`]: what pinning asks of the store, which implements it.
//!
//! Pure but for the trait: the gateway's `security` module runs a review
//! over every listing and keeps the catalog to its outcome.

pub mod pins;
pub mod scan;
mod store;

pub use store::{NewPin, PinStore, ReviewState, ServerPins};
