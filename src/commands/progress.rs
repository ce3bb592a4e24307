//! Progress of one stage on stderr: a bar with count, rate and ETA on a
//! terminal, and a plain line every tenth of the way otherwise (batch jobs'
//! logs), so a long run never goes silent.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub struct StageProgress {
    stage: String,
    steps: u64,
    done: AtomicU64,
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
            start: Instant::now(),
            bar,
        }
    }

    pub fn step(&self) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        match &self.bar {
            Some(bar) => bar.inc(1),
            None if self.steps >= 10 && done % (self.steps / 10) == 0 => {
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

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
