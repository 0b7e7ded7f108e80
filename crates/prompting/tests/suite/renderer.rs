use agent_prompting::{
    ContextError, DynamicPromptRenderer, PromptInputs, RenderError, SectionText,
};
use serde_json::{Value, json};

const MEMORY: &str = "<relevant_memories>\n## prefers-tabs (feedback)\nThe user wants Rust indented with tabs\nUse tabs, never spaces.\n</relevant_memories>";
const SKILLS: &str =
    "- **rust-test**: Add a focused Rust test that fails before the fix and passes after";

/// The fixture all tests vary one input of.
struct Fixture {
    identity: String,
    context: Value,
    tools: Vec<String>,
    workspace: String,
    skills: Option<String>,
    memory: Option<String>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            identity: "You are a coding agent. Act, don't explain.".into(),
            context: json!({
                "chapter": 10,
                "mode": {"name": "default", "flags": {"strict": true, "beta": null}},
                "greeting": "你好，世界",
                "ratio": 1.5,
                "__proto__": "just a key"
            }),
            tools: vec!["read_file".into(), "bash".into()],
            workspace: "/work/project".into(),
            skills: Some(SKILLS.into()),
            memory: Some(MEMORY.into()),
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

    fn render(&self, renderer: &DynamicPromptRenderer) -> Result<String, RenderError> {
        renderer.render(&PromptInputs {
            identity: &self.identity,
            context: &self.context,
            tools: &self.tools,
            workspace: &self.workspace,
            sections: &self.sections(),
        })
    }
}

#[test]
fn the_full_prompt_for_the_fixture() {
    let text = Fixture::new()
        .render(&DynamicPromptRenderer::new())
        .unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn optional_sections_are_omitted_and_no_tools_says_none() {
    let mut fx = Fixture::new();
    fx.tools.clear();
    fx.skills = None;
    fx.memory = Some("  \n".into());
    fx.context = json!({});
    assert_eq!(
        fx.render(&DynamicPromptRenderer::new()).unwrap(),
        "## identity\nYou are a coding agent. Act, don't explain.\ncontext: {}\n\n## tools\n(none)\n\n## workspace\n/work/project"
    );
}

#[test]
fn an_equal_context_in_another_key_order_hits_the_cache() {
    let renderer = DynamicPromptRenderer::new();
    let fx = Fixture::new();
    let first = fx.render(&renderer).unwrap();
    let mut reordered = Fixture::new();
    reordered.context = serde_json::from_str(
        r#"{"__proto__": "just a key", "ratio": 1.5, "greeting": "你好，世界", "mode": {"flags": {"beta": null, "strict": true}, "name": "default"}, "chapter": 10}"#,
    )
    .unwrap();
    assert_eq!(reordered.render(&renderer).unwrap(), first);
    assert_eq!(renderer.cache_hits(), 1);
    // The cache belongs to the renderer: a new one starts cold.
    let other = DynamicPromptRenderer::new();
    assert_eq!(fx.render(&other).unwrap(), first);
    assert_eq!(other.cache_hits(), 0);
}

#[test]
fn each_of_the_six_inputs_invalidates_the_cache() {
    type Change = Box<dyn Fn(&mut Fixture)>;
    let changes: Vec<(&str, Change)> = vec![
        (
            "identity",
            Box::new(|f| f.identity = "You are a reviewer.".into()),
        ),
        ("context", Box::new(|f| f.context["chapter"] = json!(11))),
        ("tools", Box::new(|f| f.tools.push("glob".into()))),
        (
            "workspace",
            Box::new(|f| f.workspace = "/work/other".into()),
        ),
        (
            "skills",
            Box::new(|f| {
                f.skills = Some(format!(
                    "{SKILLS}\n- **commit-message**: Write a commit message"
                ))
            }),
        ),
        ("memory", Box::new(|f| f.memory = None)),
    ];
    for (name, change) in changes {
        let renderer = DynamicPromptRenderer::new();
        let mut fx = Fixture::new();
        let before = fx.render(&renderer).unwrap();
        change(&mut fx);
        let after = fx.render(&renderer).unwrap();
        assert_ne!(after, before, "{name}");
        assert_eq!(renderer.cache_hits(), 0, "{name}");
        // And back again is a miss too (one entry), then a hit.
        assert_eq!(fx.render(&renderer).unwrap(), after);
        assert_eq!(renderer.cache_hits(), 1, "{name}");
    }
}

#[test]
fn a_tool_list_with_the_same_letters_split_differently_is_a_miss() {
    let renderer = DynamicPromptRenderer::new();
    let mut fx = Fixture::new();
    fx.skills = None;
    fx.memory = None;
    fx.tools = vec!["ab".into()];
    fx.render(&renderer).unwrap();
    fx.tools = vec!["a".into(), "b".into()];
    assert_eq!(
        fx.render(&renderer).unwrap(),
        "## identity\nYou are a coding agent. Act, don't explain.\ncontext: {\"__proto__\":\"just a key\",\"chapter\":10,\"greeting\":\"你好，世界\",\"mode\":{\"flags\":{\"beta\":null,\"strict\":true},\"name\":\"default\"},\"ratio\":1.5}\n\n## tools\n- a\n- b\n\n## workspace\n/work/project"
    );
    assert_eq!(renderer.cache_hits(), 0);
}

#[derive(serde::Serialize)]
struct WithFloat {
    limits: Vec<f64>,
}

#[derive(serde::Serialize)]
struct WithPairs {
    pairs: std::collections::BTreeMap<(u8, u8), u8>,
}

struct Unserializable;

impl serde::Serialize for Unserializable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom(
            "a file handle cannot be serialized",
        ))
    }
}

#[test]
fn rejected_contexts_leave_the_cache_and_counter_untouched() {
    let renderer = DynamicPromptRenderer::new();
    let fx = Fixture::new();
    let good = fx.render(&renderer).unwrap();

    let render_with = |context: &dyn erased::Ctx| context.render(&renderer, &fx);
    let cases: Vec<(Box<dyn erased::Ctx>, RenderError)> = vec![
        (
            Box::new(json!([1, 2])),
            RenderError::Context(ContextError::NotAnObject { found: "an array" }),
        ),
        (
            Box::new(json!("text")),
            RenderError::Context(ContextError::NotAnObject { found: "a string" }),
        ),
        (
            Box::new(WithFloat {
                limits: vec![1.0, 2.0, f64::NAN],
            }),
            RenderError::Context(ContextError::Invalid {
                path: "context.limits[2]".into(),
                reason: "NaN is not a JSON number (NaN and infinities are not allowed)".into(),
            }),
        ),
        (
            Box::new(WithFloat {
                limits: vec![f64::INFINITY],
            }),
            RenderError::Context(ContextError::Invalid {
                path: "context.limits[0]".into(),
                reason: "inf is not a JSON number (NaN and infinities are not allowed)".into(),
            }),
        ),
        (
            Box::new(WithPairs {
                pairs: [((1, 2), 3)].into_iter().collect(),
            }),
            RenderError::Context(ContextError::Invalid {
                path: "context.pairs".into(),
                reason: "a map key must be a string, got an array".into(),
            }),
        ),
        (
            Box::new(Unserializable),
            RenderError::Context(ContextError::Invalid {
                path: "context".into(),
                reason: "a file handle cannot be serialized".into(),
            }),
        ),
    ];
    let mut expected_hits = 0;
    for (context, error) in cases {
        assert_eq!(render_with(context.as_ref()), Err(error));
        assert_eq!(renderer.cache_hits(), expected_hits);
        assert_eq!(fx.render(&renderer).unwrap(), good);
        expected_hits += 1;
        assert_eq!(renderer.cache_hits(), expected_hits);
    }
}

#[test]
fn identity_and_workspace_must_not_be_empty() {
    let renderer = DynamicPromptRenderer::new();
    let mut fx = Fixture::new();
    fx.identity = "  \n ".into();
    assert_eq!(fx.render(&renderer), Err(RenderError::EmptyIdentity));
    let mut fx = Fixture::new();
    fx.workspace = String::new();
    assert_eq!(fx.render(&renderer), Err(RenderError::EmptyWorkspace));
}

/// Lets one list hold contexts of different `Serialize` types.
mod erased {
    use super::{DynamicPromptRenderer, Fixture, PromptInputs, RenderError};

    pub trait Ctx {
        fn render(
            &self,
            renderer: &DynamicPromptRenderer,
            fx: &Fixture,
        ) -> Result<String, RenderError>;
    }

    impl<T: serde::Serialize> Ctx for T {
        fn render(
            &self,
            renderer: &DynamicPromptRenderer,
            fx: &Fixture,
        ) -> Result<String, RenderError> {
            renderer.render(&PromptInputs {
                identity: &fx.identity,
                context: self,
                tools: &fx.tools,
                workspace: &fx.workspace,
                sections: &fx.sections(),
            })
        }
    }
}
