//! The `OPENAI_*` variables, taken out of the process environment at start-up.
//!
//! A variable left in the environment is inherited by every child (bash, hooks) and readable by
//! any process of the same user through `/proc/<pid>/environ`. So the binaries read the
//! variables once, before any thread or child exists, and remove them; configuration loading
//! then looks them up here.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The prefix of the variables that configure the model server.
const PREFIX: &str = "OPENAI_";

/// The most of a key file that is read: a key is a line, not a document.
const KEY_FILE_LIMIT: u64 = 4096;

/// Why the key file named by `OPENAI_API_KEY_FILE` gave no key. The `Display` is the reason
/// the configuration error quotes.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// It could not be opened.
    #[error("{0}")]
    Open(std::io::Error),
    /// A folder, a FIFO, a device: anything but a regular file.
    #[error("not a regular file")]
    NotAFile,
    /// Over `KEY_FILE_LIMIT` (4096) bytes.
    #[error("larger than {KEY_FILE_LIMIT} bytes")]
    TooLarge,
    /// Only white space.
    #[error("empty")]
    Empty,
    /// It was opened but could not be read.
    #[error("{0}")]
    Read(std::io::Error),
}

/// Reads the API key from the file `OPENAI_API_KEY_FILE` names: a regular file (opened
/// non-blocking, so a FIFO without a writer is refused instead of hanging the start), at most
/// `KEY_FILE_LIMIT` bytes, surrounding white space trimmed. The key then lives in the agent's
/// memory only, never in an environment a launcher keeps.
pub fn read_key_file(path: &std::path::Path) -> Result<String, KeyFileError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(KeyFileError::Open)?;
    let meta = file.metadata().map_err(KeyFileError::Open)?;
    if !meta.is_file() {
        return Err(KeyFileError::NotAFile);
    }
    let mut text = String::new();
    file.take(KEY_FILE_LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(KeyFileError::Read)?;
    if text.len() as u64 > KEY_FILE_LIMIT {
        return Err(KeyFileError::TooLarge);
    }
    let key = text.trim();
    if key.is_empty() {
        return Err(KeyFileError::Empty);
    }
    Ok(key.to_string())
}

/// The `OPENAI_*` variables the process started with. `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ModelEnv {
    vars: BTreeMap<String, String>,
}

impl std::fmt::Debug for ModelEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

impl ModelEnv {
    /// A set built from pairs (tests, and callers that never had the variables).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Reads every `OPENAI_*` variable and removes it from the environment, including the copy
    /// `/proc/self/environ` shows (on Linux).
    ///
    /// # Safety
    ///
    /// The process must be single-threaded (call it first thing in `main`) and nothing may hold
    /// a pointer obtained from the environment: removing a variable is a data race with any
    /// concurrent `getenv`, and the bytes behind the removed entries are overwritten.
    pub unsafe fn take_from_process() -> Self {
        let names: Vec<OsString> = std::env::vars_os()
            .map(|(name, _)| name)
            .filter(|name| name.as_encoded_bytes().starts_with(PREFIX.as_bytes()))
            .collect();
        let vars = names
            .iter()
            .filter_map(|name| {
                let value = std::env::var_os(name)?.into_string().ok()?;
                Some((name.to_string_lossy().into_owned(), value))
            })
            .collect();
        #[cfg(target_os = "linux")]
        // SAFETY: forwarded from this function's contract.
        let initial = unsafe { initial_block::entries_with_prefix(PREFIX.as_bytes()) };
        for name in &names {
            // SAFETY: forwarded from this function's contract (single-threaded).
            unsafe { std::env::remove_var(name) };
        }
        #[cfg(target_os = "linux")]
        // SAFETY: the entries were just removed from `environ`, so nothing refers to them.
        unsafe {
            initial_block::wipe(&initial)
        };
        Self { vars }
    }

    /// The value `name` had when it was taken, if it was set.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
}

/// The environment block the kernel wrote at `exec`. `/proc/<pid>/environ` reads that memory,
/// not the C library's current `environ`, so removing a variable leaves it visible there; the
/// bytes themselves must be overwritten.
#[cfg(target_os = "linux")]
mod initial_block {
    use std::ffi::{CStr, c_char};

    unsafe extern "C" {
        static environ: *const *const c_char;
    }

    /// One entry (`NAME=value`) of the initial block: its address and length.
    pub(super) struct Entry {
        start: *mut u8,
        len: usize,
    }

    /// `[env_start, env_end)` from `/proc/self/stat` (fields 50 and 51).
    fn block() -> Option<(usize, usize)> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the command name, which is in parentheses and may contain spaces.
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // `rest` starts at field 3, so field n is fields[n - 3].
        let start = fields.get(47)?.parse().ok()?;
        let end = fields.get(48)?.parse().ok()?;
        Some((start, end))
    }

    /// The entries of `environ` starting with `prefix` that live in the initial block (an
    /// entry set later by the program lives elsewhere and is not shown by `/proc`).
    ///
    /// # Safety
    ///
    /// No other thread may modify the environment meanwhile.
    pub(super) unsafe fn entries_with_prefix(prefix: &[u8]) -> Vec<Entry> {
        let Some((start, end)) = block() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        // SAFETY: `environ` is a NULL-terminated array of NUL-terminated strings, unchanged
        // while we read it (the caller guarantees no concurrent modification).
        unsafe {
            let mut cursor = environ;
            while !cursor.is_null() && !(*cursor).is_null() {
                let entry = *cursor;
                let bytes = CStr::from_ptr(entry).to_bytes();
                let addr = entry as usize;
                if bytes.starts_with(prefix) && addr >= start && addr + bytes.len() < end {
                    found.push(Entry {
                        start: entry.cast_mut().cast::<u8>(),
                        len: bytes.len(),
                    });
                }
                cursor = cursor.add(1);
            }
        }
        found
    }

    /// Overwrites each entry with NUL bytes.
    ///
    /// # Safety
    ///
    /// The entries must come from [`entries_with_prefix`] and no longer be referenced by
    /// `environ` or anything else.
    pub(super) unsafe fn wipe(entries: &[Entry]) {
        for entry in entries {
            for i in 0..entry.len {
                // SAFETY: inside the writable initial block (checked against its bounds), and
                // unreferenced (caller). Volatile so the stores are not optimised away.
                unsafe { entry.start.add(i).write_volatile(0) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_is_read_trimmed_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key");
        std::fs::write(&key, "  sk-from-file\n").unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, "k".repeat(5000)).unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        // A FIFO with no writer: refused at once (opened non-blocking), never waited on.
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_eq!(
            [&key, &big, &empty, &dir.path().to_path_buf(), &fifo]
                .map(|p| read_key_file(p).map_err(|err| err.to_string())),
            [
                Ok("sk-from-file".to_string()),
                Err("larger than 4096 bytes".to_string()),
                Err("empty".to_string()),
                Err("not a regular file".to_string()),
                Err("not a regular file".to_string()),
            ]
        );
    }

    #[test]
    fn debug_shows_names_only() {
        let env = ModelEnv::from_pairs([("OPENAI_API_KEY", "sk-secret"), ("OPENAI_MODEL", "m")]);
        assert_eq!(format!("{env:?}"), r#"{"OPENAI_API_KEY", "OPENAI_MODEL"}"#);
        assert_eq!(env.get("OPENAI_MODEL"), Some("m".to_string()));
        assert_eq!(env.get("OPENAI_BASE_URL"), None);
    }
}
