//! Where the model configuration comes from: flags, then the environment, then `.env`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The server's `/v1` address.
pub const BASE_URL_VAR: &str = "OPENAI_BASE_URL";
/// The API key (any non-empty value for a local server).
pub const API_KEY_VAR: &str = "OPENAI_API_KEY";
/// A file holding the key, read once at start-up (only from the environment: a `.env` of the
/// working directory could name the user's key file and its own server).
pub const API_KEY_FILE_VAR: &str = "OPENAI_API_KEY_FILE";
/// The model every request names.
pub const MODEL_VAR: &str = "OPENAI_MODEL";
/// The model asked after repeated overloaded answers (chapter 11 on).
pub const FALLBACK_MODEL_VAR: &str = "OPENAI_FALLBACK_MODEL";
/// The server when [`BASE_URL_VAR`] is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The API key. It has no `Display` and its `Debug` is redacted, so it cannot end up in a log
/// line or an error message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps `key`; from here on it is shown only as `[redacted]`.
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
    /// The server's `/v1` address, without a trailing slash.
    pub base_url: String,
    /// The key sent as the bearer token.
    pub api_key: ApiKey,
    /// The model every request names.
    pub model: String,
    /// The model to switch to when the main one is overloaded (chapter 11 on); `None` when
    /// the caller did not ask for one.
    pub fallback_model: Option<String>,
    /// Sampling settings; `None` fields leave the server's defaults.
    pub sampling: Sampling,
    /// How long one request may take, the whole reply included.
    pub request_timeout: std::time::Duration,
}

/// Request settings besides the messages. Both are optional; small local models need
/// `max_tokens`, or one rambling reply can take minutes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    /// `temperature`, sent only when set.
    pub temperature: Option<f32>,
    /// `max_tokens`, the completion limit, sent only when set.
    pub max_tokens: Option<u32>,
}

/// How long one model request may take before it fails with a transport error. A hung server
/// must end the run with a message, not freeze it.
pub const DEFAULT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Values given on the command line; they win over everything else. There is deliberately
/// no API-key flag: command lines are visible to every user of the machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigOverrides {
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--temperature` and `--max-tokens`.
    pub sampling: Sampling,
    /// `--request-timeout`.
    pub request_timeout: Option<std::time::Duration>,
    /// `--fallback-model`: wins over `OPENAI_FALLBACK_MODEL`.
    pub fallback_model: Option<String>,
    /// Whether a fallback model must be configured.
    pub fallback: FallbackNeed,
}

/// Whether the caller needs a fallback model: chapter 11 on switches to it after overloaded
/// answers, so there it is required like the main model; earlier chapters never read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FallbackNeed {
    /// Chapters 1–10: the fallback model is neither read nor required.
    #[default]
    NotUsed,
    /// Chapter 11 on: a missing fallback model is a missing setting.
    Required,
}

/// The flags a person can pass instead of the missing variables: the two every chapter takes,
/// and `--fallback-model` when that is what is missing (chapter 11 on).
fn matching_flags(missing: &[&'static str]) -> &'static str {
    if missing.contains(&FALLBACK_MODEL_VAR) {
        "--model, --base-url, --fallback-model"
    } else {
        "--model, --base-url"
    }
}

/// The repository this binary was built from: the missing-configuration message names its
/// justfile and example scripts by absolute path, so the suggestion also works from a scratch
/// folder (`just local-model` alone finds no justfile there).
pub fn repository() -> String {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .parent()
        .and_then(std::path::Path::parent)
        .unwrap_or(crate_dir)
        .display()
        .to_string()
}

/// Why no configuration could be resolved. Each message says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Settings without a value anywhere (flag, environment, `.env`).
    #[error(
        "missing model configuration: {}.\n\
         Set {} in the environment (for example `export {}=...`) or in a `.env` file in the \
         working directory, or pass the matching flag ({}).\n\
         OPENAI_BASE_URL defaults to {DEFAULT_BASE_URL}; for a local OpenAI-compatible server set \
         it to the server's /v1 address, and any non-empty key works (OPENAI_API_KEY=local).\n\
         No API key? `just -f {repo}/justfile local-model` serves a small model on 127.0.0.1 \
         and prints the settings to use (`just chNN ...` in that folder does it for you), or \
         replay a session offline with `--script {repo}/examples/scripts/chNN.json`.",
        .missing.join(", "),
        if .missing.len() == 1 { "it" } else { "them" },
        .missing[0],
        matching_flags(.missing),
        repo = repository()
    )]
    Missing {
        /// The variables missing.
        missing: Vec<&'static str>,
    },
    /// A `.env` names the server while the key comes from the environment: the key would go
    /// to an address a file in the working directory chose.
    #[error(
        "{path} sets {BASE_URL_VAR}, but {API_KEY_VAR} comes from your environment: a `.env` \
         file may only point its own key at a server, so your key is not sent to an address a \
         file in the working directory chose.\n\
         To fix it: pass --base-url (or export {BASE_URL_VAR}) if you trust that server, or \
         remove {BASE_URL_VAR} from {path}, or keep the key for that server in {path} and \
         unset {API_KEY_VAR} in your environment."
    )]
    DotEnvRedirect {
        /// The `.env` file.
        path: String,
    },
    /// A `.env` names the model (or the fallback model) while the key comes from the
    /// environment.
    #[error(
        "{path} sets {var}, but {API_KEY_VAR} comes from your environment: a `.env` file may \
         only choose the model for its own key, so a file in the working directory does not \
         pick what your key is billed for.\n\
         To fix it: pass --model (or export {var}) if you want that model, or remove {var} \
         from {path}, or keep the key in {path} and unset {API_KEY_VAR} in your environment."
    )]
    DotEnvModel {
        /// The `.env` file.
        path: String,
        /// The variable it sets.
        var: &'static str,
    },
    /// The key file could not be read.
    #[error("cannot read the key from {path} ({API_KEY_FILE_VAR}): {reason}")]
    KeyFile {
        /// The file [`API_KEY_FILE_VAR`] names.
        path: String,
        /// What went wrong with the file, in words.
        reason: String,
    },
    /// The `.env` file could not be read or has a bad line.
    #[error("{path}:{line}: {reason}")]
    DotEnv {
        /// The file.
        path: String,
        /// The 1-based line (0: the file as a whole).
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Where a setting came from, as far as the `.env` rule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// The `.env` file in the working directory.
    DotEnv,
    /// A flag or the process environment: the user's own choice.
    Elsewhere,
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

/// The most of a `.env` file that is read: it is the working directory's, not ours.
const DOTENV_LIMIT: u64 = 64 * 1024;

/// Reads a `.env` bounded (a regular file was checked by the caller, so no FIFO blocks here).
fn read_dotenv(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(DOTENV_LIMIT + 1).read_to_string(&mut text))
        .map_err(|err| err.to_string())?;
    if text.len() as u64 > DOTENV_LIMIT {
        return Err(format!("larger than {DOTENV_LIMIT} bytes"));
    }
    Ok(text)
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
            let text = read_dotenv(path).map_err(|reason| ConfigError::DotEnv {
                path: origin.clone(),
                line: 0,
                reason,
            })?;
            parse_dotenv(&text, &origin)?
        }
        _ => BTreeMap::new(),
    };
    let lookup = |flag: Option<&String>, var: &str| -> Option<(String, Origin)> {
        let given = |v: &String| !v.trim().is_empty();
        flag.filter(|v| given(v))
            .map(|v| (v.clone(), Origin::Elsewhere))
            .or_else(|| env(var).filter(given).map(|v| (v, Origin::Elsewhere)))
            .or_else(|| {
                file.get(var)
                    .filter(|v| given(v))
                    .map(|v| (v.clone(), Origin::DotEnv))
            })
    };
    let base_url = lookup(overrides.base_url.as_ref(), BASE_URL_VAR);
    // The environment's key, else the key file the environment names, else the `.env`'s.
    let api_key = match (lookup(None, API_KEY_VAR), env(API_KEY_FILE_VAR)) {
        (Some((key, Origin::Elsewhere)), _) => Some((key, Origin::Elsewhere)),
        (_, Some(path)) if !path.trim().is_empty() => {
            let key = crate::env::read_key_file(Path::new(&path)).map_err(|err| {
                ConfigError::KeyFile {
                    path,
                    reason: err.to_string(),
                }
            })?;
            Some((key, Origin::Elsewhere))
        }
        (found, _) => found,
    };
    // A file in the working directory comes with the repository; if its URL were used with
    // the user's own key, cloning a repository could send that key to any server.
    if let (Some((_, Origin::DotEnv)), Some((_, Origin::Elsewhere))) = (&base_url, &api_key) {
        return Err(ConfigError::DotEnvRedirect {
            path: dotenv.map(|p| p.display().to_string()).unwrap_or_default(),
        });
    }
    let dotenv_path = || dotenv.map(|p| p.display().to_string()).unwrap_or_default();
    let key_from_elsewhere = matches!(api_key, Some((_, Origin::Elsewhere)));
    // Nor may it pick the model (or the fallback) billed to the user's key: a repository's
    // `OPENAI_MODEL=o1-pro-expensive` would otherwise be sent with it.
    let chosen = |found: Option<(String, Origin)>, var: &'static str| match found {
        Some((_, Origin::DotEnv)) if key_from_elsewhere => Err(ConfigError::DotEnvModel {
            path: dotenv_path(),
            var,
        }),
        found => Ok(found.map(|(v, _)| v)),
    };
    let base_url = base_url.map(|(v, _)| v);
    let api_key = api_key.map(|(v, _)| v);
    let model = chosen(lookup(overrides.model.as_ref(), MODEL_VAR), MODEL_VAR)?;
    let mut missing = Vec::new();
    if api_key.is_none() {
        missing.push(API_KEY_VAR);
    }
    if model.is_none() {
        missing.push(MODEL_VAR);
    }
    let fallback_model = match overrides.fallback {
        FallbackNeed::NotUsed => None,
        FallbackNeed::Required => {
            let found = chosen(
                lookup(overrides.fallback_model.as_ref(), FALLBACK_MODEL_VAR),
                FALLBACK_MODEL_VAR,
            )?;
            if found.is_none() {
                missing.push(FALLBACK_MODEL_VAR);
            }
            found
        }
    };
    if !missing.is_empty() {
        return Err(ConfigError::Missing { missing });
    }
    match (api_key, model) {
        (Some(key), Some(model)) => Ok(OpenAiConfig {
            base_url: base_url
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
                .trim_end_matches('/')
                .to_string(),
            api_key: ApiKey::new(key),
            model,
            fallback_model,
            sampling: overrides.sampling,
            request_timeout: overrides.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT),
        }),
        _ => Err(ConfigError::Missing { missing }),
    }
}

#[cfg(test)]
mod tests;
