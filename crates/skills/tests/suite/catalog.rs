use std::path::Path;
use std::sync::Arc;

use agent_core::{CallSummary, PreparedCall, ToolEffect, ToolHandler};
use agent_skills::{LoadSkill, NO_SKILLS, SkillCatalog};
use agent_workspace::Workspace;
use serde_json::json;

fn write_skill(root: &Path, folder: &str, header: &str, body: &str) {
    let dir = root.join("skills").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), format!("---\n{header}---\n{body}")).unwrap();
}

fn load(catalog: SkillCatalog, ws: &Workspace, name: &str) -> String {
    let tool = LoadSkill {
        catalog: Arc::new(catalog),
        workspace: ws.clone(),
    };
    let call = PreparedCall {
        call_id: "c".into(),
        name: "load_skill".into(),
        arguments: json!({"name": name}),
        effect: ToolEffect::Read,
        summary: CallSummary::text(name),
    };
    block_on(tool.handle(&call)).unwrap_or_else(|f| f.to_string())
}

/// Runs a future to completion on a fresh runtime.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn the_catalog_is_sorted_and_bad_skills_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_skill(
        root,
        "zeta",
        "name: zeta\ndescription: Last one\n",
        "z body\n",
    );
    write_skill(
        root,
        "alpha",
        "name: alpha\ndescription: First one\n",
        "a body\n",
    );
    write_skill(root, "mismatch", "name: other\ndescription: x\n", "");
    write_skill(root, "Bad_Name", "name: Bad_Name\ndescription: x\n", "");
    write_skill(root, "nodesc", "name: nodesc\n", "");
    write_skill(root, "broken", "name: [oops\ndescription: x\n", "");
    std::fs::create_dir_all(root.join("skills/empty")).unwrap();
    let ws = Workspace::new(root).unwrap();
    let catalog = SkillCatalog::scan(&ws);
    assert_eq!(
        catalog.render(),
        "- **alpha**: First one\n- **zeta**: Last one"
    );
    let warnings: Vec<&str> = catalog
        .warnings()
        .iter()
        .map(|w| w.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        warnings,
        vec![
            "skills/Bad_Name/SKILL.md",
            "skills/broken/SKILL.md",
            "skills/empty/SKILL.md",
            "skills/mismatch/SKILL.md",
            "skills/nodesc/SKILL.md",
        ]
    );
    assert_eq!(
        catalog.warnings()[3],
        "skills/mismatch/SKILL.md: name `other` does not match the folder name `mismatch`"
    );
    assert_eq!(
        catalog.warnings()[2],
        "skills/empty/SKILL.md: no SKILL.md in the folder"
    );
    assert_eq!(load(catalog, &ws, "alpha"), "a body\n");
}

#[test]
fn the_catalog_is_bounded_and_says_what_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..120 {
        let name = format!("skill-{i:03}");
        write_skill(
            dir.path(),
            &name,
            &format!("name: {name}\ndescription: Skill number {i}\n"),
            "",
        );
    }
    let catalog = SkillCatalog::scan(&Workspace::new(dir.path()).unwrap());
    let text = catalog.render();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "- **skill-000**: Skill number 0");
    assert_eq!(lines[99], "- **skill-099**: Skill number 99");
    assert_eq!(
        lines[100],
        "- … 20 more skills not listed (catalog limit: 100 entries, 8000 bytes)"
    );

    let long = "x".repeat(200);
    let dir = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let name = format!("s-{i:02}");
        write_skill(
            dir.path(),
            &name,
            &format!("name: {name}\ndescription: {long}\n"),
            "",
        );
    }
    let text = SkillCatalog::scan(&Workspace::new(dir.path()).unwrap()).render();
    assert!(text.len() <= 8_000, "{} bytes", text.len());
    assert!(text.ends_with("more skills not listed (catalog limit: 100 entries, 8000 bytes)"));
}

#[test]
fn an_empty_workspace_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = SkillCatalog::scan(&Workspace::new(dir.path()).unwrap());
    assert_eq!(catalog.render(), NO_SKILLS);
    assert!(catalog.is_empty());
}

#[test]
fn a_skill_folder_linked_outside_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_skill(
        outside.path(),
        "evil",
        "name: evil\ndescription: Reads secrets\n",
        "secret body\n",
    );
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("skills/evil"),
        dir.path().join("skills/evil"),
    )
    .unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let catalog = SkillCatalog::scan(&ws);
    assert!(catalog.is_empty());
    assert_eq!(
        catalog.warnings(),
        ["skills/evil/SKILL.md: `skills/evil/SKILL.md` resolves outside the workspace"]
    );
}

#[test]
fn load_skill_rechecks_the_path_and_names_unknown_skills() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "good",
        "name: good\ndescription: Fine\n",
        "body\n",
    );
    let ws = Workspace::new(dir.path()).unwrap();
    let catalog = SkillCatalog::scan(&ws);
    assert_eq!(
        load(catalog.clone(), &ws, "nope"),
        "Error [tool_execution_error]: no skill named `nope`; available: good"
    );
    // Swap the folder for a symlink to outside after the scan.
    write_skill(
        outside.path(),
        "good",
        "name: good\ndescription: Fine\n",
        "stolen\n",
    );
    std::fs::remove_dir_all(dir.path().join("skills/good")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("skills/good"),
        dir.path().join("skills/good"),
    )
    .unwrap();
    assert_eq!(
        load(catalog, &ws, "good"),
        "Error [path_escape]: `skills/good/SKILL.md` resolves outside the workspace"
    );
}

#[test]
fn load_skill_is_described_by_the_skill_name() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let tool = LoadSkill {
        catalog: Arc::new(SkillCatalog::default()),
        workspace: ws,
    };
    let registry = agent_core::ToolRegistry::builder()
        .tool(agent_skills::spec(), Arc::new(tool))
        .build()
        .unwrap();
    let call = agent_core::ToolCall {
        id: "c1".into(),
        name: LoadSkill::NAME.into(),
        arguments: r#"{"name": "review"}"#.into(),
    };
    assert_eq!(
        registry.prepare(&call).unwrap().summary,
        CallSummary::text("review")
    );
}
