//! The agent's own hardening, checked in a test binary of its own (it changes the process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_agent_is_not_dumpable_and_writes_no_core() {
    agent_sandbox::harden_agent();
    let mut core = libc::rlimit {
        rlim_cur: 1,
        rlim_max: 1,
    };
    // SAFETY: reads this process's own attributes.
    let (dumpable, got) = unsafe {
        (
            libc::prctl(libc::PR_GET_DUMPABLE),
            libc::getrlimit(libc::RLIMIT_CORE, &mut core),
        )
    };
    assert_eq!((dumpable, got, core.rlim_cur, core.rlim_max), (0, 0, 0, 0));
}
