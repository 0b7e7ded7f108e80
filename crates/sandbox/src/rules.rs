//! The Landlock rules: read the whole system, write only where the mode allows, no signals or
//! abstract sockets out of the sandbox, and no TCP when the network is off.

use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    Scope, path_beneath_rules,
};

use crate::{Mode, Network};

/// The newest Landlock behaviour these rules are written for; an older kernel enforces what
/// it knows (best effort), a kernel without Landlock is refused here (the agent then chose
/// the unconfined fallback already).
const ABI_TARGET: ABI = ABI::V6;

/// Devices every command may write to (`> /dev/null`).
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Why the Landlock rules could not be put in place; the helper prints it and gives up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RulesError {
    /// The kernel or the landlock crate refused a step of the ruleset.
    #[error("cannot set up Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The ruleset was accepted but the kernel enforces none of it.
    #[error("Landlock is not enforced by this kernel")]
    NotEnforced,
}

/// Restricts this process and every process it starts from now on.
pub(crate) fn restrict(
    mode: Mode,
    network: Network,
    workspace: &Path,
    tmp: &Path,
) -> Result<(), RulesError> {
    let abi = ABI_TARGET;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))?
        .scope(Scope::from_all(abi))?;
    if network == Network::Off {
        // No rule allows a port: every TCP bind and connect is refused.
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    let mut writable = vec![tmp];
    if matches!(mode, Mode::WorkspaceWrite | Mode::RepositoryWrite) {
        writable.push(workspace);
    }
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(DEVICES, AccessFs::from_all(abi)))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))?
        .restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(RulesError::NotEnforced);
    }
    Ok(())
}
