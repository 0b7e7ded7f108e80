//! Chapter 17: idle teammates take the board's ready tasks on their own.

use super::{Autonomy as Told, Feature, Features};
use crate::Capability;

/// Installs nothing into an agent: autonomy is the team runtime's (`team_runtime::autonomy`),
/// which polls the board for an idle teammate with no mail and hands it the task it claimed as
/// its next turn. This feature only tells the runtime to.
pub(crate) struct Autonomy;

impl Feature for Autonomy {
    fn capability(&self) -> Capability {
        Capability::Autonomy
    }

    fn describe(&self, features: &mut Features) {
        features.autonomy = Told::On;
    }
}
