//! Telling cap-std's refusal to leave the directory handle from a permission the kernel
//! denied.

use std::io;

/// Whether cap-std refused to leave the directory handle (a symlink swapped in after our own
/// walk, an absolute path, `..` past the root): an escape, though it reads as "permission
/// denied". Told apart by kind and origin, not by message: cap-std makes this refusal itself
/// (`io::Error::new(PermissionDenied, ..)`, also where the kernel said `EXDEV` to
/// `RESOLVE_BENEATH`), so it carries no OS error code, while a permission the kernel denied
/// (`EACCES`, `EPERM`) always does. In its filesystem calls cap-std makes no other
/// `PermissionDenied` of its own.
pub(super) fn is_cap_std_escape(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none()
}

#[cfg(test)]
mod tests {
    use std::io;

    use crate::error::{Op, PathError};

    fn classified(source: io::Error) -> String {
        match PathError::io(Op::Read, "x", source) {
            PathError::Escape { path } => format!("escape {path}"),
            PathError::Io { source, .. } => format!("io {:?}", source.kind()),
            other => format!("other {other}"),
        }
    }

    #[test]
    fn a_refusal_cap_std_made_is_an_escape_and_one_the_kernel_made_is_not() {
        let results = [
            // Whatever cap-std's message says: the kind and the missing OS code decide.
            classified(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "a path led outside of the filesystem",
            )),
            classified(io::Error::new(io::ErrorKind::PermissionDenied, "reworded")),
            classified(io::Error::from_raw_os_error(libc::EACCES)),
            classified(io::Error::from_raw_os_error(libc::EPERM)),
            classified(io::Error::from_raw_os_error(libc::ENOENT)),
        ];
        assert_eq!(
            results,
            [
                "escape x",
                "escape x",
                "io PermissionDenied",
                "io PermissionDenied",
                "io NotFound",
            ]
        );
    }

    /// cap-std's own refusal, as a real operation meets it: the folder of a checked path
    /// becomes an outward link before the read. The boundary's walk cannot see it; cap-std
    /// refuses, and the refusal reads as an escape, not as a permission problem.
    #[test]
    fn a_link_swapped_in_after_the_check_is_reported_as_an_escape() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("audit.jsonl"), "SECRET").unwrap();
        let ws = crate::Workspace::new(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("logs")).unwrap();
        let checked = ws.inside("logs/audit.jsonl").unwrap();
        std::fs::remove_dir(dir.path().join("logs")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("logs")).unwrap();
        let error = ws.read_to_string(&checked, 1024).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`logs/audit.jsonl` resolves outside the workspace"
        );
    }
}
