//! Programs the tests drive for real: `git` in a temporary repository, and the reference MCP
//! server that `.ci/run` installs from npm.

use std::path::{Path, PathBuf};

/// Runs `git args…` in `dir` with a fixed identity and none of the machine's configuration
/// (no system or global file), asserts it succeeded, and returns its stdout: the tests' own git
/// commands, which set a repository up or look at it, never the harness's.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap_or_else(|err| panic!("cannot run git {args:?}: {err}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The variable `.ci/run` sets to the entry script of npm's `server-everything`.
pub const MCP_EVERYTHING_SERVER: &str = "MCP_EVERYTHING_SERVER";

/// The installed reference MCP server's entry script. Tests are offline, so they do not
/// install it: without it a test passes with a note, except under CI (`CI=true`), where a
/// missing server is a failure.
pub fn mcp_everything_server() -> Option<PathBuf> {
    match std::env::var_os(MCP_EVERYTHING_SERVER).map(PathBuf::from) {
        Some(script) if script.is_file() => Some(script),
        _ if std::env::var("CI").as_deref() == Ok("true") => panic!(
            "{MCP_EVERYTHING_SERVER} does not name the installed server-everything (see .ci/run)"
        ),
        _ => {
            eprintln!("skipped: {MCP_EVERYTHING_SERVER} is not set (.ci/run installs the server)");
            None
        }
    }
}
