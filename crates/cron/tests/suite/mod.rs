mod attacks;
mod fragment;
mod scheduler;
mod tools;
mod when;

use std::sync::Arc;

use agent_core::ToolRegistry;
use agent_cron::{Durability, ManualClock, NewSchedule, Scheduler, Timestamp, add_cron_tools};
use agent_workspace::Workspace;
use tempfile::TempDir;

pub fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub fn new_schedule(cron: &str, prompt: &str, tz: Option<&str>, d: Durability) -> NewSchedule {
    NewSchedule {
        cron: cron.into(),
        prompt: prompt.into(),
        timezone: tz.map(String::from),
        durability: d,
    }
}

/// A workspace, a folder outside it, a hand-set clock and a scheduler over them.
pub struct Fixture {
    pub dir: TempDir,
    pub outside: TempDir,
    pub clock: Arc<ManualClock>,
    pub scheduler: Arc<Scheduler>,
}

impl Fixture {
    pub fn new(now: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(ts(now)));
        let scheduler = Arc::new(Scheduler::new(
            &Workspace::new(dir.path()).unwrap(),
            clock.clone(),
        ));
        Self {
            dir,
            outside,
            clock,
            scheduler,
        }
    }

    pub fn workspace(&self) -> Workspace {
        Workspace::new(self.dir.path()).unwrap()
    }

    /// A new scheduler over the same workspace and clock: the process restarted.
    pub fn restart(&self) -> Scheduler {
        Scheduler::new(&self.workspace(), self.clock.clone())
    }

    pub fn crons_json(&self) -> std::path::PathBuf {
        self.dir.path().join(".agent_tutorial/crons.json")
    }

    /// Runs one call the way the loop does and returns the text the model would see.
    pub async fn call(&self, name: &str, arguments: serde_json::Value) -> String {
        let registry: ToolRegistry = add_cron_tools(ToolRegistry::builder(), &self.scheduler)
            .build()
            .unwrap();
        agent_test_support::call_tool(&registry, name, arguments).await
    }
}
