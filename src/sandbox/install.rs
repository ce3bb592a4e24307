//! Installs bubblewrap, the sandbox's first choice, from Debian's packages.
//!
//! `codecal setup` calls this; nothing else installs system packages. As
//! root on a Debian-like system it runs `apt-get`; elsewhere it says what
//! to run.

use std::process::{Command, Stdio};

/// bubblewrap's version line, installing it first where it is missing and
/// this process may.
pub fn ensure_bubblewrap() -> Result<String, String> {
    if let Some(version) = bubblewrap_version() {
        return Ok(version);
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || !succeeds(Command::new("apt-get").arg("--version")) {
        return Err(
            "bubblewrap is not installed; install it with your package manager \
             (Debian/Ubuntu: sudo apt-get install bubblewrap)"
                .into(),
        );
    }
    eprintln!("codecal: installing bubblewrap with apt-get (first use)");
    let install = || succeeds(Command::new("apt-get").args(["install", "-y", "-qq", "bubblewrap"]));
    // A fresh machine may have no package lists yet.
    let update = || succeeds(Command::new("apt-get").args(["update", "-qq"]));
    let installed = install() || (update() && install());
    if !installed {
        return Err("apt-get could not install bubblewrap; its output is above".into());
    }
    bubblewrap_version().ok_or_else(|| "bubblewrap was installed but `bwrap` does not run".into())
}

fn bubblewrap_version() -> Option<String> {
    let output = Command::new("bwrap").arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
