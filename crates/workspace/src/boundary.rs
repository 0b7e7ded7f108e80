//! The workspace boundary: which path inside the workspace a requested path names.
//!
//! Resolution walks the requested path one component at a time, as the kernel does, but on
//! paths relative to a directory handle of the root ([`cap_std::fs::Dir`]): `..` pops a
//! component (and popping past the root is an escape), a symlink is replaced by its target
//! (a relative target is walked from the link's folder, an absolute one must name a place under
//! the root), and a component that does not exist ends the checking: what follows it is joined
//! as is, and a `..` after it is refused, because the kernel would refuse it too
//! (`missing/..` is `ENOENT`, not "the folder I started in").
//!
//! The result, [`Inside`], is a relative path with no symlink and no `..` in it. Every file
//! operation then opens it relative to the same handle with `O_NOFOLLOW` on the last component
//! (see `fs.rs`), so a symlink swapped in between the check and the open cannot lead out either:
//! cap-std refuses any resolution that leaves the handle.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::error::{Op, PathError};

/// Symlinks followed in one resolution before giving up, as Linux's `MAXSYMLINKS`.
const MAX_SYMLINK_HOPS: usize = 40;

/// A directory everything the harness does on disk is confined to. Cheap to clone.
///
/// ```
/// use agent_workspace::{Existing, PathError, Workspace};
///
/// let dir = tempfile::tempdir().unwrap();
/// let workspace = Workspace::new(dir.path()).unwrap();
/// let notes = workspace.inside("notes/today.md").unwrap();
/// assert_eq!(notes.to_string(), "notes/today.md");
/// workspace.write_atomic(&notes, b"hello", Existing::Replace).unwrap();
/// assert_eq!(workspace.read_to_string(&notes, 1024).unwrap(), "hello");
///
/// // `..` past the root is refused before any file is touched.
/// let error = workspace.inside("../outside").unwrap_err();
/// assert!(matches!(error, PathError::Escape { .. }));
/// assert_eq!(error.to_string(), "`../outside` resolves outside the workspace");
/// ```
#[derive(Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    dir: Dir,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.inner.root)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.inner.root == other.inner.root
    }
}

impl Eq for Workspace {}

/// A path the boundary has checked: relative to the workspace root, with every symlink in it
/// replaced by where it leads and no `..` left. Only [`Workspace::inside`] makes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inside(PathBuf);

impl Inside {
    /// The relative path (empty for the root itself).
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The path as `cap-std` takes it: `.` for the root.
    pub(crate) fn cap(&self) -> &Path {
        if self.0.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.0
        }
    }

    /// The folder holding this path, if it is not the root.
    pub fn parent(&self) -> Option<Inside> {
        if self.0.as_os_str().is_empty() {
            return None;
        }
        Some(Inside(
            self.0.parent().map(Path::to_path_buf).unwrap_or_default(),
        ))
    }

    /// The last component, if any.
    pub fn file_name(&self) -> Option<&std::ffi::OsStr> {
        self.0.file_name()
    }

    /// This path with one more plain component (a name with no `/`, not `.` or `..`).
    /// Only for names the harness chooses itself; a model's path goes through
    /// [`Workspace::inside`].
    pub fn child(&self, name: &str) -> Option<Inside> {
        let mut components = Path::new(name).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(part)), None) => Some(Inside(self.0.join(part))),
            _ => None,
        }
    }
}

impl fmt::Display for Inside {
    /// Workspace-relative with `/` separators, `.` for the root: what the model is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.as_os_str().is_empty() {
            f.write_str(".")
        } else {
            write!(f, "{}", self.0.display())
        }
    }
}

impl Workspace {
    /// Opens an existing directory as the workspace: its canonical path is kept for showing
    /// and for absolute paths, and a handle to it for every operation.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(Self {
            inner: Arc::new(Inner { root, dir }),
        })
    }

    /// The canonical absolute path of the root.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    pub(crate) fn dir(&self) -> &Dir {
        &self.inner.dir
    }

    /// Checks `path` (relative to the root, or absolute and under it) and says which place
    /// inside the workspace it names.
    pub fn inside(&self, path: &str) -> Result<Inside, PathError> {
        let requested = Path::new(path);
        let relative = if requested.is_absolute() {
            requested
                .strip_prefix(self.root())
                .map_err(|_| PathError::escape(path))?
        } else {
            requested
        };
        let mut walk = Walk {
            dir: self.dir(),
            root: self.root(),
            requested: path,
            stack: Vec::new(),
            missing: None,
            hops: 0,
        };
        walk.walk(relative)?;
        Ok(Inside(walk.stack.iter().collect()))
    }

    /// [`Self::inside`] as an absolute path, for showing and for rules that compare paths.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        Ok(self.root().join(self.inside(path)?.path()))
    }

    /// The path relative to the root, with `/` separators, for showing to the model.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

/// One resolution in progress: the components of the place reached so far.
struct Walk<'a> {
    dir: &'a Dir,
    root: &'a Path,
    requested: &'a str,
    stack: Vec<OsString>,
    /// The first component that does not exist, once one was met.
    missing: Option<PathBuf>,
    hops: usize,
}

impl Walk<'_> {
    fn walk(&mut self, path: &Path) -> Result<(), PathError> {
        for component in path.components() {
            match component {
                // Only an absolute symlink target starts with these; it was made relative
                // before it got here, so meeting one means the path is not what it seems.
                Component::Prefix(_) | Component::RootDir => {
                    return Err(PathError::escape(self.requested));
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if let Some(missing) = &self.missing {
                        return Err(PathError::ThroughMissing {
                            path: self.requested.to_string(),
                            missing: missing.display().to_string(),
                        });
                    }
                    if self.stack.pop().is_none() {
                        return Err(PathError::escape(self.requested));
                    }
                }
                Component::Normal(name) => self.step(name)?,
            }
        }
        Ok(())
    }

    fn step(&mut self, name: &std::ffi::OsStr) -> Result<(), PathError> {
        self.stack.push(name.to_os_string());
        if self.missing.is_some() {
            return Ok(());
        }
        let here: PathBuf = self.stack.iter().collect();
        let meta = match self.dir.symlink_metadata(&here) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                self.missing = Some(here);
                return Ok(());
            }
            Err(source) => return Err(PathError::io(Op::Resolve, self.requested, source)),
        };
        if !meta.file_type().is_symlink() {
            return Ok(());
        }
        self.hops += 1;
        if self.hops > MAX_SYMLINK_HOPS {
            return Err(PathError::io(
                Op::Resolve,
                self.requested,
                io::Error::other("too many levels of symbolic links"),
            ));
        }
        let target = self
            .dir
            .read_link_contents(&here)
            .map_err(|source| PathError::io(Op::Resolve, self.requested, source))?;
        // The link is replaced by its target, walked from the folder that holds the link.
        self.stack.pop();
        if target.is_absolute() {
            let below = target
                .strip_prefix(self.root)
                .map_err(|_| PathError::escape(self.requested))?;
            self.stack.clear();
            self.walk(below)
        } else {
            self.walk(&target)
        }
    }
}
