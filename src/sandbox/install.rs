//! Installs what the sandbox runs on from Debian's packages: bubblewrap,
//! its first choice of isolation, the Python packages REval's ClassEval
//! programs import (numpy, gensim, bs4, lxml), and Pylint for Turbulence's
//! static check, all for the system `python3` the sandbox runs.
//!
//! `codecal setup` calls this, and the Turbulence judge installs Pylint on
//! first use; nothing else installs system packages. As
//! root on a Debian-like system it runs `apt-get`; elsewhere it says what
//! to run.

use std::process::{Command, Stdio};

/// Why something the sandbox runs on is not there.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "{what} not installed; install with your package manager \
         (Debian/Ubuntu: sudo apt-get install {packages})"
    )]
    CannotInstall { what: String, packages: String },
    #[error("apt-get could not install {packages}; its output is above")]
    AptFailed { packages: String },
    #[error("{what} was installed but {check}")]
    Unusable { what: String, check: String },
    #[error(
        "the sandbox's Python has Pylint {found}, not the pinned {pinned}: \
         Turbulence's static type errors may differ from other machines'"
    )]
    OtherPylint { found: String, pinned: &'static str },
}

/// bubblewrap's version line, installing it first where it is missing and
/// this process may.
pub fn ensure_bubblewrap() -> Result<String, InstallError> {
    if let Some(version) = bubblewrap_version() {
        return Ok(version);
    }
    apt_install("bubblewrap", &["bubblewrap"])?;
    bubblewrap_version().ok_or_else(|| unusable("bubblewrap", "`bwrap` does not run"))
}

fn unusable(what: &str, check: &str) -> InstallError {
    InstallError::Unusable {
        what: what.into(),
        check: check.into(),
    }
}

/// The Debian packages of the Python modules REval's ClassEval programs import.
const REVAL_PACKAGES: [&str; 4] = [
    "python3-numpy",
    "python3-gensim",
    "python3-bs4",
    "python3-lxml",
];

/// numpy, gensim, bs4 and lxml for the system `python3` (the one the
/// sandbox runs), installing them first where they are missing and this
/// process may. Without them the REval programs that import them cannot
/// run, and their questions are judged as runtime errors.
pub fn ensure_reval_packages() -> Result<(), InstallError> {
    if reval_packages_importable() {
        return Ok(());
    }
    apt_install("the REval programs' Python packages", &REVAL_PACKAGES)?;
    if reval_packages_importable() {
        Ok(())
    } else {
        Err(unusable(
            "numpy, gensim, bs4 and lxml",
            "they do not import in /usr/bin/python3",
        ))
    }
}

/// Whether the sandbox's `python3` imports numpy, gensim, bs4 and lxml.
pub fn reval_packages_importable() -> bool {
    succeeds(Command::new("/usr/bin/python3").args(["-I", "-c", "import numpy, gensim, bs4, lxml"]))
}

/// The Pylint that Turbulence's static check runs (the paper's linter):
/// Debian bookworm's package, pinned to its version so that a static type
/// error means the same on every machine.
pub const PYLINT_VERSION: &str = "2.16.2";
const PYLINT_PACKAGE: &str = "pylint=2.16.2-2";

/// The version of Pylint the sandbox's `python3` imports, installing the
/// pinned one first where none is and this process may. Another version
/// already installed is kept, and named in the error, so that the caller
/// can say the static check is not the pinned one.
pub fn ensure_pylint() -> Result<String, InstallError> {
    let found = match pylint_version() {
        Some(version) => version,
        None => {
            apt_install("Pylint for the sandbox's Python", &[PYLINT_PACKAGE])?;
            pylint_version()
                .ok_or_else(|| unusable("Pylint", "it does not import in /usr/bin/python3"))?
        }
    };
    if found == PYLINT_VERSION {
        Ok(found)
    } else {
        Err(InstallError::OtherPylint {
            found,
            pinned: PYLINT_VERSION,
        })
    }
}

/// The Pylint version the sandbox's `python3` imports, if any.
pub fn pylint_version() -> Option<String> {
    let output = Command::new("/usr/bin/python3")
        .args(["-I", "-c", "import pylint; print(pylint.__version__)"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// `apt-get install` of `packages` as root, updating the package lists
/// once if the first try fails (a fresh machine may have none); elsewhere
/// an error saying what to run.
fn apt_install(what: &str, packages: &[&str]) -> Result<(), InstallError> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let listed = packages.join(" ");
    if !root || !succeeds(Command::new("apt-get").arg("--version")) {
        return Err(InstallError::CannotInstall {
            what: what.into(),
            packages: listed,
        });
    }
    eprintln!("codecal: installing {what} with apt-get (first use)");
    let install = || {
        succeeds(
            Command::new("apt-get")
                .args(["install", "-y", "-qq"])
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
    };
    let update = || succeeds(Command::new("apt-get").args(["update", "-qq"]));
    if install() || (update() && install()) {
        Ok(())
    } else {
        Err(InstallError::AptFailed { packages: listed })
    }
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
