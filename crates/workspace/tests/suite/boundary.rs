//! The boundary against the attacks a repository or a model can bring.

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_workspace::{Existing, FileKind, PathError, Workspace};

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    outside: std::path::PathBuf,
}

/// `ws/` with `src/a.txt`, an inner link, an outward link, an absolute outward link, a
/// dangling outward link and a `/proc` link; `outside/secret` next to it.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/a.txt"), "a").unwrap();
    std::fs::write(outside.join("secret"), "SECRET").unwrap();
    symlink("src", root.join("inner")).unwrap();
    symlink("../outside", root.join("out")).unwrap();
    symlink(&outside, root.join("abs_out")).unwrap();
    symlink("../outside/new.txt", root.join("dangling_out")).unwrap();
    symlink("/proc/self", root.join("proc")).unwrap();
    symlink(root.join("src"), root.join("abs_in")).unwrap();
    let ws = Workspace::new(&root).unwrap();
    let outside = outside.canonicalize().unwrap();
    Setup {
        _dir: dir,
        ws,
        outside,
    }
}

#[test]
fn paths_inside_resolve_to_where_they_lead() {
    let s = setup();
    let shown = |p: &str| s.ws.inside(p).unwrap().to_string();
    let root = s.ws.root().to_str().unwrap().to_string();
    let cases = [
        ("src/a.txt", "src/a.txt"),
        ("./src/../src/new.txt", "src/new.txt"),
        ("new/deep/file", "new/deep/file"),
        ("inner/a.txt", "src/a.txt"),
        ("abs_in/a.txt", "src/a.txt"),
        ("inner/../inner/a.txt", "src/a.txt"),
        (".", "."),
        (&format!("{root}/src/a.txt"), "src/a.txt"),
    ];
    let got: Vec<(String, String)> = cases
        .iter()
        .map(|(p, _)| (p.to_string(), shown(p)))
        .collect();
    let want: Vec<(String, String)> = cases
        .iter()
        .map(|(p, w)| (p.to_string(), w.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        s.ws.resolve("inner/a.txt").unwrap(),
        s.ws.root().join("src/a.txt")
    );
}

#[test]
fn every_escape_is_refused_with_path_escape() {
    let s = setup();
    for path in [
        "..",
        "../x",
        "src/../../x",
        "/etc/passwd",
        "out",
        "out/secret",
        "abs_out/secret",
        "dangling_out",
        "proc/environ",
        "inner/../../x",
        "src/../out/secret",
    ] {
        let err = s.ws.inside(path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("`{path}` resolves outside the workspace"),
            "{path}"
        );
    }
}

#[test]
fn dot_dot_after_a_missing_folder_is_refused_as_the_kernel_does() {
    let s = setup();
    // On the old resolver `missing/../out/secret` walked `out` lexically and landed outside.
    for (path, missing) in [
        ("missing/../out/secret", "missing"),
        ("missing/../src/a.txt", "missing"),
        ("src/gone/x/../../../out", "src/gone"),
    ] {
        let err = s.ws.inside(path).unwrap_err();
        assert!(matches!(err, PathError::ThroughMissing { .. }), "{path}");
        assert_eq!(
            err.to_string(),
            format!(
                "cannot resolve `{path}`: `{missing}` does not exist, so `..` after it leads nowhere"
            )
        );
    }
}

#[test]
fn a_symlink_swapped_in_after_the_check_still_cannot_lead_out() {
    let s = setup();
    let root = s.ws.root().to_path_buf();
    std::fs::create_dir(root.join("logs")).unwrap();
    let checked = s.ws.inside("logs/audit.jsonl").unwrap();
    let checked_dir = s.ws.inside("logs/new.txt").unwrap();
    // The folder becomes an outward link between the check and the write.
    std::fs::remove_dir(root.join("logs")).unwrap();
    symlink(&s.outside, root.join("logs")).unwrap();
    assert!(s.ws.append(&checked, b"line\n").is_err());
    assert!(
        s.ws.write_atomic(&checked_dir, b"x", Existing::Replace)
            .is_err()
    );
    // The last component becomes a link to a file outside.
    std::fs::remove_file(root.join("logs")).unwrap();
    std::fs::create_dir(root.join("logs")).unwrap();
    symlink(s.outside.join("secret"), root.join("logs/audit.jsonl")).unwrap();
    assert!(s.ws.append(&checked, b"line\n").is_err());
    assert!(s.ws.open_regular(&checked).is_err());
    assert_eq!(
        std::fs::read_to_string(s.outside.join("secret")).unwrap(),
        "SECRET"
    );
    assert_eq!(
        std::fs::read_dir(&s.outside).unwrap().count(),
        1,
        "nothing new outside"
    );
}

#[test]
fn reading_a_fifo_is_refused_without_blocking() {
    let s = setup();
    let fifo = s.ws.root().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err =
        s.ws.open_regular(&s.ws.inside("pipe").unwrap())
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`pipe` is a FIFO (named pipe), not a regular file"
    );
    let err = s.ws.open_regular(&s.ws.inside("src").unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "`src` is a directory, not a regular file");
    assert_eq!(
        s.ws.kind(&s.ws.inside("pipe").unwrap()).unwrap(),
        Some(FileKind::Fifo)
    );
}

#[test]
fn reads_are_bounded() {
    let s = setup();
    let big = s.ws.root().join("big.bin");
    let file = std::fs::File::create(&big).unwrap();
    // 3 GB sparse: costs no disk, and reading it whole would cost 3 GB of memory.
    file.set_len(3_000_000_000).unwrap();
    let path = s.ws.inside("big.bin").unwrap();
    let err = s.ws.read_bytes(&path, 1024).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`big.bin` is 3000000000 bytes, over the limit of 1024 bytes"
    );
    let opened = s.ws.open_regular(&path).unwrap();
    assert_eq!(opened.len(), 3_000_000_000);
    assert_eq!(opened.read_at(2_999_999_990, 100).unwrap(), vec![0u8; 10]);
}

#[test]
fn atomic_writes_keep_permissions_and_replace_a_link_instead_of_following_it() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup();
    let root = s.ws.root().to_path_buf();
    std::fs::write(root.join("run.sh"), "old").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = s.ws.inside("run.sh").unwrap();
    s.ws.write_atomic(&path, b"new", Existing::Replace).unwrap();
    assert_eq!(std::fs::read_to_string(root.join("run.sh")).unwrap(), "new");
    let mode = std::fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert!(
        s.ws.write_atomic(&path, b"x", Existing::Refuse)
            .unwrap_err()
            .to_string()
            .starts_with("cannot write `run.sh`: ")
    );
    // No temporary file is left behind.
    let names: Vec<String> =
        s.ws.list_dir(&s.ws.inside(".").unwrap())
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
    assert_eq!(
        names,
        [
            "abs_in",
            "abs_out",
            "dangling_out",
            "inner",
            "out",
            "proc",
            "run.sh",
            "src"
        ]
    );
}

#[test]
fn leftovers_of_a_killed_writer_are_removed() {
    let s = setup();
    let root = s.ws.root();
    std::fs::write(root.join(".tmp-agent-1-0"), "half").unwrap();
    std::fs::write(root.join("keep.txt"), "k").unwrap();
    assert_eq!(
        s.ws.remove_leftovers(&s.ws.inside(".").unwrap()).unwrap(),
        1
    );
    assert!(!root.join(".tmp-agent-1-0").exists());
    assert!(root.join("keep.txt").exists());
}

mod properties {
    //! Random trees of files, folders and symlinks (inward, outward, dangling) and random paths
    //! over `{name, missing, .., ., /abs, link-in, link-out}`: no operation may read or write
    //! outside the root.

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Node {
        Dir,
        File,
        LinkIn(String),
        LinkOut(String),
        Dangling(String),
    }

    fn name() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_string)
    }

    fn node() -> impl Strategy<Value = Node> {
        prop_oneof![
            Just(Node::Dir),
            Just(Node::File),
            prop::sample::select(vec!["a", "b/c", "..", "../a", ".", "a/../b"])
                .prop_map(|t| Node::LinkIn(t.to_string())),
            prop::sample::select(vec!["../..", "../../outside", "/", "/proc/self", "OUTSIDE"])
                .prop_map(|t| Node::LinkOut(t.to_string())),
            prop::sample::select(vec!["missing", "../../outside/new", "/nonexistent/x"])
                .prop_map(|t| Node::Dangling(t.to_string())),
        ]
    }

    fn component() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c", "d", "missing", "..", ".", "secret"])
            .prop_map(str::to_string)
    }

    #[derive(Debug, Clone)]
    enum Start {
        Relative,
        AbsoluteRoot,
        AbsoluteOutside,
    }

    fn start() -> impl Strategy<Value = Start> {
        prop_oneof![
            6 => Just(Start::Relative),
            2 => Just(Start::AbsoluteRoot),
            1 => Just(Start::AbsoluteOutside),
        ]
    }

    /// Everything under `dir`: (relative path, content or link target), sorted.
    fn snapshot(dir: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(here) = stack.pop() {
            for entry in std::fs::read_dir(&here).unwrap().flatten() {
                let path = entry.path();
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    out.push((rel, "<dir>".into()));
                    stack.push(path);
                } else if meta.file_type().is_symlink() {
                    out.push((
                        rel,
                        format!("-> {}", std::fs::read_link(&path).unwrap().display()),
                    ));
                } else {
                    out.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
                }
            }
        }
        out.sort();
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn no_operation_reaches_outside_the_root(
            tree in prop::collection::vec((prop::collection::vec(name(), 0..3), name(), node()), 0..12),
            paths in prop::collection::vec((start(), prop::collection::vec(component(), 1..6)), 1..8),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("ws");
            let outside = dir.path().join("outside");
            std::fs::create_dir_all(&root).unwrap();
            std::fs::create_dir_all(outside.join("a")).unwrap();
            std::fs::write(outside.join("secret"), "SECRET").unwrap();
            std::fs::write(outside.join("a/secret"), "SECRET").unwrap();
            for (parents, leaf, node) in &tree {
                let folder = parents.iter().fold(root.clone(), |p, n| p.join(n));
                // Only build below real folders; anything else is skipped.
                if std::fs::create_dir_all(&folder).is_err() || !folder.is_dir() {
                    continue;
                }
                let at = folder.join(leaf);
                if std::fs::symlink_metadata(&at).is_ok() {
                    continue;
                }
                let _ = match node {
                    Node::Dir => std::fs::create_dir(&at),
                    Node::File => std::fs::write(&at, "inside"),
                    Node::LinkIn(t) | Node::Dangling(t) => symlink(t, &at),
                    Node::LinkOut(t) if t == "OUTSIDE" => symlink(&outside, &at),
                    Node::LinkOut(t) => symlink(t, &at),
                };
            }
            let before = snapshot(&outside);
            let ws = Workspace::new(&root).unwrap();
            let canonical_root = ws.root().to_path_buf();
            for (start, components) in &paths {
                let rel = components.join("/");
                let path = match start {
                    Start::Relative => rel,
                    Start::AbsoluteRoot => format!("{}/{rel}", canonical_root.display()),
                    Start::AbsoluteOutside => format!("{}/{rel}", outside.display()),
                };
                let Ok(inside) = ws.inside(&path) else { continue };
                // What the boundary says is inside really is, as the kernel sees it now.
                let mut probe = canonical_root.join(inside.path());
                while std::fs::symlink_metadata(&probe).is_err() {
                    probe.pop();
                }
                let real = probe.canonicalize().unwrap_or(probe.clone());
                prop_assert!(real.starts_with(&canonical_root), "{path} -> {real:?}");
                if let Ok(bytes) = ws.read_bytes(&inside, 1 << 20) {
                    prop_assert_ne!(bytes, b"SECRET".to_vec(), "{}", path);
                }
                if let Ok(file) = ws.open_regular(&inside) {
                    prop_assert_ne!(file.read_at(0, 64).unwrap(), b"SECRET".to_vec(), "{}", path);
                }
                let _ = ws.append(&inside, b"appended");
                let _ = ws.write_atomic(&inside, b"written", Existing::Replace);
                let _ = ws.lock_exclusive(&inside);
                let _ = ws.create_dir_all(&inside);
                let _ = ws.remove_leftovers(&inside);
            }
            prop_assert_eq!(snapshot(&outside), before);
        }
    }
}

#[test]
fn a_folder_can_be_flushed() {
    // An `O_PATH` handle (what `Dir::open_dir` gives) fails fsync with EBADF.
    let s = setup();
    s.ws.sync_folder(&s.ws.inside("src").unwrap()).unwrap();
    s.ws.sync_folder(&s.ws.inside(".").unwrap()).unwrap();
}

#[test]
fn a_symlink_loop_ends_with_an_error_instead_of_spinning() {
    let s = setup();
    let root = s.ws.root().to_path_buf();
    symlink("loop_b", root.join("loop_a")).unwrap();
    symlink("loop_a", root.join("loop_b")).unwrap();
    assert_eq!(
        s.ws.inside("loop_a/x").unwrap_err().to_string(),
        "cannot resolve `loop_a/x`: too many levels of symbolic links"
    );
}
