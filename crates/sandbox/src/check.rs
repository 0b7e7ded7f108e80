//! What this machine supports, found out once per process: Landlock's ABI from the kernel,
//! and the namespaces by letting the helper set them up for nothing (a distribution may
//! refuse user namespaces, a container may refuse a fresh `/proc`).

use std::path::Path;
use std::sync::OnceLock;

use crate::HELPER_ARG;

/// The helper's argument that only tries the namespaces and exits.
pub(crate) const PROBE_ARG: &str = "--probe";

/// Why the namespaces cannot be used here. Its text is what `sandbox check` and the fallback
/// warning show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespacesError {
    /// The helper program could not be started at all.
    #[error("cannot run the helper {helper}: {reason}")]
    Helper {
        /// The helper's path, as shown.
        helper: String,
        /// The operating system's error, as text (so the support stays comparable).
        reason: String,
    },
    /// The helper ran and could not set the namespaces up; its own words (trimmed, at most
    /// 200 characters), for example the kernel refusing user namespaces.
    #[error("{0}")]
    Refused(String),
}

/// What the kernel lets the sandbox use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The user, PID, mount and network namespaces with a fresh `/proc`, or why not.
    pub namespaces: Result<(), NamespacesError>,
    /// Landlock's ABI version, if the kernel has it enabled.
    pub landlock_abi: Option<i32>,
}

static SUPPORT: OnceLock<Support> = OnceLock::new();

/// What this machine supports, asked of the kernel once per process (the first call runs the
/// helper at `helper` once).
pub fn support(helper: &Path) -> &'static Support {
    SUPPORT.get_or_init(|| Support {
        namespaces: probe_namespaces(helper),
        landlock_abi: landlock_abi(),
    })
}

fn probe_namespaces(helper: &Path) -> Result<(), NamespacesError> {
    // It needs nothing from our environment, so it gets none of it.
    let output = std::process::Command::new(helper)
        .args([HELPER_ARG, PROBE_ARG])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|err| NamespacesError::Helper {
            helper: helper.display().to_string(),
            reason: err.to_string(),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&output.stderr);
    Err(NamespacesError::Refused(
        why.trim().chars().take(200).collect(),
    ))
}

/// Landlock's ABI version, if the kernel has it and it is enabled.
pub(crate) fn landlock_abi() -> Option<i32> {
    // SAFETY: with a null attribute and the VERSION flag the call only returns the ABI
    // version (or an error); it creates nothing.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    i32::try_from(abi).ok().filter(|v| *v > 0)
}

impl Support {
    /// What `agent-tutorial sandbox check` prints: one line per feature, then the level
    /// commands will run at.
    pub fn summary(&self) -> String {
        let namespaces = match &self.namespaces {
            Ok(()) => "yes".to_string(),
            Err(why) => format!("no ({why})"),
        };
        let landlock = match self.landlock_abi {
            Some(abi) => format!(
                "yes, ABI {abi} (files{}{})",
                if abi >= 4 { ", TCP" } else { "" },
                if abi >= 6 {
                    ", signals and abstract sockets"
                } else {
                    ""
                }
            ),
            None => "no".to_string(),
        };
        let level = match (&self.namespaces, self.landlock_abi) {
            (Ok(()), Some(_)) => "namespaces + Landlock (the full sandbox)",
            (Err(_), Some(_)) => "Landlock only (fallback: see docs/sandbox.md)",
            (_, None) => "unconfined (fallback: see docs/sandbox.md)",
        };
        format!(
            "user, PID, mount and network namespaces with a private /proc: {namespaces}\n\
             Landlock: {landlock}\n\
             commands will run: {level}\n"
        )
    }
}
