//! What the benches share: the pinned Python environment of each baseline.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The python of `target/<venv>`, made from `benches/<requirements>` (every
/// package pinned by sha256, installed with --no-deps) when `imports` fail there.
pub fn baseline_python(root: &Path, venv: &str, requirements: &str, imports: &str) -> PathBuf {
    let venv = root.join("target").join(venv);
    let python = venv.join("bin/python");
    let ready = Command::new(&python)
        .args(["-c", &format!("import {imports}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if ready {
        return python;
    }
    eprintln!(
        "installing the baseline ({requirements}) into {}",
        venv.display()
    );
    let run = |program: &Path, args: &[&str]| {
        let ok = Command::new(program)
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "failed: {} {}", program.display(), args.join(" "));
    };
    run(
        Path::new("python3"),
        &["-m", "venv", venv.to_str().unwrap()],
    );
    let requirements = root.join("benches").join(requirements);
    run(
        &python,
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--require-hashes",
            "-r",
            requirements.to_str().unwrap(),
        ],
    );
    python
}
