//! One link setting for the release harness: relative relocations packed (`DT_RELR`).
//!
//! The harness is a position-independent executable, so every pointer in its tables (vtables,
//! string tables, serde's field lists) needs a relocation at start-up. Written out as `RELA`
//! entries they were 0.6 MB, 4 % of the release binary; packed as bitmaps they are a few
//! kilobytes. The loader has to understand the packed form (glibc 2.36 on; the linker then
//! makes the program require it, so an older loader refuses it by name rather than crashing),
//! so it is asked for only when the glibc this build links against has it. A linker too old
//! to know the option warns and ignores it.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let native_linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("HOST") == var("TARGET");
    if native_linux_gnu && var("PROFILE") == "release" && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=agent-tutorial=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the build machine's glibc is 2.36 or later (`getconf GNU_LIBC_VERSION` prints
/// `glibc 2.36`); anything unreadable counts as no.
fn glibc_has_relr() -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut numbers = text
        .trim()
        .strip_prefix("glibc ")
        .unwrap_or_default()
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
