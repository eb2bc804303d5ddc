//! The vocabulary every layer of the gateway shares, and nothing of ours below it:
//! [`wire`] (meta-tool names, `_meta` keys, the bounds on a caller's strings), [`keys`]
//! (`ServerName`, `ToolKey`, `RequestId`), [`outcome`] (how a call ended), [`text`], [`mask`] and [`leaks`]
//! (secrets kept out of what people and models see), [`uris`] and [`validate`].

pub mod keys;
pub mod leaks;
pub mod mask;
pub mod outcome;
pub mod text;
pub mod uris;
pub mod validate;
pub mod wire;
