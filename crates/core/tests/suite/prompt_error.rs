use std::error::Error as _;
use std::sync::Arc;

use agent_core::{AgentRunner, PromptError, RunError, SystemPromptProvider};
use agent_test_support::{Recording, ScriptedModel};

struct Failing;

#[async_trait::async_trait]
impl SystemPromptProvider for Failing {
    async fn system_prompt(&self) -> Result<String, PromptError> {
        Err(PromptError::new(
            "cannot render the system prompt",
            std::io::Error::other("the template is gone"),
        ))
    }
}

/// The provider's own error survives the run error as a chain of sources, for `{:#}`.
#[tokio::test]
async fn a_provider_failure_reaches_the_caller_as_a_chain_of_sources() {
    let model = Arc::new(ScriptedModel::new([]).recording(Recording::Requests));
    let runner =
        AgentRunner::builder(model.clone(), super::echo_registry(), Arc::new(Failing)).build();
    let err = runner.run_turn(&mut Vec::new(), "hi").await.unwrap_err();
    let mut chain = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        chain.push(cause.to_string());
        source = cause.source();
    }
    assert_eq!(
        chain,
        vec![
            "the system prompt provider failed",
            "cannot render the system prompt",
            "the template is gone"
        ]
    );
    assert!(matches!(err, RunError::Prompt(_)));
    assert_eq!(model.requests().len(), 0);
}
