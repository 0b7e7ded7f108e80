//! The workspace boundary: every path a tool touches resolves inside one directory.
//!
//! Resolution walks the path one component at a time. An existing component is canonicalized
//! (so a symlink is followed to where it really points); once a component does not exist, the
//! rest cannot be symlinks and is joined lexically. The result must stay under the canonical
//! root. This is "canonicalize the deepest existing ancestor", done so that `..` after a
//! symlink means what the file system means by it.

use std::io;
use std::path::{Component, Path, PathBuf};

use agent_core::{ToolFailure, codes};

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("`{path}` resolves outside the workspace")]
    Escape { path: String },
    #[error("cannot resolve `{path}`: {source}")]
    Io { path: String, source: io::Error },
}

impl From<PathError> for ToolFailure {
    fn from(err: PathError) -> Self {
        match err {
            PathError::Escape { .. } => ToolFailure::new(codes::PATH_ESCAPE, err.to_string()),
            PathError::Io { .. } => ToolFailure::execution(err),
        }
    }
}

/// A directory tools are confined to. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens an existing directory as the workspace (its canonical path is kept).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root, or absolute) to a path inside the workspace.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        let escape = || PathError::Escape {
            path: path.to_string(),
        };
        let requested = Path::new(path);
        let mut current = if requested.is_absolute() {
            PathBuf::from("/")
        } else {
            self.root.clone()
        };
        let mut exists = true;
        for component in requested.components() {
            match component {
                Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
                Component::ParentDir => {
                    // `current` is canonical (or below a missing directory), so popping is the
                    // real parent.
                    current.pop();
                }
                Component::Normal(name) => {
                    current.push(name);
                    if exists {
                        match current.symlink_metadata() {
                            Ok(_) => {
                                // A dangling symlink cannot be checked: refuse it.
                                current = current.canonicalize().map_err(|_| escape())?;
                            }
                            Err(err) if err.kind() == io::ErrorKind::NotFound => exists = false,
                            Err(source) => {
                                return Err(PathError::Io {
                                    path: path.to_string(),
                                    source,
                                });
                            }
                        }
                    }
                }
            }
        }
        if current.starts_with(&self.root) {
            Ok(current)
        } else {
            Err(escape())
        }
    }

    /// The path relative to the root, with `/` separators, for showing to the model.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let ws_dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws_dir.path().join("src")).unwrap();
        std::fs::write(ws_dir.path().join("src/a.txt"), "a").unwrap();
        std::os::unix::fs::symlink(outside.path(), ws_dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink("src", ws_dir.path().join("inner")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x", ws_dir.path().join("dangling")).unwrap();
        let ws = Workspace::new(ws_dir.path()).unwrap();
        (ws_dir, outside, ws)
    }

    #[test]
    fn paths_inside_resolve() {
        let (_d, _o, ws) = setup();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("src/a.txt").unwrap(), root.join("src/a.txt"));
        assert_eq!(
            ws.resolve("./src/../src/new.txt").unwrap(),
            root.join("src/new.txt")
        );
        assert_eq!(
            ws.resolve("new/deep/file").unwrap(),
            root.join("new/deep/file")
        );
        assert_eq!(ws.resolve("inner/a.txt").unwrap(), root.join("src/a.txt"));
        let absolute = root.join("src/a.txt");
        assert_eq!(ws.resolve(absolute.to_str().unwrap()).unwrap(), absolute);
        assert_eq!(ws.resolve(".").unwrap(), root);
    }

    #[test]
    fn every_escape_is_refused() {
        let (_d, _o, ws) = setup();
        for path in [
            "..",
            "../x",
            "src/../../x",
            "missing/../../x",
            "/etc/passwd",
            "out",
            "out/secret.txt",
            "inner/../../x",
            "dangling",
        ] {
            let err = ws.resolve(path).unwrap_err();
            assert!(
                matches!(err, PathError::Escape { .. }),
                "{path} should escape, got {err:?}"
            );
            assert_eq!(
                ToolFailure::from(err).to_string(),
                format!("Error [path_escape]: `{path}` resolves outside the workspace")
            );
        }
    }
}
