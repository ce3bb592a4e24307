//! Prefill and decode speed of the local backend on this machine, for each
//! local model (SmolLM2-135M-Instruct Q4_1, Qwen2.5-Coder-0.5B- and
//! 1.5B-Instruct Q4_K_M; the Qwen files are installed on first use) and its
//! weight layouts. For the Qwen models the bench also checks codecal's token
//! ids against llama.cpp's on every main-job and HumanEval prompt, holds
//! its teacher-forced log-probabilities and greedy answers against
//! llama.cpp's on 10 HumanEval prompts, and runs the main job's first 20
//! (0.5B) or 10 (1.5B) prompts.
//!
//! The prompt is a ~700-token 3-shot-sized text (the start of the local
//! Python's textwrap.py). Prefill rate = prompt tokens / time to the first
//! generated token; decode rate = 64 decode steps / their time, timed from
//! the kept prefill as llama.cpp's side times them. Best of 3.
//!
//! The baseline is llama.cpp on the same GGUF and prompt, in the same run,
//! in up to four builds: `benches/llama_cpp/build.sh` builds it natively
//! from the llama-cpp-sys-2 crate's sources (first run only) and
//! `timing.cpp` measures it; on a CPU with AMX, `build.sh amx` builds it
//! again with ggml's AMX kernels (timed where they run); where `benches/llama_server` has built
//! llama-cpp-python 0.3.36 from PyPI for this CPU, `build.sh pypi` links the
//! same `timing.cpp` against that package's own libraries, and
//! `pypi_timing.py` times it through Python as its users call it. Each is
//! timed with and without flash attention and keeps the better rate of each
//! (llama.cpp's own default, auto, turns it on on a CPU, where it speeds
//! prefill and slows decoding). codecal's ratios are against the fastest
//! build at each rate, so the reference is llama.cpp at its best on this
//! CPU whichever build that is. The bench also
//! checks that llama.cpp's tokenizer gives the prompt the same
//! ids as codecal's, which tests the tokenizer rebuilt from GGUF metadata.
//!
//! Then the README main job's own prompts (`runs/default/prompts.jsonl`,
//! written by `cargo run --release -- run`; skipped with the reason where
//! absent), generated with its decoding (greedy, at most 100 tokens, stop at
//! a newline) by codecal one prompt at a time and with the default
//! `--parallel`, in the f32 and mixed layouts (and at that setting with the
//! quantized layout too, which is llama.cpp's arithmetic): prompts per hour, generated tokens per
//! second, and the ratio. llama.cpp generates the same prompt ids at the same parallelism in
//! the same run (`benches/llama_cpp/batch.cpp`: continuous batching through
//! its C API, as its server does with that many slots; in each C build, the
//! faster kept), and the bench prints
//! the ratio of the two and how many of the answers are the same text.
//!
//! `CODECAL_BENCH_MODELS`, `CODECAL_BENCH_LAYOUTS` (f32, mixed, quantized,
//! f16) and `CODECAL_BENCH_SKIP` (tokenizer, logprob, aggregate) narrow a
//! run to what is being measured; the bench prints what it left out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use candle_core::Device;
use codecal::corpus::mine::python_stdlib;
use codecal::generate::batch::{parallel_map, read_prompts};
use codecal::generate::local::default_parallel;
use codecal::generate::local::{LocalBackend, Weights};
use codecal::generate::{Backend, Generation, Params};
use codecal::models::{LANGUAGE_MODELS, ModelHome};
use codecal::prompt::Prompt;

const DECODE_TOKENS: usize = 64;

/// What a timed run measures.
#[derive(Clone, Copy, PartialEq)]
enum Timing {
    /// Each run prefills the prompt afresh.
    Prefill,
    /// Each run reuses the kept prefill (cache and last logits), so only
    /// the decode steps are timed, as llama.cpp's `timing.cpp` times them.
    /// (Decode timed as a full run less a separate prefill run is the
    /// difference of two noisy minima: on the 1.5B model the same binary
    /// read 7.0 and 18.0 tok/s that way.)
    Decode,
}

/// Best of 3 of generating `max_tokens` from `prompt`, timed as `timing` says.
fn timed(
    backend: &LocalBackend,
    prompt: &Prompt,
    max_tokens: usize,
    timing: Timing,
) -> (f64, Generation) {
    let params = |max_tokens| Params {
        max_tokens,
        stop: Vec::new(),
        ..Params::default()
    };
    let run = |params: &Params| {
        let start = Instant::now();
        let g = backend
            .generate_ids(prompt, params)
            .expect("generation")
            .generation;
        (start.elapsed().as_secs_f64(), g)
    };
    if timing == Timing::Decode {
        // One token is enough to keep the prompt's prefill.
        run(&params(1));
    }
    let timed_params = params(max_tokens);
    (0..3)
        .map(|_| {
            if timing == Timing::Prefill {
                backend.forget_prefills();
            }
            run(&timed_params)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("three runs")
}

fn main() {
    let home = ModelHome::from_env().expect("codecal's home");
    let source = std::fs::read_to_string(python_stdlib().expect("python3").join("textwrap.py"))
        .expect("textwrap.py");
    let text: String = source.chars().take(2800).collect();
    // A prompt that does not invite an early end token.
    let prompt = Prompt::Completion(format!("{text}\n\nExplain this module in detail:\n"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let llama_dir = build_llama_cpp("");
    let pypi_dir = build_llama_cpp("pypi");
    let amx_dir = build_llama_cpp("amx");
    // The C builds, named: the crate's first (the correctness checks' reference).
    let builds: Vec<(&str, &Path)> = [
        (
            "llama.cpp, native build of the llama-cpp-sys-2 sources",
            &llama_dir,
        ),
        (
            "llama.cpp, llama-cpp-python's libraries called from C",
            &pypi_dir,
        ),
        ("llama.cpp, native build with ggml's AMX kernels", &amx_dir),
    ]
    .into_iter()
    .filter_map(|(name, dir)| Some((name, dir.as_deref()?)))
    .collect();
    // CODECAL_BENCH_MODELS=name,name runs only those models.
    let only = std::env::var("CODECAL_BENCH_MODELS").unwrap_or_default();
    let chosen = |name: &str| only.is_empty() || only.split(',').any(|n| n.trim() == name);
    // CODECAL_BENCH_SKIP=tokenizer,logprob,aggregate leaves those parts out.
    let skip = std::env::var("CODECAL_BENCH_SKIP").unwrap_or_default();
    let runs = |part: &str| !skip.split(',').any(|p| p.trim() == part);
    if !skip.is_empty() {
        println!("CODECAL_BENCH_SKIP: left out {skip}");
    }
    for model in LANGUAGE_MODELS.iter().filter(|m| chosen(m.name)) {
        let gguf = home
            .ensure_language_model(model)
            .expect("the model's set-up");
        println!("\n## {}\n", model.title);
        let qwen = model.name != "smollm2-135m";
        // An f16 copy of a Qwen file's weights would be 1–3 GB for no gain.
        let mut layouts: Vec<Weights> = if qwen {
            vec![Weights::F32, Weights::Mixed, Weights::Quantized]
        } else {
            vec![Weights::F32, Weights::Quantized, Weights::F16]
        };
        // CODECAL_BENCH_LAYOUTS=quantized,... times only those layouts.
        if let Ok(only) = std::env::var("CODECAL_BENCH_LAYOUTS") {
            layouts.retain(|w| {
                only.split(',')
                    .any(|n| format!("{w:?}").eq_ignore_ascii_case(n.trim()))
            });
        }
        let layouts = &layouts[..];
        single_prompt(&gguf, &prompt, &builds, threads, layouts);
        if let Some(dir) = llama_dir.as_ref().filter(|_| runs("tokenizer")) {
            tokenizer_check(&home, &gguf, dir);
        }
        if let Some(dir) = llama_dir.as_ref().filter(|_| runs("logprob"))
            && qwen
        {
            for &weights in layouts {
                logprob_check(&home, &gguf, dir, weights);
            }
        }
        // The Qwen models' main-job runs would take most of an hour on two
        // cores; the first prompts show the ratio.
        let limit = match model.name {
            "smollm2-135m" => usize::MAX,
            "qwen2.5-coder-0.5b" => 20,
            _ => 10,
        };
        if runs("aggregate") {
            aggregate(&gguf, &builds, threads, limit, layouts);
        }
    }
}

/// Prefill and decode rates on the one bench prompt, per layout, beside llama.cpp's.
fn single_prompt(
    gguf: &Path,
    prompt: &Prompt,
    builds: &[(&str, &Path)],
    threads: usize,
    layouts: &[Weights],
) {
    let text = prompt_text(prompt);
    let mut references: Vec<(String, Baseline)> = builds
        .iter()
        .filter_map(|&(name, dir)| {
            Some((name.to_owned(), llama_cpp(dir, gguf, text, threads, false)?))
        })
        .collect();
    // Through Python, as llama-cpp-python's users call it.
    if let Some(p) = builds
        .first()
        .and_then(|&(_, dir)| llama_cpp(dir, gguf, text, threads, true))
    {
        let version = p.version.clone().unwrap_or_else(|| "?".to_owned());
        references.push((
            format!("llama-cpp-python {version} from PyPI, through Python"),
            p,
        ));
    }
    // llama.cpp at its best here: the fastest build at each rate.
    let best =
        |rate: fn(&Baseline) -> f64| references.iter().map(|(_, b)| rate(b)).reduce(f64::max);
    let (best_prefill, best_decode) = (best(|b| b.prefill), best(|b| b.decode));
    let ratio = |ours: f64, theirs: Option<f64>| {
        theirs.map_or("-".to_owned(), |t| format!("{:.2}x", ours / t))
    };
    println!(
        "| engine | prompt tokens | prefill tok/s | decode tok/s | prefill vs best llama.cpp | decode vs best llama.cpp |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, b) in &references {
        println!(
            "| {name} ({threads} threads; {}) | {} | {:.0} | {:.1} | {} | {} |",
            b.flash_attn(),
            b.prompt_tokens,
            b.prefill,
            b.decode,
            ratio(b.prefill, best_prefill),
            ratio(b.decode, best_decode),
        );
    }
    let baseline = references.first().map(|(_, b)| b);
    for &weights in layouts {
        let backend = LocalBackend::load(gguf, "bench", &Device::Cpu, weights).expect("load");
        let (first, g) = timed(&backend, prompt, 1, Timing::Prefill);
        let prompt_tokens = g.prompt_tokens.unwrap_or(0);
        // The first token comes from the kept logits; each further one is a
        // decode step.
        let (steps, g) = timed(&backend, prompt, DECODE_TOKENS + 1, Timing::Decode);
        let decoded = g.tokens.len().saturating_sub(1).max(1);
        let (prefill, decode) = (prompt_tokens as f64 / first, decoded as f64 / steps);
        println!(
            "| codecal {weights:?} | {prompt_tokens} | {prefill:.0} | {decode:.1} | {} | {} |",
            ratio(prefill, best_prefill),
            ratio(decode, best_decode),
        );
        if let (Some(b), Weights::F32) = (baseline, weights) {
            let ours = backend.encode(prompt_text(prompt)).expect("encode");
            println!(
                "\ntokenizer check: llama.cpp and codecal give the prompt {} ids ({} and {} ids)\n",
                if ours == b.ids {
                    "the same"
                } else {
                    "DIFFERENT"
                },
                b.ids.len(),
                ours.len()
            );
        }
    }
}

/// Token ids of every main-job prompt (as the model sees it, chat template
/// included) and every HumanEval prompt, by codecal and by llama.cpp.
fn tokenizer_check(home: &ModelHome, gguf: &Path, dir: &Path) {
    let backend = LocalBackend::load(gguf, "bench", &Device::Cpu, Weights::F32).expect("load");
    let mut texts: Vec<(String, String)> = Vec::new();
    let main_job = Path::new(env!("CARGO_MANIFEST_DIR")).join("runs/default/prompts.jsonl");
    if let Ok(rows) = read_prompts(&main_job) {
        texts.extend(
            rows.iter()
                .map(|r| (r.id.clone(), backend.render(&r.prompt))),
        );
    } else {
        println!(
            "tokenizer check: {} is missing; HumanEval only",
            main_job.display()
        );
    }
    let humaneval = home.ensure_humaneval().expect("HumanEval set-up");
    let problems = codecal::task::datasets::read_humaneval(&humaneval).expect("HumanEval");
    texts.extend(problems.into_iter().map(|p| (p.id, p.prompt)));
    let file = dir.join("tokenizer-check.bin");
    let joined: Vec<&str> = texts.iter().map(|t| t.1.as_str()).collect();
    std::fs::write(&file, joined.join("\0")).expect("write the prompts");
    let out = Command::new(dir.join("llama-greedy"))
        .args([gguf.as_os_str(), file.as_os_str()])
        .args(["0", "1"])
        .output()
        .expect("llama-greedy");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let differing: Vec<&str> = texts
        .iter()
        .zip(&lines)
        .filter(|((_, text), theirs)| {
            ids(&theirs["ids"]).as_deref() != Some(&backend.encode(text).expect("encode")[..])
        })
        .map(|((id, _), _)| id.as_str())
        .collect();
    println!(
        "tokenizer check over {} prompts (main job and HumanEval): llama.cpp gave {} answers, \
         {} differ from codecal's ids{}\n",
        texts.len(),
        lines.len(),
        differing.len() + texts.len().saturating_sub(lines.len()),
        if differing.is_empty() {
            String::new()
        } else {
            format!(": {}", differing.join(", "))
        }
    );
}

/// On the first 10 HumanEval prompts: llama.cpp's 32-token greedy answer,
/// codecal's teacher-forced log-probabilities of the same tokens (largest
/// and mean gap), and whether codecal's own greedy answer is the same.
fn logprob_check(home: &ModelHome, gguf: &Path, dir: &Path, weights: Weights) {
    const DECODE: usize = 32;
    let backend = LocalBackend::load(gguf, "bench", &Device::Cpu, weights).expect("load");
    let humaneval = home.ensure_humaneval().expect("HumanEval set-up");
    let problems = codecal::task::datasets::read_humaneval(&humaneval).expect("HumanEval");
    let texts: Vec<&str> = problems
        .iter()
        .take(10)
        .map(|p| p.prompt.as_str())
        .collect();
    let file = dir.join("logprob-check.bin");
    std::fs::write(&file, texts.join("\0")).expect("write the prompts");
    let out = Command::new(dir.join("llama-greedy"))
        .args([gguf.as_os_str(), file.as_os_str()])
        .args([DECODE.to_string(), "2".to_owned()])
        .output()
        .expect("llama-greedy");
    let (mut worst, mut total, mut count, mut same) = (0f64, 0f64, 0usize, 0usize);
    let params = Params {
        max_tokens: DECODE,
        stop: Vec::new(),
        ..Params::default()
    };
    for (line, text) in String::from_utf8_lossy(&out.stdout).lines().zip(&texts) {
        let theirs: serde_json::Value = serde_json::from_str(line).expect("llama-greedy's JSON");
        let (Some(prompt), Some(generated)) = (ids(&theirs["ids"]), ids(&theirs["generated"]))
        else {
            continue;
        };
        let ours = backend
            .teacher_forced_logprobs(&prompt, &generated)
            .expect("teacher forcing");
        for (ours, theirs) in ours
            .iter()
            .zip(theirs["logprobs"].as_array().into_iter().flatten())
        {
            let gap = (ours - theirs.as_f64().unwrap_or(f64::NAN)).abs();
            worst = worst.max(gap);
            total += gap;
            count += 1;
        }
        let greedy = backend
            .generate_ids(&Prompt::Completion((*text).to_owned()), &params)
            .expect("generation");
        same += usize::from(greedy.generated_ids == generated);
    }
    println!(
        "llama.cpp check on {} HumanEval prompts, codecal {weights:?}: teacher-forced \
         log-probabilities of its {count} greedy tokens within {worst:.4} nats (mean {:.4}); \
         the same {DECODE}-token greedy answer on {same}\n",
        texts.len(),
        total / count.max(1) as f64
    );
}

/// The main job's first `limit` prompts through codecal and through
/// llama.cpp, at parallelism 1 and at codecal's default.
fn aggregate(
    gguf: &Path,
    builds: &[(&str, &Path)],
    threads: usize,
    limit: usize,
    layouts: &[Weights],
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("runs/default/prompts.jsonl");
    if !path.exists() {
        println!(
            "aggregate: skipped, {} is missing (run `cargo run --release -- run` first)",
            path.display()
        );
        return;
    }
    let mut rows = read_prompts(&path).expect("the main job's prompts");
    rows.truncate(limit);
    let params = Params {
        max_tokens: 100,
        stop: vec!["\n".to_owned()],
        ..Params::default()
    };
    let ids_file = builds.first().map(|(_, dir)| dir.join("main-job-ids.txt"));
    println!(
        "\n| engine | parallel | prompts | seconds | prompts/hour | generated tok/s | codecal vs llama.cpp | same text |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for parallel in [1, default_parallel()] {
        // One at a time: the f32 and mixed layouts (the defaults). At the
        // batched setting, the one a long job would use, the quantized one
        // (llama.cpp's arithmetic) too; f16 decodes too slowly to matter.
        let timed: Vec<Weights> = layouts
            .iter()
            .copied()
            .filter(|&w| w != Weights::F16 && (parallel > 1 || w != Weights::Quantized))
            .collect();
        let mut theirs = None;
        for &weights in &timed {
            let backend = LocalBackend::load(gguf, "bench", &Device::Cpu, weights)
                .expect("load")
                .with_parallel(parallel);
            if let (Some(file), None) = (&ids_file, &theirs) {
                write_prompt_ids(&backend, &rows, file);
                // Each C build, the faster kept: llama.cpp at its best.
                theirs = builds
                    .iter()
                    .filter_map(|&(name, dir)| {
                        llama_cpp_batch(dir, name, gguf, file, params.max_tokens, parallel, threads)
                    })
                    .min_by(|a, b| a.engine.seconds.total_cmp(&b.engine.seconds));
            }
            let start = Instant::now();
            let answers = parallel_map(parallel, &rows, |row| {
                backend
                    .generate(&row.prompt, &params)
                    .map(|g| (g.tokens.len(), first_line(&g.text).to_owned()))
            })
            .expect("generation");
            let ours = Engine {
                seconds: start.elapsed().as_secs_f64(),
                tokens: answers.iter().map(|a| a.0).sum(),
            };
            let same = theirs.as_ref().map_or("-".to_owned(), |t: &BatchRun| {
                let same = t
                    .outputs
                    .iter()
                    .zip(&answers)
                    .filter(|(ids, ours)| {
                        let text = backend.tokenizer().decode(ids, true).expect("decode");
                        first_line(&text) == ours.1
                    })
                    .count();
                format!("{same} of {}", rows.len())
            });
            let ratio = theirs.as_ref().map_or("-".to_owned(), |t| {
                format!("{:.2}x", t.engine.seconds / ours.seconds)
            });
            let name = format!("codecal {weights:?}");
            println!("{}", ours.row(&name, parallel, rows.len(), &ratio, &same));
        }
        if let Some(t) = &theirs {
            let name = format!("llama.cpp (the faster build: {})", t.build);
            println!("{}", t.engine.row(&name, parallel, rows.len(), "1", "-"));
        }
    }
}

/// The text up to its first newline: the main job stops there, and the
/// engines differ in whether the stopping token's text is kept.
fn first_line(text: &str) -> &str {
    text.split('\n').next().unwrap_or_default()
}

/// One engine's time over a set of prompts.
struct Engine {
    seconds: f64,
    tokens: usize,
}

impl Engine {
    fn row(&self, name: &str, parallel: usize, prompts: usize, ratio: &str, same: &str) -> String {
        format!(
            "| {name} | {parallel} | {prompts} | {:.1} | {:.0} | {:.1} | {ratio} | {same} |",
            self.seconds,
            prompts as f64 * 3600.0 / self.seconds,
            self.tokens as f64 / self.seconds
        )
    }
}

/// The prompts as codecal's tokenizer gives them, one line of ids each, so
/// that llama.cpp decodes exactly the same input.
fn write_prompt_ids(
    backend: &LocalBackend,
    rows: &[codecal::generate::batch::PromptRow],
    file: &Path,
) {
    let lines: Vec<String> = rows
        .iter()
        .map(|row| {
            let ids = backend
                .encode(&backend.render(&row.prompt))
                .expect("encode");
            ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
        })
        .collect();
    std::fs::write(file, lines.join("\n") + "\n").expect("write the prompt ids");
}

fn prompt_text(prompt: &Prompt) -> &str {
    match prompt {
        Prompt::Completion(text) => text,
        Prompt::Chat(_) => unreachable!("the bench prompt is a completion"),
    }
}

struct Baseline {
    prompt_tokens: usize,
    prefill: f64,
    decode: f64,
    ids: Vec<u32>,
    /// llama-cpp-python's version, for the PyPI build.
    version: Option<String>,
    /// Which flash-attention setting gave the best prefill and decode rates.
    flash_attn: (bool, bool),
}

impl Baseline {
    /// "flash attention on for prefill, off for decode", or the like.
    fn flash_attn(&self) -> String {
        let on = |yes: bool| if yes { "on" } else { "off" };
        format!(
            "flash attention {} for prefill, {} for decode",
            on(self.flash_attn.0),
            on(self.flash_attn.1)
        )
    }
}

/// Builds llama.cpp's programs (first run only; `mode` "pypi" links them
/// against llama-cpp-python's libraries) and returns their folder, or None
/// with the reason where they cannot be built.
fn build_llama_cpp(mode: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = Command::new("bash")
        .arg(root.join("benches/llama_cpp/build.sh"))
        .args((!mode.is_empty()).then_some(mode))
        .output()
        .ok()?;
    if !built.status.success() {
        eprintln!(
            "llama.cpp baseline {mode} not built: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&built.stdout).trim()))
}

/// Runs one of llama.cpp's programs and reads the JSON object it prints.
fn run_llama_cpp(program: PathBuf, args: &[&std::ffi::OsStr]) -> Option<serde_json::Value> {
    run_json(Command::new(&program).args(args))
}

/// Runs a command and reads the JSON object it prints, or says why not.
fn run_json(command: &mut Command) -> Option<serde_json::Value> {
    let out = command.output().ok()?;
    if !out.status.success() {
        // A crash prints nothing of its own; its signal says what happened.
        println!(
            "{:?} failed ({}): {}",
            command.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// llama.cpp's rates on the same prompt: the bench's native build, or with
/// `pypi` llama-cpp-python from PyPI (`benches/llama_server`'s venv), timed
/// the same way by `pypi_timing.py`.
fn llama_cpp(
    dir: &Path,
    gguf: &Path,
    prompt: &str,
    threads: usize,
    pypi: bool,
) -> Option<Baseline> {
    let prompt_file = dir.join("prompt.txt");
    std::fs::write(&prompt_file, prompt).ok()?;
    let (decode, threads) = (DECODE_TOKENS.to_string(), threads.to_string());
    let args = [
        gguf.as_os_str(),
        prompt_file.as_os_str(),
        decode.as_ref(),
        threads.as_ref(),
    ];
    let v = if pypi {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = root.join("target/llama-server-venv/bin/python");
        if !python.exists() {
            println!(
                "llama-cpp-python from PyPI: {} is missing, so it is left out \
                 (`python3 benches/llama_server/check.py` builds it)",
                python.display()
            );
            return None;
        }
        run_json(
            Command::new(python)
                .arg(root.join("benches/llama_cpp/pypi_timing.py"))
                .args(args),
        )?
    } else {
        run_llama_cpp(dir.join("llama-timing"), &args)?
    };
    Some(Baseline {
        prompt_tokens: v["prompt_tokens"].as_u64()? as usize,
        prefill: v["prefill_tokens_per_s"].as_f64()?,
        decode: v["decode_tokens_per_s"].as_f64()?,
        ids: ids(&v["ids"])?,
        version: v["version"].as_str().map(str::to_owned),
        flash_attn: (
            v["prefill_flash_attn"].as_bool()?,
            v["decode_flash_attn"].as_bool()?,
        ),
    })
}

fn ids(value: &serde_json::Value) -> Option<Vec<u32>> {
    value
        .as_array()?
        .iter()
        .map(|i| i.as_u64().map(|i| i as u32))
        .collect()
}

/// llama.cpp over many prompts at once: its time and each prompt's answer ids.
struct BatchRun {
    /// Which build ran it.
    build: String,
    engine: Engine,
    outputs: Vec<Vec<u32>>,
}

fn llama_cpp_batch(
    dir: &Path,
    build: &str,
    gguf: &Path,
    ids_file: &Path,
    max_tokens: usize,
    parallel: usize,
    threads: usize,
) -> Option<BatchRun> {
    let counts = [max_tokens, parallel, threads].map(|n| n.to_string());
    // With and without flash attention, the faster kept: llama.cpp at its best.
    let v = ["on", "off"]
        .into_iter()
        .filter_map(|flash_attn| {
            let mut args = vec![gguf.as_os_str(), ids_file.as_os_str()];
            args.extend(counts.iter().map(|c| std::ffi::OsStr::new(c.as_str())));
            args.push(std::ffi::OsStr::new(flash_attn));
            run_llama_cpp(dir.join("llama-batch"), &args)
        })
        .min_by(|a, b| {
            let seconds = |v: &serde_json::Value| v["seconds"].as_f64().unwrap_or(f64::INFINITY);
            seconds(a).total_cmp(&seconds(b))
        })?;
    Some(BatchRun {
        build: build.to_owned(),
        engine: Engine {
            seconds: v["seconds"].as_f64()?,
            tokens: v["generated_tokens"].as_u64()? as usize,
        },
        outputs: v["outputs"]
            .as_array()?
            .iter()
            .map(ids)
            .collect::<Option<_>>()?,
    })
}
