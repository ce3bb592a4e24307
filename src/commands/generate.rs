//! `codecal generate`: answer a prompts file with a backend, through the
//! response cache, and write one JSON line per prompt.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use codecal::confidence::reflective::{Measure, Templates, Wording};
use codecal::generate::batch::read_prompts;
use codecal::generate::cache::Cache;
use codecal::generate::stage::{self, StageOptions};
use codecal::generate::{Backend, Params};
use codecal::models::ModelHome;
use codecal::pipeline::BackendConfig;
use codecal::pipeline::config::BackendKind;

#[derive(Args)]
pub struct GenerateArgs {
    /// JSONL with `id` and `prompt` on each line (what `codecal retrieve` writes).
    #[arg(long)]
    prompts: PathBuf,
    /// Output JSONL, one line per prompt, in the prompts' order.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_parser = super::choice::<BackendKind>(), default_value_t = BackendKind::Local)]
    backend: BackendKind,
    /// The model: for openai the server's name for it (required); for local
    /// one of smollm2-135m (the default), qwen2.5-coder-0.5b or
    /// qwen2.5-coder-1.5b, installed on first use.
    #[arg(long)]
    model: Option<String>,
    /// The server's base URL up to the API version, e.g. http://127.0.0.1:8000/v1 (openai).
    /// Repeat it for a pool of servers of one model: each request goes to the
    /// least busy, and one that fails is benched and its requests go to the others.
    #[arg(long)]
    base_url: Vec<String>,
    /// Name of the environment variable that holds the API key (openai).
    #[arg(long)]
    api_key_env: Option<String>,
    /// Requests in flight at once, 1 to 256 (openai).
    #[arg(long, default_value_t = 8, value_parser = super::count_in(1..=super::MAX_WORKERS))]
    concurrency: usize,
    /// Seconds allowed for one request, at most 3600 (openai).
    #[arg(long, default_value_t = 120.0, value_parser = super::seconds)]
    timeout: f64,
    /// Retries of a request after timeouts, dropped connections, 429 and 5xx,
    /// at most 20 (openai).
    #[arg(long, default_value_t = 6, value_parser = super::count_in(0..=20))]
    max_retries: usize,
    /// The first retry's backoff in milliseconds; it doubles each time, up to --max-wait (openai).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    retry_base_ms: u64,
    /// The longest single wait between attempts in seconds, a server's
    /// Retry-After included; a longer Retry-After fails the request, naming
    /// it (openai).
    #[arg(long, default_value_t = codecal::generate::openai::DEFAULT_MAX_WAIT_S as f64,
          value_parser = super::seconds)]
    max_wait: f64,
    /// A JSON object of server-specific fields merged into every request and
    /// recorded in the cache key, e.g. '{"repeat_penalty": 1.0}' for
    /// llama.cpp's server (openai).
    #[arg(long, value_parser = json_object)]
    extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Accept responses without log-probabilities (their intrinsic measures are empty).
    #[arg(long)]
    allow_missing_logprobs: bool,
    #[arg(long, default_value_t = 100)]
    max_tokens: usize,
    #[arg(long, default_value_t = 0.0)]
    temperature: f64,
    /// Stop strings, with \n and \t escapes; default a newline, as in the seed.
    #[arg(long = "stop", default_values_t = ["\\n".to_owned()])]
    stop: Vec<String>,
    /// Generate until the end token or --max-tokens, with no stop string.
    #[arg(long, conflicts_with = "stop")]
    no_stop: bool,
    /// Alternatives reported at each position.
    #[arg(long, default_value_t = 5)]
    top_logprobs: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also compute each intrinsic measure over the first K tokens.
    #[arg(long)]
    first_k: Option<usize>,
    /// Answers to sample per prompt besides the main one, for confidence
    /// from agreement (0: none; otherwise at least 2). Each is cached under
    /// its own seed.
    #[arg(long, default_value_t = 0, value_parser = samples_count)]
    samples: usize,
    /// The temperature the --samples are drawn at.
    #[arg(long, default_value_t = 1.0, value_parser = sample_temperature)]
    sample_temperature: f64,
    /// Reflective measures to ask for (repeatable).
    #[arg(long = "reflective", value_parser = super::choice::<Measure>())]
    reflective: Vec<Measure>,
    /// A directory whose <measure>.txt files replace the built-in reflective templates.
    #[arg(long)]
    template_dir: Option<PathBuf>,
    /// How the local model keeps its weights: f32 (fast prefill on a CPU), f16
    /// (faster decoding), quantized (the GGUF's blocks times 8-bit activations in every pass,
    /// llama.cpp's arithmetic) or mixed (f32 prefill, 8-bit decode steps: the fastest for the
    /// Qwen files).
    /// Part of the model's cache name.
    #[cfg(feature = "local")]
    #[arg(long, value_parser = super::choice::<codecal::generate::local::Weights>(), default_value_t)]
    lm_weights: codecal::generate::local::Weights,
    /// Prompts the local model decodes at once, sharing each step's weight
    /// reads, 1 to 64; default two per core, at most 8 (local).
    #[arg(long, value_parser = super::count_in(1..=codecal::pipeline::MAX_PARALLEL as u64))]
    parallel: Option<usize>,
    /// The response cache (SQLite); default CODECAL_HOME/generations.sqlite.
    #[arg(long)]
    cache: Option<PathBuf>,
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    codecal::artifact::refuse_unsafe_outputs(&[&args.out], &[&args.prompts])?;
    let rows = read_prompts(&args.prompts)?;
    let templates = Templates::load(args.template_dir.as_deref(), Wording::Summary)?;
    let home = ModelHome::from_env()?;
    let backend = backend(&args, &home)?;
    let cache_path = args
        .cache
        .clone()
        .unwrap_or_else(|| home.root().join("generations.sqlite"));
    let cache = Cache::open(&cache_path)?;
    let options = StageOptions {
        params: params(&args),
        first_k: args.first_k,
        reflective: args.reflective.clone(),
        templates: &templates,
        samples: args.samples,
        sample_temperature: args.sample_temperature,
        tests: None,
    };
    let steps = rows.len() * (1 + usize::from(!options.reflective.is_empty()) + options.samples);
    let bar = super::progress::StageProgress::new("generate", steps as u64);
    let start = Instant::now();
    let out = stage::run(backend.as_ref(), &cache, &rows, &options, &|| bar.step())?;
    bar.finish();
    let cached = out.iter().filter(|r| r.cached == Some(true)).count();
    let mismatched = out.iter().filter(|r| r.token_text_mismatch).count();
    if mismatched > 0 {
        eprintln!(
            "codecal: warning: in {mismatched} of {} replies the token texts do not join to the \
             text (flagged \"token_text_mismatch\": the token measures describe other text)",
            out.len()
        );
    }
    let mut text = String::new();
    for row in &out {
        text += &serde_json::to_string(row)?;
        text.push('\n');
    }
    codecal::artifact::write_atomic(&args.out, text.as_bytes())?;
    for endpoint in backend.endpoint_records() {
        eprintln!(
            "codecal: {}: {} served, {} failed, benched {} times ({})",
            endpoint.base_url,
            endpoint.served,
            endpoint.failures,
            endpoint.benched,
            endpoint.server
        );
    }
    eprintln!(
        "codecal: {} prompts ({} from the cache) in {:.1} s -> {}",
        out.len(),
        cached,
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

fn params(args: &GenerateArgs) -> Params {
    let unescape = |s: &String| s.replace("\\n", "\n").replace("\\t", "\t");
    Params {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        stop: if args.no_stop {
            Vec::new()
        } else {
            args.stop.iter().map(unescape).collect()
        },
        top_logprobs: args.top_logprobs,
        seed: args.seed,
        stop_after_text: false,
    }
}

fn backend(args: &GenerateArgs, home: &ModelHome) -> anyhow::Result<Box<dyn Backend>> {
    let kind = match args.backend {
        BackendKind::Openai => {
            anyhow::ensure!(
                !args.base_url.is_empty(),
                "--backend openai needs --base-url"
            );
            anyhow::ensure!(
                args.parallel.is_none(),
                "--parallel is for --backend local (a server's requests in flight are --concurrency)"
            );
            anyhow::ensure!(args.model.is_some(), "--backend openai needs --model");
            BackendKind::Openai
        }
        BackendKind::Local => {
            anyhow::ensure!(
                args.extra_body.is_none(),
                "--extra-body is sent to a server: it needs --backend openai"
            );
            BackendKind::Local
        }
    };
    anyhow::ensure!(
        kind == BackendKind::Openai || args.base_url.is_empty(),
        "--base-url is for --backend openai"
    );
    let urls: Vec<Option<String>> = match args.base_url.as_slice() {
        [] => vec![None],
        urls => urls.iter().cloned().map(Some).collect(),
    };
    let pool = (urls.len() > 1).then(|| "generate".to_owned());
    let configs: Vec<BackendConfig> = urls
        .into_iter()
        .map(|base_url| backend_config(args, kind, base_url, pool.clone()))
        .collect();
    let members: Vec<&BackendConfig> = configs.iter().collect();
    codecal::pipeline::open_backends(&members, home).map_err(anyhow::Error::msg)
}

fn backend_config(
    args: &GenerateArgs,
    kind: BackendKind,
    base_url: Option<String>,
    pool: Option<String>,
) -> BackendConfig {
    BackendConfig {
        kind,
        model: args.model.clone(),
        base_url,
        api_key_env: args.api_key_env.clone(),
        concurrency: args.concurrency,
        timeout_s: args.timeout,
        max_retries: args.max_retries,
        retry_base_ms: args.retry_base_ms,
        max_wait_s: args.max_wait,
        lm_weights: lm_weights(args),
        parallel: args.parallel,
        require_logprobs: !args.allow_missing_logprobs,
        extra: args.extra_body.clone().unwrap_or_default(),
        pool,
    }
}

#[cfg(feature = "local")]
fn lm_weights(args: &GenerateArgs) -> Option<codecal::generate::weights::Weights> {
    Some(args.lm_weights)
}

#[cfg(not(feature = "local"))]
fn lm_weights(_: &GenerateArgs) -> Option<codecal::generate::weights::Weights> {
    None
}

/// `--extra-body`: a JSON object.
fn json_object(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!("expected a JSON object, got {other}")),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

fn samples_count(text: &str) -> Result<usize, String> {
    let n: usize = text
        .parse()
        .map_err(|_| format!("{text:?} is not a count"))?;
    match n {
        0 | 2..=codecal::pipeline::MAX_SAMPLES => Ok(n),
        _ => Err(format!(
            "must be 0 or from 2 to {} (agreement needs two samples)",
            codecal::pipeline::MAX_SAMPLES
        )),
    }
}

fn sample_temperature(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 2.0 => Ok(t),
        _ => Err(format!("{text:?}: must be a number above 0 and at most 2")),
    }
}
