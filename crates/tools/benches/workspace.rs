//! What the workspace boundary costs per path: one canonicalize per existing component.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_tools::Workspace;

fn main() {
    divan::main();
}

#[divan::bench(args = ["notes.txt", "src/deep/er/file.rs", "src/new/file.rs", "../escape"])]
fn resolve(bencher: divan::Bencher, path: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep/er")).unwrap();
    std::fs::write(dir.path().join("src/deep/er/file.rs"), "").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    bencher.bench_local(|| {
        let _ = divan::black_box(ws.resolve(divan::black_box(path)));
    });
}
