//! The validated-context path the provider uses: a hit compares borrowed inputs and the
//! registry's stamp, and every one of the six inputs, changed between two renders, still
//! gives a fresh prompt with exactly the new text.

use std::sync::Arc;

use agent_core::{
    CacheUse, PreparedCall, ToolEffect, ToolFailure, ToolHandler, ToolRegistry, ToolSpec,
};
use agent_prompting::{
    CheckedInputs, DynamicPromptRenderer, PromptContext, PromptInputs, RenderError, Rendered,
    SectionText, ToolNames,
};
use serde_json::json;

struct Noop;

#[async_trait::async_trait]
impl ToolHandler for Noop {
    async fn handle(&self, _: &PreparedCall) -> Result<String, ToolFailure> {
        Ok(String::new())
    }
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        "A tool.",
        ToolEffect::Read,
        json!({"type": "object", "properties": {}}),
    )
}

pub fn registry(names: &[&str]) -> ToolRegistry {
    names
        .iter()
        .fold(ToolRegistry::builder(), |b, name| {
            b.tool(spec(name), Arc::new(Noop))
        })
        .build()
        .unwrap()
}

pub fn add_tool(registry: &ToolRegistry, name: &str) {
    registry.register(spec(name), Arc::new(Noop)).unwrap();
}

struct Fixture {
    identity: String,
    context: PromptContext,
    tools: ToolRegistry,
    workspace: String,
    skills: Option<String>,
    memory: Option<String>,
}

const BASE: &str = "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n- read_file\n- bash\n\n## workspace\n/work/project\n\n## skills\n- **rust-test**: Add a test\n\n## memory\n<relevant_memories>\nx\n</relevant_memories>";

impl Fixture {
    fn new() -> Self {
        Self {
            identity: "Be brief.".into(),
            context: PromptContext::from_value(json!({"chapter": 10})).unwrap(),
            tools: registry(&["read_file", "bash"]),
            workspace: "/work/project".into(),
            skills: Some("- **rust-test**: Add a test".into()),
            memory: Some("<relevant_memories>\nx\n</relevant_memories>".into()),
        }
    }

    /// The skills and memory sections, in the order the harness gives them.
    fn sections(&self) -> Vec<SectionText<'_>> {
        [("skills", &self.skills), ("memory", &self.memory)]
            .into_iter()
            .filter_map(|(heading, body)| {
                Some(SectionText {
                    heading,
                    body: body.as_deref()?,
                })
            })
            .collect()
    }

    fn render(&self, renderer: &DynamicPromptRenderer) -> Result<Rendered, RenderError> {
        renderer.render_checked(&CheckedInputs {
            identity: &self.identity,
            context: &self.context,
            tools: ToolNames::Registry(&self.tools),
            workspace: &self.workspace,
            sections: &self.sections(),
        })
    }
}

fn rendered(text: &str, cache: CacheUse) -> Rendered {
    Rendered {
        text: text.into(),
        cache,
    }
}

/// Renders the fixture, applies `change`, and checks the next render is a miss with exactly
/// `expected`, and the one after that a hit with the same text.
fn assert_change_is_fresh(change: impl FnOnce(&mut Fixture), expected: &str) {
    let renderer = DynamicPromptRenderer::new();
    let mut fx = Fixture::new();
    assert_eq!(fx.render(&renderer), Ok(rendered(BASE, CacheUse::Miss)));
    assert_eq!(fx.render(&renderer), Ok(rendered(BASE, CacheUse::Hit)));
    change(&mut fx);
    assert_eq!(fx.render(&renderer), Ok(rendered(expected, CacheUse::Miss)));
    assert_eq!(fx.render(&renderer), Ok(rendered(expected, CacheUse::Hit)));
    assert_eq!(renderer.cache_hits(), 2);
}

#[test]
fn a_changed_identity_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.identity = "Be thorough.".into(),
        &BASE.replace("Be brief.", "Be thorough."),
    );
}

#[test]
fn a_changed_context_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.context = PromptContext::from_value(json!({"chapter": 11})).unwrap(),
        &BASE.replace("{\"chapter\":10}", "{\"chapter\":11}"),
    );
}

#[test]
fn a_tool_registered_on_the_live_registry_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| add_tool(&f.tools, "glob"),
        &BASE.replace("- bash\n", "- bash\n- glob\n"),
    );
}

/// Same number of tools, other names: the stamp names the registry, not just its size.
#[test]
fn another_registry_of_the_same_size_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.tools = registry(&["read_file", "grep"]),
        &BASE.replace("- bash\n", "- grep\n"),
    );
}

#[test]
fn a_changed_workspace_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.workspace = "/work/other".into(),
        &BASE.replace("/work/project", "/work/other"),
    );
}

#[test]
fn a_changed_skill_catalog_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.skills = Some("- **lint**: Run clippy".into()),
        &BASE.replace("- **rust-test**: Add a test", "- **lint**: Run clippy"),
    );
}

#[test]
fn a_changed_memory_selection_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.memory = Some("<relevant_memories>\ny\n</relevant_memories>".into()),
        &BASE.replace("\nx\n", "\ny\n"),
    );
}

#[test]
fn a_dropped_memory_selection_is_rendered_fresh() {
    assert_change_is_fresh(
        |f| f.memory = None,
        BASE.split_once("\n\n## memory").unwrap().0,
    );
}

/// A list and a registry with the same names share no cache entry: a list's names cannot be
/// vouched for by a stamp. The text is the same either way.
#[test]
fn a_tool_list_and_a_registry_with_the_same_names_render_the_same_text() {
    let renderer = DynamicPromptRenderer::new();
    let fx = Fixture::new();
    let names = vec!["read_file".to_string(), "bash".to_string()];
    let list = renderer.render(&PromptInputs {
        identity: &fx.identity,
        context: &fx.context,
        tools: &names,
        workspace: &fx.workspace,
        sections: &fx.sections(),
    });
    assert_eq!(list, Ok(BASE.to_string()));
    assert_eq!(fx.render(&renderer), Ok(rendered(BASE, CacheUse::Miss)));
    assert_eq!(renderer.cache_hits(), 0);
}

#[test]
fn blank_identity_or_workspace_is_an_error_and_leaves_the_cache_alone() {
    let renderer = DynamicPromptRenderer::new();
    let fx = Fixture::new();
    assert_eq!(fx.render(&renderer), Ok(rendered(BASE, CacheUse::Miss)));
    let mut blank = Fixture::new();
    blank.identity = " \n".into();
    assert_eq!(blank.render(&renderer), Err(RenderError::EmptyIdentity));
    let mut blank = Fixture::new();
    blank.workspace = String::new();
    assert_eq!(blank.render(&renderer), Err(RenderError::EmptyWorkspace));
    assert_eq!(renderer.cache_hits(), 0);
    assert_eq!(fx.render(&renderer), Ok(rendered(BASE, CacheUse::Hit)));
}
