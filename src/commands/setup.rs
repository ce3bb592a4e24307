//! `codecal setup`: install, ahead of first use, what the other subcommands
//! would install on demand (the models, the HumanEval data, bubblewrap) and
//! print where each went. The installing is the library's (`codecal::models`,
//! `codecal::sandbox`); this is only the list and the printing.

use codecal::models::ModelHome;
use codecal::score::Device;

pub fn run() -> anyhow::Result<()> {
    let home = ModelHome::from_env()?;
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
    println!("HumanEval: {}", home.ensure_humaneval()?.display());
    // The sandbox is needed only by tasks that run generated code,
    // so a machine without it can still do everything else.
    match codecal::sandbox::ensure_bubblewrap() {
        Ok(version) => println!("sandbox: {version}"),
        Err(why) => eprintln!("codecal setup: warning: {why}"),
    }
    match codecal::sandbox::ensure_reval_packages() {
        Ok(()) => println!("REval's Python packages: numpy, gensim, bs4, lxml"),
        Err(why) => eprintln!("codecal setup: warning: {why}"),
    }
    Ok(())
}
