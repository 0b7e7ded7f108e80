//! The prompt history, kept in the user's data directory outside any workspace, like the
//! trust file (`trust.rs`), and handled the same way: never through a symlink, never a FIFO,
//! read bounded, created 0600. A history problem is a warning: the loop works without one.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::super::trust::{TrustError, read_bounded};

/// A larger history file is not loaded (and not appended to): it is the user's to trim.
pub const MAX_HISTORY_FILE_BYTES: u64 = 1 << 20;
/// At most this many earlier prompts are offered (the newest ones).
pub const MAX_HISTORY_ENTRIES: usize = 1000;

/// Why the prompt history could not be kept; the prompt works without it.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Neither `XDG_DATA_HOME` nor `HOME` names a place for it.
    #[error("no data directory to keep the prompt history in: set XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// The file could not be read (bounded, no symlink followed).
    #[error("cannot load the prompt history")]
    Load(#[source] TrustError),
    /// The file is a symlink: writing through it could overwrite any file of the user's.
    #[error("{} is a symbolic link; refusing to write through it", path.display())]
    Symlink {
        /// The history file.
        path: PathBuf,
    },
    /// The file is a folder, a FIFO or a device.
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The history file.
        path: PathBuf,
    },
    /// Appending a prompt failed.
    #[error("cannot write {}", path.display())]
    Write {
        /// The history file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// `history` in the user's data directory.
#[derive(Debug, Clone)]
pub struct HistoryFile {
    path: PathBuf,
}

impl HistoryFile {
    /// `$XDG_DATA_HOME/agent-tutorial/history`, else `$HOME/.local/share/agent-tutorial/history`.
    /// A relative `XDG_DATA_HOME` is ignored, as the XDG spec says.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, HistoryError> {
        let base = match var("XDG_DATA_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => match var("HOME").map(PathBuf::from) {
                Some(home) if home.is_absolute() => home.join(".local/share"),
                _ => return Err(HistoryError::NoDataDir),
            },
        };
        Ok(Self {
            path: base.join("agent-tutorial").join("history"),
        })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The newest [`MAX_HISTORY_ENTRIES`] prompts, oldest first; none when there is no file.
    pub fn load(&self) -> Result<Vec<String>, HistoryError> {
        let Some(bytes) =
            read_bounded(&self.path, MAX_HISTORY_FILE_BYTES).map_err(HistoryError::Load)?
        else {
            return Ok(Vec::new());
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        let skip = lines.len().saturating_sub(MAX_HISTORY_ENTRIES);
        Ok(lines.into_iter().skip(skip).collect())
    }

    /// Appends one prompt as one line (line breaks become spaces). The folder is created
    /// 0700 and the file 0600; a symlink or anything but a regular file is refused.
    pub fn append(&self, entry: &str) -> Result<(), HistoryError> {
        let write_error = |source| HistoryError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(write_error)?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            // No-follow: a planted link is refused, not written through; non-blocking: a FIFO
            // without a reader fails at once instead of hanging the prompt.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path);
        let mut file = match file {
            Ok(file) => file,
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                return Err(HistoryError::Symlink {
                    path: self.path.clone(),
                });
            }
            Err(err) => return Err(write_error(err)),
        };
        let meta = file.metadata().map_err(write_error)?;
        if !meta.is_file() {
            return Err(HistoryError::NotAFile {
                path: self.path.clone(),
            });
        }
        // `mode` applies only when the file is created: one that already exists with wider
        // permissions (another program, an older version) is made private before a prompt,
        // which may hold a secret someone pasted, goes into it.
        if meta.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(write_error)?;
        }
        let line: String = entry
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
            .collect();
        writeln!(file, "{line}").map_err(write_error)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn history_in(dir: &Path) -> HistoryFile {
        let data = dir.to_path_buf();
        HistoryFile::from_env(move |key| (key == "XDG_DATA_HOME").then(|| data.clone().into()))
            .unwrap()
    }

    #[test]
    fn the_file_is_in_the_data_directory_and_a_relative_xdg_data_home_is_ignored() {
        let env = |xdg: &'static str| {
            move |key: &str| match key {
                "XDG_DATA_HOME" => Some(OsString::from(xdg)),
                "HOME" => Some(OsString::from("/home/u")),
                _ => None,
            }
        };
        assert_eq!(
            HistoryFile::from_env(env("/data")).unwrap().path(),
            Path::new("/data/agent-tutorial/history")
        );
        assert_eq!(
            HistoryFile::from_env(env("relative")).unwrap().path(),
            Path::new("/home/u/.local/share/agent-tutorial/history")
        );
        assert!(matches!(
            HistoryFile::from_env(|_| None),
            Err(HistoryError::NoDataDir)
        ));
    }

    #[test]
    fn an_existing_history_file_readable_by_others_is_made_private_before_a_prompt_goes_in() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        std::fs::create_dir_all(history.path().parent().unwrap()).unwrap();
        std::fs::write(history.path(), "older prompt\n").unwrap();
        std::fs::set_permissions(history.path(), std::fs::Permissions::from_mode(0o644)).unwrap();

        history.append("my token is hunter2").unwrap();

        let mode = std::fs::metadata(history.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            history.load().unwrap(),
            ["older prompt", "my token is hunter2"]
        );
    }

    #[test]
    fn prompts_are_appended_one_line_each_to_a_0600_file_and_loaded_back() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        assert_eq!(history.load().unwrap(), Vec::<String>::new());

        history.append("list the files").unwrap();
        history.append("two\nlines").unwrap();

        assert_eq!(history.load().unwrap(), ["list the files", "two lines"]);
        let mode = std::fs::metadata(history.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(history.path().parent().unwrap()).unwrap();
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn only_the_newest_entries_are_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        std::fs::create_dir_all(history.path().parent().unwrap()).unwrap();
        let lines: Vec<String> = (0..MAX_HISTORY_ENTRIES + 5)
            .map(|i| i.to_string())
            .collect();
        std::fs::write(history.path(), lines.join("\n")).unwrap();

        let loaded = history.load().unwrap();

        assert_eq!(loaded.len(), MAX_HISTORY_ENTRIES);
        assert_eq!(loaded.first().map(String::as_str), Some("5"));
    }

    #[test]
    fn a_symlink_is_neither_read_nor_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        std::fs::create_dir_all(history.path().parent().unwrap()).unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "secret\n").unwrap();
        symlink(&target, history.path()).unwrap();

        assert!(matches!(
            history.load(),
            Err(HistoryError::Load(TrustError::Symlink { .. }))
        ));
        assert!(matches!(
            history.append("x"),
            Err(HistoryError::Symlink { .. })
        ));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "secret\n");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        std::fs::create_dir_all(history.path().parent().unwrap()).unwrap();
        let path = std::ffi::CString::new(history.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo only creates a file at a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);

        assert!(matches!(
            history.load(),
            Err(HistoryError::Load(TrustError::NotAFile { .. }))
        ));
        // No reader on the FIFO: a blocking open would hang; this one fails at once.
        assert!(matches!(
            history.append("x"),
            Err(HistoryError::Write { .. } | HistoryError::NotAFile { .. })
        ));
    }

    #[test]
    fn a_huge_file_is_not_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let history = history_in(dir.path());
        std::fs::create_dir_all(history.path().parent().unwrap()).unwrap();
        let file = std::fs::File::create(history.path()).unwrap();
        file.set_len(MAX_HISTORY_FILE_BYTES + 1).unwrap();

        assert!(matches!(
            history.load(),
            Err(HistoryError::Load(TrustError::TooLarge { .. }))
        ));
    }
}
