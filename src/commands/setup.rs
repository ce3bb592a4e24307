//! `codecal setup`: install, ahead of first use, what the other subcommands
//! would install on demand (the models, the HumanEval data, bubblewrap, the
//! sandbox's Python packages) and print where each went. The installing is the library's (`codecal::models`,
//! `codecal::sandbox`); this is only the list and the printing.

use codecal::models::{ModelHome, language_model};
use codecal::score::Device;

#[derive(clap::Args, Debug)]
pub struct SetupArgs {
    /// Also install this local language model (smollm2-135m is always
    /// installed; qwen2.5-coder-0.5b and qwen2.5-coder-1.5b on request,
    /// 0.5 and 1.1 GB). May be given more than once.
    #[arg(long = "model", value_name = "NAME")]
    models: Vec<String>,
}

pub fn run(args: SetupArgs) -> anyhow::Result<()> {
    let home = ModelHome::from_env()?;
    // Unknown names are refused before anything is installed.
    let models = args
        .models
        .iter()
        .map(|name| language_model(name).map_err(|e| anyhow::anyhow!("--model: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let files = home.ensure_minilm_on(Device::Auto)?;
    println!("all-MiniLM-L6-v2: {}", files.onnx.display());
    println!("ONNX Runtime: {}", files.onnxruntime.display());
    match &files.cuda {
        Some(cuda) => println!("ONNX Runtime for CUDA: {}", cuda.dir.display()),
        None => println!("ONNX Runtime for CUDA: not installed (no NVIDIA GPU here)"),
    }
    println!(
        "SmolLM2-135M-Instruct: {}",
        home.ensure_smollm2()?.display()
    );
    for model in models {
        let gguf = home.ensure_language_model(model)?;
        println!("{}: {}", model.title, gguf.display());
    }
    println!("HumanEval: {}", home.ensure_humaneval()?.display());
    // The sandbox is needed only by tasks that run generated code,
    // so a machine without it can still do everything else.
    match codecal::sandbox::ensure_bubblewrap() {
        Ok(version) => println!("sandbox: {version}"),
        Err(why) => eprintln!("codecal setup: warning: {why}"),
    }
    match codecal::sandbox::ensure_pylint() {
        Ok(version) => println!("Pylint for Turbulence's static check: {version}"),
        Err(why) => eprintln!("codecal setup: warning: {why}"),
    }
    match codecal::sandbox::ensure_reval_packages() {
        Ok(()) => println!("REval's Python packages: numpy, gensim, bs4, lxml"),
        Err(why) => eprintln!("codecal setup: warning: {why}"),
    }
    Ok(())
}
