//! `agent-openai`: the OpenAI Chat Completions adapter (async-openai's types, our own single
//! HTTP exchange), and where its configuration comes from.

#![warn(missing_docs)]

pub mod client;
pub mod config;
pub mod env;
mod errors;
pub mod http;
pub mod stream;
pub mod wire;

pub use client::{OpenAiModel, to_chat_request};
pub use config::{
    ApiKey, ConfigError, ConfigOverrides, FallbackNeed, OpenAiConfig, Sampling, resolve,
};
pub use env::ModelEnv;
pub use http::{DEFAULT_MAX_REPLY_BYTES, HttpError, parse_retry_after};
pub use stream::{DEFAULT_STREAM_IDLE, StreamError, Streaming};
pub use wire::{EncodeError, RequestEncoder};
