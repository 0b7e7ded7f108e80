//! `agent-openai`: the OpenAI Chat Completions adapter on `async-openai`, and where its
//! configuration comes from.

pub mod client;
pub mod config;

pub use client::{OpenAiModel, to_chat_request};
pub use config::{ApiKey, ConfigError, ConfigOverrides, OpenAiConfig, Sampling, resolve};
