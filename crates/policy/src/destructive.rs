//! A hard deny list for commands that destroy machines rather than files.
//!
//! This is a seatbelt, not a sandbox: a determined command (`eval`, base64, a script file)
//! gets past any list. It exists so the obvious disasters are refused even with
//! `--approve all`; real isolation is the sandbox production harnesses add.

use agent_core::{Behavior, PreparedCall, ToolEffect, Verdict};

use crate::pipeline::{PermissionRule, RuleError};

const BLOCK_DEVICES: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
];

/// Why `command` is on the deny list, if it is.
pub fn destructive_reason(command: &str) -> Option<String> {
    let separators = |c: char| matches!(c, ';' | '&' | '|' | '\n' | '(' | ')' | '`');
    for segment in command.split(separators) {
        let tokens: Vec<&str> = segment.split_whitespace().collect();
        // Skip `VAR=value` prefixes and `exec`/`command` wrappers to find the program.
        let Some(pos) = tokens
            .iter()
            .position(|t| !t.contains('=') && !matches!(*t, "exec" | "command" | "nohup" | "env"))
        else {
            continue;
        };
        let program = tokens[pos].rsplit('/').next().unwrap_or(tokens[pos]);
        let args = &tokens[pos + 1..];
        let reason = match program {
            "sudo" | "su" | "doas" => Some("privilege escalation (`sudo`) is not allowed"),
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                Some("shutting the machine down is not allowed")
            }
            p if p == "mkfs" || p.starts_with("mkfs.") => {
                Some("formatting a file system (`mkfs`) is not allowed")
            }
            "dd" if args.iter().any(|a| a.starts_with("if=")) => {
                Some("raw copies with `dd if=` are not allowed")
            }
            "rm" if is_rm_rf_root(args) => Some("`rm -rf /` is not allowed"),
            _ => None,
        };
        if let Some(reason) = reason {
            return Some(reason.to_string());
        }
    }
    let squeezed: String = command.split_whitespace().collect::<Vec<_>>().join(" ");
    for device in BLOCK_DEVICES {
        for prefix in [">", "> ", ">>", ">> ", "of="] {
            if squeezed.contains(&format!("{prefix}{device}")) {
                return Some(format!(
                    "writing to a block device ({device}…) is not allowed"
                ));
            }
        }
    }
    None
}

fn is_rm_rf_root(args: &[&str]) -> bool {
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .map(|a| a.trim_start_matches('-'))
        .collect();
    let recursive = flags.contains('r') || flags.contains('R') || args.contains(&"--recursive");
    let force = flags.contains('f') || args.contains(&"--force");
    let root = args
        .iter()
        .any(|a| matches!(*a, "/" | "/*" | "~" | "~/" | "$HOME" | "--no-preserve-root"));
    recursive && force && root
}

/// Denies execute-effect calls whose summary (for `bash`, the command) is on the deny list.
#[derive(Debug, Clone, Copy, Default)]
pub struct DestructiveCommands;

impl PermissionRule for DestructiveCommands {
    fn name(&self) -> &str {
        "destructive_commands"
    }

    fn evaluate(&self, call: &PreparedCall) -> Result<Verdict, RuleError> {
        if call.effect != ToolEffect::Execute {
            return Ok(Verdict::passthrough(self.name()));
        }
        // What an execute tool runs is what it shows for approval (`bash`: the command).
        Ok(match destructive_reason(&call.summary.text) {
            Some(reason) => Verdict::new(Behavior::Deny, self.name(), reason),
            None => Verdict::passthrough(self.name()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::destructive_reason;

    #[test]
    fn the_obvious_disasters_are_caught() {
        for command in [
            "rm -rf /",
            "rm -fr /*",
            "echo ok; rm -r -f /",
            "sudo ls",
            "cd /tmp && /usr/bin/sudo -i",
            "shutdown -h now",
            "reboot",
            "mkfs.ext4 /dev/sda1",
            "dd if=/dev/zero of=disk.img bs=1M count=1",
            "cat x > /dev/sda",
            "echo hi >>/dev/nvme0n1",
            "FOO=1 sudo true",
        ] {
            assert!(destructive_reason(command).is_some(), "{command}");
        }
    }

    #[test]
    fn ordinary_commands_pass() {
        for command in [
            "rm -rf build/",
            "rm -f /tmp/x",
            "ls -la /",
            "echo sudo",
            "grep reboot notes.txt",
            "cargo test",
            "echo hi > /dev/null",
        ] {
            assert_eq!(destructive_reason(command), None, "{command}");
        }
    }
}
