use std::error::Error as _;
use std::sync::{Arc, Mutex};

use agent_core::{
    AgentEvent, CacheUse, CollectingSink, Events, SystemPromptProvider, ToolRegistry,
};
use agent_prompting::{
    DynamicPromptProvider, DynamicPromptRenderer, PromptContext, PromptSection, RenderError,
    SectionBody, SectionOrder,
};
use serde_json::json;

use super::checked::{add_tool, registry};

fn provider(identity: &str) -> DynamicPromptProvider {
    DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        identity,
        PromptContext::from_value(json!({"chapter": 10})).unwrap(),
        Arc::new(ToolRegistry::builder().build().unwrap()),
        "/work/project",
    )
}

/// The provider keeps the renderer's error as the cause instead of flattening it to text.
#[tokio::test]
async fn a_render_failure_keeps_the_render_error_as_its_source() {
    let err = provider("  ").system_prompt().await.unwrap_err();
    assert_eq!(
        err.chain(),
        "cannot render the system prompt: the identity is empty"
    );
    let source = err.source().and_then(|s| s.downcast_ref::<RenderError>());
    assert_eq!(source, Some(&RenderError::EmptyIdentity));
}

/// A live section over a shared slot: what a test changes between renders.
fn live(heading: &str, order: u16, slot: &Arc<Mutex<Option<String>>>) -> PromptSection {
    let slot = slot.clone();
    PromptSection::new(
        heading,
        SectionOrder::new(order),
        SectionBody::Live(Arc::new(move || slot.lock().unwrap().clone())),
    )
}

/// A live section is read from its source on every render: a closure is a source.
#[tokio::test]
async fn the_memory_block_is_read_from_its_source_before_every_render() {
    let block: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let provider = provider("Be brief.").section(live("memory", 2, &block));
    let base = "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n(none)\n\n## workspace\n/work/project";
    assert_eq!(provider.system_prompt().await.unwrap(), base);
    *block.lock().unwrap() = Some("<relevant_memories>\nx\n</relevant_memories>".into());
    assert_eq!(
        provider.system_prompt().await.unwrap(),
        format!("{base}\n\n## memory\n<relevant_memories>\nx\n</relevant_memories>")
    );
}

/// The open tasks (chapter 12) come after memory, read before every render, and their
/// section is absent when there are none: the prompt is then exactly chapter 10's.
#[tokio::test]
async fn the_tasks_section_follows_memory_and_is_absent_without_open_tasks() {
    let tasks: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let memory = Arc::new(Mutex::new(Some(
        "<relevant_memories>\nx\n</relevant_memories>".to_string(),
    )));
    // Added out of order: the order each section carries decides where it goes.
    let provider = provider("Be brief.")
        .section(live("tasks", 3, &tasks))
        .section(live("memory", 2, &memory));
    let base = "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n(none)\n\n## workspace\n/work/project\n\n## memory\n<relevant_memories>\nx\n</relevant_memories>";
    assert_eq!(provider.system_prompt().await.unwrap(), base);
    *tasks.lock().unwrap() = Some("- #2 [pending] Test the parser (ready)".into());
    assert_eq!(
        provider.system_prompt().await.unwrap(),
        format!("{base}\n\n## tasks\n- #2 [pending] Test the parser (ready)")
    );
    *tasks.lock().unwrap() = Some(String::new());
    assert_eq!(provider.system_prompt().await.unwrap(), base);
}

/// Sections of equal order keep the order they were added in; a fixed one is rendered as given.
#[tokio::test]
async fn sections_of_equal_order_keep_the_order_they_were_added_in() {
    let fixed = |heading: &str, text: &str| {
        PromptSection::new(
            heading,
            SectionOrder::new(1),
            SectionBody::Fixed(text.into()),
        )
    };
    let provider = provider("Be brief.")
        .section(fixed("b", "second"))
        .section(fixed("a", "third"))
        .section(PromptSection::new(
            "first",
            SectionOrder::new(0),
            SectionBody::Fixed("one".into()),
        ));
    assert_eq!(
        provider.system_prompt().await.unwrap(),
        "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n(none)\n\n## workspace\n/work/project\n\n## first\none\n\n## b\nsecond\n\n## a\nthird"
    );
}

/// A tool registered on the live registry after the provider was built is in the next prompt,
/// and the event says whether the renderer's cache served it.
#[tokio::test]
async fn a_tool_registered_after_build_misses_the_cache_once() {
    let tools = Arc::new(registry(&["bash"]));
    let sink = Arc::new(CollectingSink::new());
    let provider = DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        "Be brief.",
        PromptContext::from_value(json!({"chapter": 10})).unwrap(),
        tools.clone(),
        "/work/project",
    )
    .events(Events::new(sink.clone()));
    let head = "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n- bash";
    let tail = "\n\n## workspace\n/work/project";
    assert_eq!(provider.render().unwrap(), format!("{head}{tail}"));
    assert_eq!(provider.render().unwrap(), format!("{head}{tail}"));
    add_tool(&tools, "glob");
    assert_eq!(provider.render().unwrap(), format!("{head}\n- glob{tail}"));
    assert_eq!(provider.render().unwrap(), format!("{head}\n- glob{tail}"));
    let assembled = |bytes: usize, cache| AgentEvent::PromptAssembled { bytes, cache };
    let short = head.len() + tail.len();
    assert_eq!(
        sink.events(),
        vec![
            assembled(short, CacheUse::Miss),
            assembled(short, CacheUse::Hit),
            assembled(short + 7, CacheUse::Miss),
            assembled(short + 7, CacheUse::Hit),
        ]
    );
    assert_eq!(provider.renderer().cache_hits(), 2);
}

/// `--final-answer`'s last request offers no tools: its system prompt lists none either, so
/// the model is never told about tools it cannot call. The requests before it list them.
#[tokio::test]
async fn a_request_that_offers_no_tools_says_none_in_its_tools_section() {
    use agent_core::{AgentRunner, Message, ModelReply};
    use agent_test_support::{Recording, ScriptStep, ScriptedModel};
    let tools = Arc::new(registry(&["bash", "read_file"]));
    let prompt = DynamicPromptProvider::new(
        Arc::new(DynamicPromptRenderer::new()),
        "Be brief.",
        PromptContext::from_value(json!({"chapter": 10})).unwrap(),
        tools.clone(),
        "/work/project",
    );
    let model = Arc::new(
        ScriptedModel::new(vec![ScriptStep::Reply(ModelReply::text("done"))])
            .recording(Recording::Requests),
    );
    let runner = AgentRunner::builder(model.clone(), tools, Arc::new(prompt))
        .max_turns(1)
        .final_answer(agent_core::FinalAnswer::OnLastRequest)
        .build();
    runner.run_turn(&mut Vec::new(), "hi").await.unwrap();
    let request = &model.requests()[0];
    assert_eq!(request.tools, Vec::new());
    assert_eq!(
        *request.messages[0],
        Message::system(
            "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n(none)\n\n## workspace\n/work/project"
        )
    );
}

/// A live section is part of the renderer's cache key: an unchanged task list is served from
/// the cache, a changed one is assembled again.
#[tokio::test]
async fn a_live_section_is_part_of_the_cache_key() {
    let tasks = Arc::new(Mutex::new(Some(
        "- #1 [pending] Write the parser (ready)".into(),
    )));
    let provider = provider("Be brief.").section(live("tasks", 3, &tasks));
    let first = provider.render().unwrap();
    assert_eq!(provider.render().unwrap(), first);
    *tasks.lock().unwrap() = Some("- #2 [pending] Test the parser (ready)".into());
    assert_eq!(
        provider.render().unwrap(),
        "## identity\nBe brief.\ncontext: {\"chapter\":10}\n\n## tools\n(none)\n\n## workspace\n/work/project\n\n## tasks\n- #2 [pending] Test the parser (ready)"
    );
    assert_eq!(provider.renderer().cache_hits(), 1);
}
