//! Who is on the team, as the runtime reports it: the names mail may go to and the names a
//! new teammate may not take. The runtime owns the teammates; this is its answer, checked
//! before any file is touched (a misspelt name must not "succeed" into a phantom inbox).

use std::fmt;

use agent_protocol::AgentId;

/// The most teammates one session may have (every status counts: a shut-down teammate's
/// name and mailbox stay taken).
pub const MAX_TEAMMATES: usize = 8;

/// Where a teammate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeammateStatus {
    /// Working on a message.
    Running,
    /// Waiting for mail.
    Idle,
    /// Its last run failed; it takes no more mail.
    Failed,
    /// Stopped by a shutdown request (or the end of the session).
    ShutDown,
}

impl TeammateStatus {
    /// Whether a teammate in this status can receive mail.
    pub fn receives_mail(self) -> bool {
        matches!(self, Self::Running | Self::Idle)
    }

    /// The word shown to the model and the person.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Idle => "idle",
            Self::Failed => "failed",
            Self::ShutDown => "shut down",
        }
    }
}

impl fmt::Display for TeammateStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One teammate as the roster lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its name, which is also its mailbox.
    pub name: AgentId,
    /// What the lead said it is for (one line).
    pub role: String,
    /// Where it stands.
    pub status: TeammateStatus,
}

/// The session's teammates (the lead is always there and not listed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Roster {
    /// In the order they were started.
    pub members: Vec<Member>,
}

/// Why mail cannot go to a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipientError {
    /// An agent cannot write to itself.
    #[error("`{0}` is you: send a message to another agent")]
    ToSelf(AgentId),
    /// Nobody of that name.
    #[error("there is no teammate named `{name}`; {team}")]
    Unknown {
        /// The name given.
        name: String,
        /// Who is there, for the model to choose from.
        team: TeamList,
    },
    /// The teammate exists but takes no mail.
    #[error("teammate `{name}` is {status} and receives no messages; {team}")]
    Unavailable {
        /// The teammate.
        name: AgentId,
        /// Where it stands (stopped, failed, …).
        status: TeammateStatus,
        /// Who is there, for the model to choose from.
        team: TeamList,
    },
}

/// Why a teammate cannot be started under a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// `lead` names the lead.
    #[error("`lead` is the lead's name; choose another")]
    Reserved,
    /// The name is taken (by a teammate of any status).
    #[error("a teammate named `{0}` exists already; choose another name")]
    Taken(AgentId),
    /// The team is full.
    #[error("the team already has {MAX_TEAMMATES} teammates, the most a session may have")]
    Full,
}

/// The names that exist, for an error message: `lead, alice (running), bob (failed)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamList(pub Vec<(AgentId, TeammateStatus)>);

impl fmt::Display for TeamList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the agents are: lead")?;
        for (name, status) in &self.0 {
            write!(f, ", {name} ({status})")?;
        }
        Ok(())
    }
}

impl Roster {
    /// A roster of `members`.
    pub fn new(members: Vec<Member>) -> Self {
        Self { members }
    }

    /// The teammate named `name`, if there is one.
    pub fn member(&self, name: &AgentId) -> Option<&Member> {
        self.members.iter().find(|m| &m.name == name)
    }

    fn team(&self) -> TeamList {
        TeamList(
            self.members
                .iter()
                .map(|m| (m.name.clone(), m.status))
                .collect(),
        )
    }

    /// Checks that `from` may send mail to the agent named `to` (raw, as the model wrote it):
    /// the lead, or a running or idle teammate, and not `from` itself.
    pub fn recipient(&self, from: &AgentId, to: &str) -> Result<AgentId, RecipientError> {
        let unknown = || RecipientError::Unknown {
            name: to.escape_debug().to_string(),
            team: self.team(),
        };
        let name = AgentId::new(to).map_err(|_| unknown())?;
        if &name == from {
            return Err(RecipientError::ToSelf(name));
        }
        if name.is_lead() {
            return Ok(name);
        }
        match self.member(&name) {
            None => Err(unknown()),
            Some(member) if member.status.receives_mail() => Ok(name),
            Some(member) => Err(RecipientError::Unavailable {
                name,
                status: member.status,
                team: self.team(),
            }),
        }
    }

    /// Checks that a new teammate may take `name`.
    pub fn admit(&self, name: &AgentId) -> Result<(), NameError> {
        if name.is_lead() {
            return Err(NameError::Reserved);
        }
        if self.member(name).is_some() {
            return Err(NameError::Taken(name.clone()));
        }
        if self.members.len() >= MAX_TEAMMATES {
            return Err(NameError::Full);
        }
        Ok(())
    }
}
