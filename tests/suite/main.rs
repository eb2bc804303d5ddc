//! The test suite, one binary: each module was a test binary of its own,
//! each linking tantivy, QuickJS, the tokenizer and OpenTelemetry again.

#[macro_use]
mod common;
mod fake_index;
mod fake_registry;

mod archive;
mod audit;
mod cli;
mod code_mode;
mod conformance;
mod console;
mod credentials;
mod docs;
mod downstreams;
mod fuzz_seeds;
mod gateway;
mod index_network;
mod interop;
mod layout;
mod learning;
mod learning_service;
mod limits;
mod mcp_registry;
mod oauth;
mod one_call;
mod operations;
mod overrides;
mod policy;
mod projects;
mod reload;
mod replicas;
mod savings;
mod search;
mod security;
mod semantic;
mod sessions;
mod tasks;
mod traces;
mod widget;
