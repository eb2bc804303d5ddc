//! The vocabulary every layer of the gateway shares, and nothing of ours below it:
//! [`wire`] (meta-tool names, `_meta` keys, the bounds on a caller's strings), [`keys`]
//! (`ServerName`, `ToolKey`, `RequestId`), [`outcome`] (how a call ended), [`text`], [`mask`]
//! (secrets kept out of what people see), [`uris`] and [`validate`]. The credential
//! scanner built on them is the `leaks` crate.

pub mod keys;
pub mod mask;
pub mod outcome;
pub mod text;
pub mod uris;
pub mod validate;
pub mod wire;
