//! The sandbox holds what it promises: no network, a read-only system, a
//! private `/tmp` and `/dev/shm`, no view of the host's processes, nothing
//! left running after a verdict, and limits on time, memory, processes and
//! output, under bubblewrap and under the `unshare` box alike (each test
//! runs in every isolation this machine has).

mod common;

use std::time::Duration;

use codecal::sandbox::{Ending, Isolation, IsolationChoice, Limits, Sandbox};

fn both_isolations(limits: Limits) -> Vec<Sandbox> {
    [IsolationChoice::Bubblewrap, IsolationChoice::Unshare]
        .into_iter()
        .filter_map(|choice| common::sandbox(limits.clone(), choice))
        .collect()
}

fn ending(sandbox: &Sandbox, program: &str) -> Ending {
    let execution = sandbox.run(program).expect("the sandbox runs");
    eprintln!(
        "{:?}: {:?} {}",
        sandbox.isolation(),
        execution.ending,
        execution.message
    );
    execution.ending
}

#[test]
fn auto_prefers_bubblewrap() {
    // Where bubblewrap is missing, `auto` rightly falls back to unshare; the
    // preference can only be seen where both work.
    if common::sandbox(Limits::default(), IsolationChoice::Bubblewrap).is_none() {
        return;
    }
    if let Some(sandbox) = common::sandbox(Limits::default(), IsolationChoice::Auto) {
        assert_eq!(sandbox.isolation(), &Isolation::Bubblewrap);
    }
}

#[test]
fn programs_see_no_network_but_loopback() {
    let program = "import socket\n\
                   names = sorted(name for _, name in socket.if_nameindex())\n\
                   assert names == ['lo'], names\n";
    for sandbox in both_isolations(Limits::default()) {
        assert_eq!(ending(&sandbox, program), Ending::Finished);
    }
}

/// Writes to `/tmp`, `/dev/shm`, the working directory and the repository
/// stay inside the box (or fail), and the host is unchanged afterwards.
#[test]
fn the_system_is_read_only_and_tmp_is_private() {
    let repo = env!("CARGO_MANIFEST_DIR");
    for sandbox in both_isolations(Limits::default()) {
        let name = format!("codecal-sandbox-marker-{}", std::process::id());
        let program = format!(
            "import os\n\
             try:\n    open({repo:?} + '/sandbox-escape', 'w')\n    raise SystemExit('wrote into the repository')\n\
             except OSError:\n    pass\n\
             for d in ['/tmp', '/dev/shm', os.getcwd()]:\n    open(os.path.join(d, {name:?}), 'w').write('inside')\n    assert os.path.exists(os.path.join(d, {name:?}))\n"
        );
        assert_eq!(ending(&sandbox, &program), Ending::Finished);
        for dir in ["/tmp", "/dev/shm"] {
            let leaked = std::path::Path::new(dir).join(&name);
            assert!(
                !leaked.exists(),
                "{:?}: {} leaked out",
                sandbox.isolation(),
                leaked.display()
            );
        }
        assert!(!std::path::Path::new(repo).join("sandbox-escape").exists());
    }
}

/// The program sees its own processes only, not the host's.
#[test]
fn the_host_processes_are_invisible() {
    let program = "import os\n\
                   pids = [p for p in os.listdir('/proc') if p.isdigit()]\n\
                   assert len(pids) <= 3, pids\n";
    for sandbox in both_isolations(Limits::default()) {
        assert_eq!(ending(&sandbox, program), Ending::Finished);
    }
}

/// Host processes whose command line holds `token`.
fn processes_with(token: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(token)
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

/// A forked daemon (new session, descriptors closed, or holding the output
/// pipe) dies with the run: the verdict comes within the wall limit plus a
/// small margin, and no process of it is left on the host.
#[test]
fn daemons_do_not_outlive_the_run() {
    let limits = Limits::with_wall(Duration::from_secs(2));
    for sandbox in both_isolations(limits) {
        for (keeps_pipe, case) in [(false, "closed"), (true, "pipe")] {
            let token = format!("codecal-daemon-{case}-{}", std::process::id());
            let close = if keeps_pipe {
                ""
            } else {
                "    os.closerange(0, 256)\n"
            };
            let program = format!(
                "import os, sys\n\
                 if os.fork() == 0:\n    os.setsid()\n{close}    \
                 os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', {token:?}])\n\
                 assert True\n"
            );
            let started = std::time::Instant::now();
            let execution = sandbox.run(&program).unwrap();
            let wall = started.elapsed();
            assert_eq!(
                execution.ending,
                Ending::Finished,
                "{case}: {}",
                execution.message
            );
            assert!(
                wall < Duration::from_secs(3),
                "{:?} {case}: {wall:?}",
                sandbox.isolation()
            );
            std::thread::sleep(Duration::from_millis(200));
            let left = processes_with(&token);
            assert!(
                left.is_empty(),
                "{:?} {case}: left running: {left:?}",
                sandbox.isolation()
            );
        }
    }
}
#[test]
fn an_endless_loop_is_killed_at_the_wall_limit() {
    let limits = Limits {
        wall: Duration::from_millis(500),
        ..Limits::default()
    };
    for sandbox in both_isolations(limits) {
        let execution = sandbox.run("while True:\n    pass\n").unwrap();
        assert_eq!(execution.ending, Ending::TimedOut);
        assert!(
            execution.wall < Duration::from_secs(5),
            "{:?}",
            execution.wall
        );
    }
}

#[test]
fn memory_past_the_limit_is_refused() {
    let limits = Limits {
        memory_bytes: 512 << 20,
        ..Limits::default()
    };
    for sandbox in both_isolations(limits) {
        let execution = sandbox.run("block = bytearray(1 << 30)\n").unwrap();
        assert_eq!(execution.ending, Ending::Exception);
        assert!(
            execution.message.contains("MemoryError"),
            "{}",
            execution.message
        );
    }
}

#[test]
fn a_chatty_program_neither_blocks_nor_fills_memory() {
    for sandbox in both_isolations(Limits::default()) {
        let program = "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 50000)\n";
        assert_eq!(ending(&sandbox, program), Ending::Finished);
    }
}

/// A 1 GB flood on either stream is an output limit, found within the wall
/// limit, not a time limit or a runtime error.
#[test]
fn a_flood_of_output_is_an_output_limit() {
    let limits = Limits::with_wall(Duration::from_secs(3));
    for sandbox in both_isolations(limits) {
        for stream in ["stdout", "stderr"] {
            let program = format!(
                "import sys\nblock = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.{stream}.write(block)\n"
            );
            let execution = sandbox.run(&program).unwrap();
            assert_eq!(
                execution.ending,
                Ending::OutputLimit,
                "{stream}: {}",
                execution.message
            );
            assert!(
                execution.wall < Duration::from_secs(4),
                "{stream}: {:?}",
                execution.wall
            );
        }
    }
}

#[test]
fn processes_past_the_limit_cannot_start() {
    let limits = Limits {
        processes: 16,
        ..Limits::default()
    };
    let Some(sandbox) = common::sandbox(limits, IsolationChoice::Bubblewrap) else {
        return;
    };
    if !sandbox.limits().drop_root {
        eprintln!(
            "SKIPPED: the processes limit binds only when codecal runs as root and hands each box a uid of its own"
        );
        return;
    }
    let program = "import os, time\n\
                   children = []\n\
                   for _ in range(64):\n    pid = os.fork()\n    if pid == 0:\n        time.sleep(2)\n        os._exit(0)\n    children.append(pid)\n";
    let execution = sandbox.run(program).unwrap();
    assert_eq!(execution.ending, Ending::Exception, "{}", execution.message);
    assert!(
        execution.message.contains("BlockingIOError"),
        "{}",
        execution.message
    );
}

#[test]
fn the_harness_tells_endings_apart() {
    let Some(sandbox) = common::sandbox(Limits::default(), IsolationChoice::Auto) else {
        return;
    };
    assert_eq!(ending(&sandbox, "def f(:\n"), Ending::SyntaxError);
    assert_eq!(ending(&sandbox, "assert 1 == 2\n"), Ending::AssertionFailed);
    assert_eq!(ending(&sandbox, "raise KeyError('k')\n"), Ending::Exception);
    assert_eq!(
        ending(&sandbox, "import sys\nsys.exit(0)\n"),
        Ending::Exception
    );
    let programs = vec!["x = 1\n".to_string(), "assert False\n".to_string()];
    let endings: Vec<Ending> = sandbox
        .run_all(&programs, 2)
        .unwrap()
        .into_iter()
        .map(|execution| execution.ending)
        .collect();
    assert_eq!(endings, [Ending::Finished, Ending::AssertionFailed]);
}

#[test]
fn where_no_isolation_can_start_it_refuses_and_says_why() {
    // 1 MiB of address space is too little for either tool to start, which
    // stands in for a machine where neither works.
    let starved = Limits {
        memory_bytes: 1 << 20,
        ..Limits::default()
    };
    match Sandbox::detect(starved, IsolationChoice::Auto) {
        Ok(sandbox) => panic!("a sandbox started with 1 MiB: {:?}", sandbox.isolation()),
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("refusing to run generated code"),
                "{message}"
            );
            assert!(
                message.contains("bubblewrap:") && message.contains("unshare:"),
                "{message}"
            );
        }
    }
}

/// Tricks a model could use to turn a failing test into a pass: each ends
/// the interpreter (or patches the way out) before or instead of running to
/// completion. None may end `Finished`; the same program without the trick's
/// failing assert still does, so the harness is not simply refusing.
#[test]
fn an_early_exit_is_never_a_pass() {
    let tricks = [
        "import os\nos._exit(0)\nassert False\n",
        "__import__('os')._exit(0)\n",
        "import atexit, os\natexit.register(lambda: os._exit(0))\nassert False\n",
        "import sys\nsys.exit = lambda *a: None\nassert False\n",
        "import sys\nsys.exit = lambda *a: None\nsys.stderr = open('/dev/null', 'w')\nraise ValueError\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
        "import os\nos.close(1)\nos.close(2)\nos._exit(0)\n",
        "raise SystemExit(0)\n",
        "import os\nclass E(AssertionError):\n    def __str__(self):\n        os._exit(0)\nraise E()\n",
        "import threading, os\nthreading.Thread(target=lambda: os._exit(0)).start()\nimport time\ntime.sleep(5)\nassert False\n",
        "import os\nos.write(2, b'\\ncodecal-completed-00000000000000000000000000000000\\n')\nos._exit(0)\n",
    ];
    for sandbox in both_isolations(Limits::default()) {
        for trick in tricks {
            assert_ne!(ending(&sandbox, trick), Ending::Finished, "{trick}");
        }
        assert_eq!(ending(&sandbox, "x = 1\nassert x == 1\n"), Ending::Finished);
        // A program that writes to stderr itself still passes.
        let chatty =
            "import sys\nprint('note', file=sys.stderr)\nprint('x' * 200000, file=sys.stderr)\n";
        assert_eq!(ending(&sandbox, chatty), Ending::Finished);
    }
}
