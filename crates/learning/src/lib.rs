//! Learning from use, in one place: a project's successful runs of the tools
//! its discoveries found teach its search. The [`README`](../README.md)
//! follows one discovery through to what it teaches.
//!
//! - [`terms`]: the term prior, which counts a query's words per tool;
//! - [`meanings`]: the memory of meanings, which keeps a query's embedding;
//! - [`Prior`]: both, as one discovery reads them, for the ranking, and
//!   [`order`], how a ranking places what they lift;
//! - [`Learning`]: the service that links an execute to its discovery and
//!   teaches, loading and keeping each project's memory through
//!   [`LearningStore`], which the store implements with its SQL;
//! - [`retention`]: how much is kept and for how long, defined once for the
//!   memory, the links and the store.
//!
//! Pure but for [`Learning`], which keeps its state in memory and reaches the
//! store only through the trait.

pub mod meanings;
mod prior;
pub mod retention;
mod service;
mod store;
pub mod terms;

pub use prior::{Lift, Prior, Scored, order};
pub use service::{Asked, Learning, Scope, Trail};
pub use store::{Association, LearningStore, Link, Remembered, Use};
