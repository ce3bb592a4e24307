//! Progress of one stage on stderr: a bar with count, rate and ETA on a
//! terminal, and otherwise (batch jobs' logs) a plain line every tenth of
//! the way and at least every few seconds while steps arrive, so a long run
//! never goes silent.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The longest a non-terminal log goes without a line while steps arrive.
const QUIET_MS: u64 = 5_000;

pub struct StageProgress {
    stage: String,
    steps: u64,
    done: AtomicU64,
    /// Milliseconds after `start` of the last plain line.
    last_line_ms: AtomicU64,
    start: Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl StageProgress {
    pub fn new(stage: &str, steps: u64) -> StageProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(steps);
            let template = if steps == 0 {
                "{prefix:>12} {spinner} {elapsed}"
            } else {
                "{prefix:>12} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}"
            };
            let style = indicatif::ProgressStyle::with_template(template)
                .expect("a valid template")
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(stage.to_owned());
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        StageProgress {
            stage: stage.to_owned(),
            steps,
            done: AtomicU64::new(0),
            last_line_ms: AtomicU64::new(0),
            start: Instant::now(),
            bar,
        }
    }

    pub fn step(&self) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        match &self.bar {
            Some(bar) => bar.inc(1),
            None if self.steps >= 10 && done.is_multiple_of(self.steps / 10)
                || self.quiet_too_long() =>
            {
                let rate = done as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
                let eta = (self.steps.saturating_sub(done)) as f64 / rate.max(1e-9);
                eprintln!(
                    "codecal: {}: {done}/{} ({rate:.2}/s, ETA {eta:.0} s)",
                    self.stage, self.steps
                );
            }
            None => {}
        }
    }

    /// Whether no plain line was printed for [`QUIET_MS`]; claims the next.
    fn quiet_too_long(&self) -> bool {
        let now = self.start.elapsed().as_millis() as u64;
        let last = self.last_line_ms.load(Ordering::SeqCst);
        now.saturating_sub(last) >= QUIET_MS
            && self
                .last_line_ms
                .compare_exchange(last, now, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
