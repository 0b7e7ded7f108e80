//! Where the model configuration comes from: flags, then the environment, then `.env`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

pub const BASE_URL_VAR: &str = "OPENAI_BASE_URL";
pub const API_KEY_VAR: &str = "OPENAI_API_KEY";
pub const MODEL_VAR: &str = "OPENAI_MODEL";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The API key. It has no `Display` and its `Debug` is redacted, so it cannot end up in a log
/// line or an error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The secret itself: only the HTTP client and the redaction code call this.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "[redacted]")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// A complete configuration for the Chat Completions adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    pub base_url: String,
    pub api_key: ApiKey,
    pub model: String,
    /// Sampling settings; `None` fields leave the server's defaults.
    pub sampling: Sampling,
    pub request_timeout: std::time::Duration,
}

/// Request settings besides the messages. Both are optional; small local models need
/// `max_tokens`, or one rambling reply can take minutes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

/// How long one model request may take before it fails with a transport error. A hung server
/// must end the run with a message, not freeze it.
pub const DEFAULT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Values given on the command line; they win over everything else. There is deliberately
/// no API-key flag: command lines are visible to every user of the machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigOverrides {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub sampling: Sampling,
    pub request_timeout: Option<std::time::Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "missing model configuration: {}.\n\
         Set {} in the environment (for example `export {}=...`) or in a `.env` file in the \
         working directory, or pass the matching flag (--model, --base-url).\n\
         OPENAI_BASE_URL defaults to {DEFAULT_BASE_URL}; for a local OpenAI-compatible server set \
         it to the server's /v1 address, and any non-empty key works (OPENAI_API_KEY=local).\n\
         No API key? Run `just local-model` to serve a small model on 127.0.0.1; it prints the \
         settings to use.",
        .missing.join(", "),
        if .missing.len() == 1 { "it" } else { "them" },
        .missing[0]
    )]
    Missing { missing: Vec<&'static str> },
    #[error("{path}:{line}: {reason}")]
    DotEnv {
        path: String,
        line: usize,
        reason: String,
    },
}

/// Parses a `.env` file: `KEY=VALUE` lines, `#` comments, optional `export `, optional single
/// or double quotes around the value. Nothing is expanded.
pub fn parse_dotenv(text: &str, origin: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut vars = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(ConfigError::DotEnv {
                path: origin.to_string(),
                line: index + 1,
                reason: "expected KEY=VALUE".into(),
            });
        };
        let value = value.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        vars.insert(key.trim().to_string(), unquoted.to_string());
    }
    Ok(vars)
}

/// Resolves the configuration. `env` looks a variable up in the process environment (a
/// parameter so tests never read the real one); `dotenv` is the `.env` file to consult last.
pub fn resolve(
    overrides: &ConfigOverrides,
    env: impl Fn(&str) -> Option<String>,
    dotenv: Option<&Path>,
) -> Result<OpenAiConfig, ConfigError> {
    let file = match dotenv {
        Some(path) if path.is_file() => {
            let origin = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|err| ConfigError::DotEnv {
                path: origin.clone(),
                line: 0,
                reason: err.to_string(),
            })?;
            parse_dotenv(&text, &origin)?
        }
        _ => BTreeMap::new(),
    };
    let lookup = |flag: Option<&String>, var: &str| -> Option<String> {
        flag.cloned()
            .or_else(|| env(var))
            .or_else(|| file.get(var).cloned())
            .filter(|v| !v.trim().is_empty())
    };
    let base_url = lookup(overrides.base_url.as_ref(), BASE_URL_VAR);
    let api_key = lookup(None, API_KEY_VAR);
    let model = lookup(overrides.model.as_ref(), MODEL_VAR);
    let mut missing = Vec::new();
    if api_key.is_none() {
        missing.push(API_KEY_VAR);
    }
    if model.is_none() {
        missing.push(MODEL_VAR);
    }
    match (api_key, model) {
        (Some(key), Some(model)) => Ok(OpenAiConfig {
            base_url: base_url
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
                .trim_end_matches('/')
                .to_string(),
            api_key: ApiKey::new(key),
            model,
            sampling: overrides.sampling,
            request_timeout: overrides.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT),
        }),
        _ => Err(ConfigError::Missing { missing }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn flags_win_over_env_which_wins_over_dotenv() {
        let dir = tempfile::tempdir().unwrap();
        let dotenv = dir.path().join(".env");
        std::fs::write(
            &dotenv,
            "# local\nexport OPENAI_MODEL='file-model'\nOPENAI_API_KEY=\"file-key\"\nOPENAI_BASE_URL=http://file/v1/\n",
        )
        .unwrap();
        let env = env_of(&[(MODEL_VAR, "env-model")]);
        let overrides = ConfigOverrides {
            base_url: Some("http://flag/v1".into()),
            ..ConfigOverrides::default()
        };
        let config = resolve(&overrides, &env, Some(&dotenv)).unwrap();
        assert_eq!(
            config,
            OpenAiConfig {
                base_url: "http://flag/v1".into(),
                api_key: ApiKey::new("file-key"),
                model: "env-model".into(),
                sampling: Sampling::default(),
                request_timeout: DEFAULT_REQUEST_TIMEOUT,
            }
        );
        let from_file = resolve(&ConfigOverrides::default(), env_of(&[]), Some(&dotenv)).unwrap();
        assert_eq!(from_file.base_url, "http://file/v1");
    }

    #[test]
    fn missing_names_every_variable_and_points_to_the_local_model() {
        let err = resolve(
            &ConfigOverrides::default(),
            env_of(&[(API_KEY_VAR, "  ")]),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ConfigError::Missing {
                missing: vec![API_KEY_VAR, MODEL_VAR]
            }
        );
        let text = err.to_string();
        assert!(
            text.starts_with(
                "missing model configuration: OPENAI_API_KEY, OPENAI_MODEL.\nSet them"
            )
        );
        assert!(text.contains("`just local-model`"));
    }

    #[test]
    fn the_key_never_prints() {
        let key = ApiKey::new("sk-very-secret");
        assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
        assert_eq!(key.redact("Bearer sk-very-secret!"), "Bearer [redacted]!");
    }

    #[test]
    fn a_bad_dotenv_line_is_named() {
        let err = parse_dotenv("A=1\nnonsense\n", ".env").unwrap_err();
        assert_eq!(err.to_string(), ".env:2: expected KEY=VALUE");
    }
}
