//! One answer cannot kill the run or touch another's result, and no box
//! outlives codecal (issue "hardening, third round"): a fork bomb among 40
//! MBPP reference answers judged at `--jobs 2`, and codecal killed mid-run
//! by SIGTERM and by SIGKILL, under bubblewrap and under the `unshare` box.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use codecal::sandbox::{IsolationChoice, Limits};

/// The tests count the boxes' processes on the whole machine, so they run
/// one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const FORK_BOMB: &str =
    "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n";

/// Text of the harness every box runs: on the command line of bubblewrap,
/// `unshare`, the box's set-up and every process the program forks.
const HARNESS_MARK: &str = "nonce = sys.stdin.readline().strip()";

fn isolations() -> Vec<IsolationChoice> {
    [IsolationChoice::Bubblewrap, IsolationChoice::Unshare]
        .into_iter()
        .filter(|choice| common::sandbox(Limits::default(), *choice).is_some())
        .collect()
}

/// The first `count` MBPP problems' reference programs, as answers.
fn reference_answers(data: &Path, count: usize) -> Vec<(String, String)> {
    std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .take(count)
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                format!("mbpp/{}", row["task_id"]),
                row["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn write_answers(dir: &Path, name: &str, answers: &[(String, String)]) -> PathBuf {
    let path = dir.join(name);
    let lines: String = answers
        .iter()
        .map(|(id, answer)| format!("{}\n", serde_json::json!({"id": id, "answer": answer})))
        .collect();
    std::fs::write(&path, lines).unwrap();
    path
}

fn judge(isolation: IsolationChoice, data: &Path, answers: &Path, out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_codecal"));
    command
        .args(["judge", "--dataset", "mbpp", "--jobs", "2", "--isolation"])
        .arg(isolation.to_string())
        .arg("--data")
        .arg(data)
        .arg("--answers")
        .arg(answers)
        .arg("--out")
        .arg(out);
    command
}

/// `(correct, reason)` per verdict line.
fn verdicts(out: &Path) -> Vec<(bool, String)> {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                row["correct"].as_bool().unwrap(),
                row["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Processes of any box on the machine.
fn box_processes() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(HARNESS_MARK))
                .unwrap_or(false)
        })
        .collect()
}

/// Waits up to `limit` for every box process to be gone; kills and names
/// the survivors otherwise, so that one failure does not leak into the next.
fn survivors_after(limit: Duration) -> Vec<i32> {
    let deadline = Instant::now() + limit;
    loop {
        let left = box_processes();
        if left.is_empty() || Instant::now() >= deadline {
            for pid in &left {
                // SAFETY: killing a leftover test process by pid.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_fork_bomb_among_forty_good_answers_touches_none_of_them() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = common::shared_data("mbpp/mbpp.jsonl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let good = reference_answers(&data, 40);
    let mut with_bomb = good.clone();
    // The bomb follows the reference, so the function the tests call exists
    // and the program runs.
    with_bomb.insert(
        5,
        (good[5].0.clone(), format!("{}\n{FORK_BOMB}", good[5].1)),
    );
    let good_file = write_answers(dir.path(), "good.jsonl", &good);
    let bomb_file = write_answers(dir.path(), "bomb.jsonl", &with_bomb);
    for isolation in isolations() {
        let alone = dir.path().join(format!("{isolation}-alone.jsonl"));
        let status = judge(isolation, &data, &good_file, &alone)
            .status()
            .unwrap();
        assert!(status.success(), "{isolation}: the good answers alone");
        let beside = dir.path().join(format!("{isolation}-beside.jsonl"));
        let output = judge(isolation, &data, &bomb_file, &beside)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{isolation}: the run with a fork bomb ended {:?}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let mut judged = verdicts(&beside);
        let bomb = judged.remove(5);
        assert!(!bomb.0, "{isolation}: the fork bomb passed");
        let alone = verdicts(&alone);
        assert_eq!(alone.iter().filter(|(correct, _)| *correct).count(), 40);
        assert_eq!(
            judged, alone,
            "{isolation}: the good answers' verdicts moved"
        );
        assert_eq!(survivors_after(Duration::from_secs(2)), Vec::<i32>::new());
    }
}

fn start_and_kill(isolation: IsolationChoice, signal: libc::c_int) -> Vec<i32> {
    let Some(data) = common::shared_data("mbpp/mbpp.jsonl") else {
        return Vec::new();
    };
    let dir = tempfile::tempdir().unwrap();
    let mut answers = reference_answers(&data, 4);
    answers[0].1.push_str("\nimport time\ntime.sleep(60)\n");
    answers[1].1.push_str(&format!("\n{FORK_BOMB}"));
    let file = write_answers(dir.path(), "answers.jsonl", &answers);
    let mut child: Child = judge(isolation, &data, &file, &dir.path().join("out.jsonl"))
        .args(["--timeout-s", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while box_processes().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        box_processes().len() >= 3,
        "{isolation}: the boxes never started"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    child.wait().unwrap();
    survivors_after(Duration::from_secs(3))
}

#[test]
fn no_box_outlives_codecal_killed_mid_run() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    for isolation in isolations() {
        for signal in [libc::SIGTERM, libc::SIGKILL] {
            let survivors = start_and_kill(isolation, signal);
            assert!(
                survivors.is_empty(),
                "{isolation}, codecal killed by signal {signal}: {} box processes survived",
                survivors.len()
            );
        }
    }
}
