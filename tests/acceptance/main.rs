//! Per-chapter acceptance tests: offline, no credentials, `OPENAI_*` cleared.
//!
//! One test binary with one module per chapter, so `just test-chNN` can filter on `chNN::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cache;
mod ch01;
mod ch02;
mod ch03;
mod ch04;
mod ch05;
mod ch06;
mod ch07;
mod ch08;
mod ch09;
mod ch10;
mod ch11;
mod ch12;
mod ch13;
mod ch14;
mod ch15;
mod ch15_restart;
mod ch15_settings;
mod ch15_skills;
mod ch15_team_file;
mod ch16;
mod ch17;
mod ch18;
mod ch19;
mod ch19_cli;
mod ch19_interop;
mod ch20;
mod cli;
mod doc_excerpts;
mod docs;
mod first_run;
mod fragments;
mod glossary;
mod pty;
mod requests;
mod sandbox;
mod security_key;
mod support;
mod team_support;
mod untrusted;
