//! The init's mounts: a private copy of the mount table, a fresh `/proc`, and `.git/`
//! read-only.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use crate::Mode;

/// Why a mount could not be made. Its text is what the helper prints before it gives up (and
/// what `sandbox check` shows for the probe), so each wrapping step names what it was doing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MountError {
    /// A path handed to mount(2) holds a NUL byte.
    #[error("a path holds a NUL byte")]
    NulByte,
    /// The workspace path is not UTF-8 (mount(2) is given it as a string).
    #[error("the workspace path is not UTF-8")]
    NotUtf8,
    /// statvfs(2) failed on the folder about to be made read-only.
    #[error("statvfs: {0}")]
    Statvfs(io::Error),
    /// mount(2) itself refused.
    #[error("{0}")]
    Mount(io::Error),
    /// Making the whole mount table private failed.
    #[error("cannot make the mounts private: {0}")]
    Private(Box<MountError>),
    /// Mounting this namespace's own `/proc` failed.
    #[error("cannot mount a private /proc: {0}")]
    Proc(Box<MountError>),
    /// Bind-mounting `.git/` read-only failed.
    #[error("cannot make .git read-only: {0}")]
    GitReadOnly(Box<MountError>),
}

/// A private copy of the mount table with a fresh `/proc` (only this namespace's processes)
/// and, in workspace-write, `.git/` read-only.
pub(crate) fn mounts(mode: Mode, workspace: &Path) -> Result<(), MountError> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE)
        .map_err(|err| MountError::Private(Box::new(err)))?;
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    )
    .map_err(|err| MountError::Proc(Box::new(err)))?;
    if mode == Mode::WorkspaceWrite {
        let git = workspace.join(".git");
        // A `.git` that is a symlink is not followed: what it leads to outside the workspace
        // is read-only already (Landlock).
        if std::fs::symlink_metadata(&git).is_ok_and(|m| !m.file_type().is_symlink()) {
            read_only(&git).map_err(|err| MountError::GitReadOnly(Box::new(err)))?;
        }
    }
    Ok(())
}

/// Bind-mounts `path` onto itself read-only, keeping the flags the kernel locks (a remount
/// in a user namespace may not drop `nosuid`, `nodev`, `noexec` or the atime flags).
fn read_only(path: &Path) -> Result<(), MountError> {
    let text = path.to_str().ok_or(MountError::NotUtf8)?;
    mount(Some(text), text, None, libc::MS_BIND | libc::MS_REC)?;
    let c = cstring(path.as_os_str())?;
    // SAFETY: statvfs fills the zeroed struct for a NUL-terminated path.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return Err(MountError::Statvfs(io::Error::last_os_error()));
    }
    let kept = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st, _)| stat.f_flag & *st != 0)
    .fold(0, |flags, (_, ms)| flags | ms);
    mount(
        None,
        text,
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
    )
}

fn cstring(s: &OsStr) -> Result<CString, MountError> {
    CString::new(s.as_bytes()).map_err(|_| MountError::NulByte)
}

pub(crate) fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> Result<(), MountError> {
    let c = |s: &str| CString::new(s).map_err(|_| MountError::NulByte);
    let source = source.map(c).transpose()?;
    let target = c(target)?;
    let fstype = fstype.map(c).transpose()?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string or null, as mount(2) takes them.
    let done = unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            std::ptr::null(),
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(MountError::Mount(io::Error::last_os_error()))
    }
}
