//! One script per agent of a session (chapter 15 on): a lead and its teammates ask the model
//! at the same time, so one shared script would be replayed in whatever order they happen to
//! ask. A book gives each agent its own, replayed in that agent's order:
//!
//! ```json
//! {"lead": [{"content": "..."}], "alice": [{"content": "..."}]}
//! ```
//!
//! A plain array (the one-agent format of [`crate::scripted`]) is the lead's script.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::scripted::{ScriptError, ScriptedModel, read_script};

/// The name of the agent a plain array is for.
const LEAD: &str = "lead";

/// Scripts by agent name.
#[derive(Debug, Default)]
pub struct ScriptBook {
    /// Handed out so far (an agent without a script gets an empty one, kept here too).
    models: Mutex<BTreeMap<String, Arc<ScriptedModel>>>,
}

impl ScriptBook {
    /// A book read from its JSON text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, ScriptError> {
        let parse = |source| ScriptError::Parse {
            path: origin.to_string(),
            source,
        };
        let value: Value = serde_json::from_str(text).map_err(parse)?;
        let mut models = BTreeMap::new();
        match value {
            Value::Object(agents) => {
                for (agent, steps) in agents {
                    let origin = format!("{origin} ({agent})");
                    let model = ScriptedModel::from_json(&steps.to_string(), &origin)?;
                    models.insert(agent, Arc::new(model));
                }
            }
            _ => {
                models.insert(
                    LEAD.to_string(),
                    Arc::new(ScriptedModel::from_json(text, origin)?),
                );
            }
        }
        Ok(Self {
            models: Mutex::new(models),
        })
    }

    /// A book read from a file the person named (`--script FILE`), at most
    /// [`crate::MAX_SCRIPT_BYTES`].
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = read_script(path)?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// The model of `agent`: its script, or an empty one (its first request fails, saying
    /// the script has no reply left).
    pub fn model(&self, agent: &str) -> Arc<ScriptedModel> {
        self.models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(agent.to_string())
            .or_default()
            .clone()
    }

    /// Fails when any agent's script still has replies (their count, all agents together).
    pub fn finish(&self) -> Result<(), ScriptError> {
        let left: usize = self
            .models
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|m| m.remaining())
            .sum();
        match left {
            0 => Ok(()),
            left => Err(ScriptError::Unconsumed { left }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::{ModelClient, ModelReply, ModelRequest};

    async fn reply(model: &ScriptedModel) -> String {
        let reply = model.complete(&ModelRequest::default()).await;
        match reply {
            Ok(ModelReply { content, .. }) => content.unwrap_or_default(),
            Err(err) => err.to_string(),
        }
    }

    #[tokio::test]
    async fn each_agent_replays_its_own_script_and_an_array_is_the_leads() {
        let book = ScriptBook::from_json(
            r#"{"lead": [{"content": "L1"}], "alice": [{"content": "A1"}, {"content": "A2"}]}"#,
            "t",
        )
        .unwrap();
        let alice = book.model("alice");
        let got = [
            reply(&alice).await,
            reply(&book.model("lead")).await,
            reply(&book.model("bob")).await,
        ];
        assert_eq!(
            got,
            [
                "A1".to_string(),
                "L1".to_string(),
                "the scripted model has no reply left for request #1".to_string()
            ]
        );
        assert_eq!(
            book.finish().unwrap_err().to_string(),
            ScriptError::Unconsumed { left: 1 }.to_string()
        );
        let plain = ScriptBook::from_json(r#"[{"content": "hi"}]"#, "t").unwrap();
        assert_eq!(reply(&plain.model("lead")).await, "hi");
        assert!(plain.finish().is_ok());
    }
}
