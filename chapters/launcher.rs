//! What every chapter binary is: a launcher for the one real program, `agent-tutorial`.
//!
//! `chNN` finds `agent-tutorial` in the folder it was itself started from and replaces itself
//! with it (`exec`: same process, same pid, same environment, same terminal — no parent left
//! waiting), under its own name as `argv[0]`; `agent-tutorial` runs chapter NN's profile when
//! it is started under the name `chNN`. So a release build links and optimizes the harness
//! once instead of once per chapter, and `cargo install` still gives `ch01`, `ch02`, ….
//!
//! Only the standard library on purpose: a launcher that called into the harness would link
//! the whole harness again, which is what this replaces.
//!
//! A new chapter is one more `chapters/chNN/main.rs` calling [`exec`] with its name, and one
//! more `[[bin]]` in `crates/agent-tutorial/Cargo.toml`.

use std::os::unix::process::CommandExt as _;
use std::process::{Command, ExitCode};

/// The program every chapter runs, next to the launcher.
const PROGRAM: &str = "agent-tutorial";

/// Replaces this process with `agent-tutorial`, started as `name` with this process's
/// arguments. Returns only when that fails: then it says why and exits 2, the harness's code
/// for "could not start".
pub fn exec(name: &str) -> ExitCode {
    // `current_exe` is /proc/self/exe: the launcher's real file, wherever a symlink to it was.
    let program = match std::env::current_exe() {
        Ok(me) => me.with_file_name(PROGRAM),
        Err(e) => {
            eprintln!(
                "{name}: cannot tell where this program is, to find {PROGRAM} next to it: {e}"
            );
            return ExitCode::from(2);
        }
    };
    let error = Command::new(&program)
        .arg0(name)
        .args(std::env::args_os().skip(1))
        .exec();
    // `{:?}`: the folder's name is not ours, and Debug escapes any control character in it.
    eprintln!("{name}: cannot run {program:?} (install it next to {name}): {error}");
    ExitCode::from(2)
}
