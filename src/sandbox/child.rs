//! The box's process as codecal starts and feeds it: the user it runs as
//! (one per box running at once), its own session, its death with codecal,
//! and its input written without SIGPIPE.
//!
//! Why each matters, for a program that forks without end:
//! - The kernel counts the processes limit per user. With one sandbox user
//!   for every box, one answer's fork bomb used up the limit of all the
//!   others: the next box could not start, and answers running beside it
//!   were killed. A uid of its own per box keeps the count per box.
//! - A session of its own puts the box in its own scheduler autogroup, so
//!   a box of a hundred busy processes gets the CPU share of one box, not
//!   of a hundred processes, and the good answers beside it keep time.
//! - A box whose interpreter could not start closes its input before codecal
//!   has written it; codecal restores SIGPIPE's default (for `| head`), so
//!   that write would kill codecal without a word.
//! - `unshare` ignores SIGTERM and outlives its parent. Asked to die with
//!   codecal (`PR_SET_PDEATHSIG`), it takes its namespace down with it,
//!   whichever way codecal ends.
//!
//! What this module is not: the limits themselves (`limits`), or the box's
//! isolation (`mod.rs`).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command};
use std::sync::{Condvar, Mutex};

use super::Limits;

/// First uid of the boxes' range: far above any real user's, below the
/// overflow uid. Each codecal process takes its own block of `BOXES` uids,
/// chosen by its process id, so that two runs side by side do not share a
/// limit (unless their ids are a multiple of 2^20 apart: then they share,
/// as every box did before).
const FIRST_BOX_UID: u32 = 1 << 30;

/// Boxes at once per codecal process; a box past them waits for one to end.
const BOXES: u32 = 64;

/// Which of this process's box uids are taken.
static TAKEN: Mutex<u64> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// A box uid held for the time one box runs: every process of the box is
/// gone before it is handed back (the box's first process is its PID
/// namespace's init, whose exit the kernel completes only once every other
/// process of the namespace is reaped).
pub(super) struct BoxUser {
    slot: u32,
}

impl BoxUser {
    pub(super) fn take() -> BoxUser {
        let mut taken = TAKEN
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            if let Some(slot) = (0..BOXES).find(|slot| *taken & (1 << slot) == 0) {
                *taken |= 1 << slot;
                return BoxUser { slot };
            }
            taken = FREED
                .wait(taken)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    pub(super) fn uid(&self) -> libc::uid_t {
        FIRST_BOX_UID + (std::process::id() % (1 << 20)) * BOXES + self.slot
    }
}

impl Drop for BoxUser {
    fn drop(&mut self) {
        let mut taken = TAKEN
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *taken &= !(1 << self.slot);
        FREED.notify_one();
    }
}

/// Sets up the child between `fork` and `exec`: a session of its own, the
/// limits (and, as root, the box's uid), then death with codecal. The death
/// signal comes last because changing the user clears it.
pub(super) fn prepare(command: &mut Command, limits: &Limits, uid: libc::uid_t) {
    let limits = limits.clone();
    // SAFETY: getpid is always safe; it names the parent to watch.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (setsid, setrlimit, setgroups,
    // setgid, setuid, geteuid, prctl, getppid), allocating nothing.
    unsafe {
        command.pre_exec(move || {
            check(libc::setsid())?;
            limits.apply_in_child(uid)?;
            check(libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ))?;
            // codecal may have died between the fork and the prctl.
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "codecal ended before the box started",
                ));
            }
            Ok(())
        });
    }
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result >= 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Writes the program to the box's input. A box that has already ended is
/// not an error here: its ending says what happened. SIGPIPE is blocked on
/// this thread for the write, and one raised by it is taken back before the
/// thread's mask is restored.
pub(super) fn write_input(mut stdin: ChildStdin, bytes: &[u8]) {
    // SAFETY: plain signal-mask calls on this thread's own mask, with sets
    // initialised by sigemptyset before use.
    unsafe {
        let mut pipe_only: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe_only);
        libc::sigaddset(&mut pipe_only, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe_only, &mut before);
        let written = stdin.write_all(bytes);
        drop(stdin);
        if written.is_err() {
            let now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&pipe_only, std::ptr::null_mut(), &now);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
    }
}

/// Whether a box failed to start for want of processes, memory or
/// descriptors on the host: that is the answer's verdict (another answer
/// may have used them up), not the run's end.
pub(super) fn is_exhaustion(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EAGAIN | libc::ENOMEM | libc::EMFILE | libc::ENFILE)
    )
}
