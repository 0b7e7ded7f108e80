//! The SQLite schema. Times are integer milliseconds on the board's injected clock.
//!
//! `tasks` holds the live claim of a task (owner, token, lease end) beside its status, so a
//! claim is one conditional UPDATE of one row; `claims` is the token history, never pruned,
//! whose UNIQUE token column is what makes "a token is never issued twice" a fact of the
//! database rather than of our code.

/// Bumped when the schema changes; a newer file is refused rather than misread.
pub(crate) const SCHEMA_VERSION: i64 = 1;

pub(crate) const CREATE: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
    description TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'cancelled')),
    owner TEXT,
    claim_token TEXT UNIQUE,
    lease_expires INTEGER,
    result TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    CHECK ((status = 'in_progress') =
           (owner IS NOT NULL AND claim_token IS NOT NULL AND lease_expires IS NOT NULL)),
    CHECK (status = 'in_progress' OR (owner IS NULL AND claim_token IS NULL AND lease_expires IS NULL))
);
CREATE TABLE IF NOT EXISTS dependencies (
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    blocked_by INTEGER NOT NULL REFERENCES tasks(id),
    PRIMARY KEY (task_id, blocked_by),
    CHECK (task_id <> blocked_by)
);
CREATE TABLE IF NOT EXISTS claims (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    token TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    ended TEXT CHECK (ended IN ('completed', 'released', 'expired')),
    ended_at INTEGER,
    reason TEXT,
    CHECK ((ended IS NULL) = (ended_at IS NULL))
);
CREATE INDEX IF NOT EXISTS claims_by_task ON claims (task_id, seq);
CREATE INDEX IF NOT EXISTS ready_order ON tasks (status, created_at, id);
";
