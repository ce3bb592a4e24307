//! Sentence and token embeddings from a SentenceBERT model.
//!
//! [`Embedder`] is the small interface the scorer needs; [`OnnxEmbedder`]
//! implements it with all-MiniLM-L6-v2 on ONNX Runtime (the `ort` crate,
//! loading the library set up by `models`). Texts are sorted by token length
//! and batched, so padding stays short. On the CPU several batches run at once,
//! each in its own session (see [`ThreadPlan`]). With the `onnx` feature off,
//! construction fails with an error that names the feature.

/// The embedding of one text.
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding {
    /// L2-normalised mean of the token vectors (the model's sentence embedding).
    pub sentence: Vec<f32>,
    /// Contextual vectors of the text's word pieces, without [CLS] and [SEP].
    pub tokens: Vec<Vec<f32>>,
}

/// Where inference runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// CUDA when a GPU set-up is present, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda,
}

crate::choices!(Device { Auto => "auto", Cpu => "cpu", Cuda => "cuda" });

/// How to run the embedder.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbedOptions {
    pub batch_size: usize,
    /// CPU threads in all; 0 uses every core the process may run on.
    pub threads: usize,
    pub device: Device,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        EmbedOptions {
            batch_size: 32,
            threads: 0,
            device: Device::Auto,
        }
    }
}

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("codecal was built without the 'onnx' feature; rebuild with --features onnx")]
    FeatureOff,
    #[error(
        "device cuda: the CUDA build of ONNX Runtime is not set up (ModelHome::ensure_minilm_on sets it up)"
    )]
    CudaNotSetUp,
    #[error("device cuda: {0}")]
    Cuda(String),
    #[error("--batch-size must be at least 1")]
    BatchSize,
    #[error("{path}: cannot load the tokenizer: {message}")]
    Tokenizer { path: String, message: String },
    #[error("ONNX Runtime: {0}")]
    Runtime(String),
    /// Loading the library failed; every later call of the process sees the same error.
    #[cfg(feature = "onnx")]
    #[error("ONNX Runtime: {0}")]
    Load(std::sync::Arc<onnx::EnvironmentError>),
}

/// Anything that embeds texts.
pub trait Embedder {
    /// One embedding per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Embedding>, EmbedError>;

    /// How many texts so far were longer than the model's window and truncated.
    fn truncated(&self) -> usize;
}

/// The model's window: sentence-transformers' max_seq_length for all-MiniLM-L6-v2.
pub const MAX_TOKENS: usize = 256;

/// How the CPU threads are spent: `sessions` batches run at once, each on
/// `intra_threads` of ONNX Runtime's intra-op threads.
///
/// Summaries are short (the CodeXGLUE docstrings average 14 word pieces), so a
/// batch is a few small matrix products, and splitting each of them across
/// threads loses time to synchronisation. Whole batches in parallel keep every
/// core busy on its own product instead. Each session holds its own copy of
/// the weights (about 90 MB), hence the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    pub sessions: usize,
    pub intra_threads: usize,
}

impl ThreadPlan {
    /// Most batches in flight at once.
    pub const MAX_SESSIONS: usize = 4;

    /// The plan for `threads` threads (0: `available`).
    pub fn new(threads: usize, available: usize) -> ThreadPlan {
        let threads = if threads == 0 { available } else { threads }.max(1);
        let intra_threads = threads.div_ceil(Self::MAX_SESSIONS);
        ThreadPlan {
            sessions: threads / intra_threads,
            intra_threads,
        }
    }
}

#[cfg(feature = "onnx")]
pub use onnx::{OnnxEmbedder, load_tokenizer};

#[cfg(not(feature = "onnx"))]
/// Stand-in when the `onnx` feature is off: it cannot be constructed.
pub struct OnnxEmbedder;

#[cfg(not(feature = "onnx"))]
impl OnnxEmbedder {
    pub fn new(
        _files: &crate::models::MiniLmFiles,
        _options: &EmbedOptions,
    ) -> Result<OnnxEmbedder, EmbedError> {
        Err(EmbedError::FeatureOff)
    }
}

#[cfg(not(feature = "onnx"))]
impl Embedder for OnnxEmbedder {
    fn embed(&mut self, _texts: &[&str]) -> Result<Vec<Embedding>, EmbedError> {
        Err(EmbedError::FeatureOff)
    }

    fn truncated(&self) -> usize {
        0
    }
}

#[cfg(feature = "onnx")]
mod onnx {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ort::environment::Environment;
    use ort::ep::CUDA;
    use ort::session::Session;
    use ort::value::Tensor;
    use tokenizers::{Encoding, Tokenizer, TruncationParams};

    use super::{Device, EmbedError, EmbedOptions, Embedder, Embedding, MAX_TOKENS, ThreadPlan};
    use crate::models::{CudaRuntime, MiniLmFiles};

    /// Why the process's ONNX Runtime environment could not be made.
    #[derive(Debug, thiserror::Error)]
    pub enum EnvironmentError {
        #[error("{0}")]
        Library(ort::LoadDynamicError),
        #[error("{0}")]
        Build(ort::Error),
    }

    /// all-MiniLM-L6-v2 on ONNX Runtime.
    pub struct OnnxEmbedder {
        /// One per batch in flight ([`ThreadPlan`]).
        sessions: Vec<Session>,
        tokenizer: Tokenizer,
        batch_size: usize,
        truncated: usize,
    }

    fn runtime(e: impl std::fmt::Display) -> EmbedError {
        EmbedError::Runtime(e.to_string())
    }

    /// The model's tokenizer as codecal runs it: no padding (batches are padded
    /// to their longest text), truncation at [`MAX_TOKENS`]. The file itself
    /// pads and truncates to 128.
    pub fn load_tokenizer(files: &MiniLmFiles) -> Result<Tokenizer, EmbedError> {
        let tokenizer_error = |message: String| EmbedError::Tokenizer {
            path: files.tokenizer.display().to_string(),
            message,
        };
        let mut tokenizer =
            Tokenizer::from_file(&files.tokenizer).map_err(|e| tokenizer_error(e.to_string()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| tokenizer_error(e.to_string()))?;
        Ok(tokenizer)
    }

    /// The process's one ONNX Runtime environment, on the library the set-up
    /// installed. A process loads one build of ONNX Runtime: asking for
    /// another later is an error.
    fn environment(library: &Path) -> Result<&'static Environment, EmbedError> {
        type Built = Result<Environment, std::sync::Arc<EnvironmentError>>;
        static ENVIRONMENT: OnceLock<(PathBuf, Built)> = OnceLock::new();
        let (loaded, built) = ENVIRONMENT.get_or_init(|| {
            let built = ort::init_from(library)
                .map_err(EnvironmentError::Library)
                .and_then(|builder| builder.build().map_err(EnvironmentError::Build));
            (library.to_path_buf(), built.map_err(std::sync::Arc::new))
        });
        if loaded != library {
            return Err(EmbedError::Runtime(format!(
                "this process already runs {}; it cannot also load {}",
                loaded.display(),
                library.display()
            )));
        }
        built.as_ref().map_err(|e| EmbedError::Load(e.clone()))
    }

    /// The CUDA runtime to embed with, if any: `cpu` never, `cuda` always
    /// (set up by then), `auto` where the set-up provided one.
    fn cuda_runtime(
        files: &MiniLmFiles,
        device: Device,
    ) -> Result<Option<&CudaRuntime>, EmbedError> {
        match (device, &files.cuda) {
            (Device::Cpu, _) => Ok(None),
            (Device::Cuda, None) => Err(EmbedError::CudaNotSetUp),
            (_, cuda) => Ok(cuda.as_ref()),
        }
    }

    /// One session on the GPU. The CUDA libraries are loaded from the
    /// set-up's directory first, so the provider finds them without
    /// LD_LIBRARY_PATH.
    fn cuda_session(files: &MiniLmFiles, cuda: &CudaRuntime) -> Result<Session, EmbedError> {
        let failed = |message: String| {
            EmbedError::Cuda(format!(
                "{message} (the CUDA libraries are in {}; the NVIDIA driver's libcuda.so.1 comes from the system)",
                cuda.dir.display()
            ))
        };
        // ONNX Runtime first: ort builds its errors through the loaded library.
        let environment = environment(&cuda.onnxruntime)?;
        ort::ep::cuda::preload_dylibs(Some(&cuda.dir), Some(&cuda.dir))
            .map_err(|e| failed(e.to_string()))?;
        // TF32 would round the products to 10 bits of mantissa; scores stay f32.
        let provider = CUDA::default().with_tf32(false).build().error_on_failure();
        Session::builder(environment)
            .map_err(runtime)?
            .with_execution_providers([provider])
            .map_err(|e| failed(e.to_string()))?
            .commit_from_file(&files.onnx)
            .map_err(|e| failed(e.to_string()))
    }

    /// `plan.sessions` CPU sessions on `library`.
    fn cpu_sessions(
        files: &MiniLmFiles,
        library: &Path,
        plan: ThreadPlan,
    ) -> Result<Vec<Session>, EmbedError> {
        (0..plan.sessions)
            .map(|_| {
                Session::builder(environment(library)?)
                    .map_err(runtime)?
                    .with_intra_threads(plan.intra_threads)
                    .map_err(runtime)?
                    .commit_from_file(&files.onnx)
                    .map_err(runtime)
            })
            .collect()
    }

    impl OnnxEmbedder {
        /// Loads the model for `options.device`. With `auto` and a CUDA
        /// runtime in `files`, a GPU that fails to start is reported on stderr
        /// and the CPU is used instead; with `cuda` it is an error.
        pub fn new(
            files: &MiniLmFiles,
            options: &EmbedOptions,
        ) -> Result<OnnxEmbedder, EmbedError> {
            if options.batch_size == 0 {
                return Err(EmbedError::BatchSize);
            }
            let tokenizer = load_tokenizer(files)?;
            let available = std::thread::available_parallelism().map_or(1, |n| n.get());
            let plan = ThreadPlan::new(options.threads, available);
            let sessions = match cuda_runtime(files, options.device)? {
                None => cpu_sessions(files, &files.onnxruntime, plan)?,
                Some(cuda) => match cuda_session(files, cuda) {
                    Ok(session) => vec![session],
                    Err(e) if options.device == Device::Auto => {
                        eprintln!("codecal: {e}; embedding on the CPU instead");
                        // The CUDA build runs on the CPU too, and it is the one loaded.
                        cpu_sessions(files, &cuda.onnxruntime, plan)?
                    }
                    Err(e) => return Err(e),
                },
            };
            Ok(OnnxEmbedder {
                sessions,
                tokenizer,
                batch_size: options.batch_size,
                truncated: 0,
            })
        }

        /// Runs the batches, as many at once as there are sessions, each
        /// session taking the next batch when it is free.
        fn run_batches(
            &mut self,
            batches: &[Vec<&Encoding>],
        ) -> Result<Vec<Vec<Embedding>>, EmbedError> {
            let next = AtomicUsize::new(0);
            let finished: Vec<Result<Numbered, EmbedError>> = std::thread::scope(|scope| {
                let workers: Vec<_> = self
                    .sessions
                    .iter_mut()
                    .map(|session| scope.spawn(|| take_batches(session, batches, &next)))
                    .collect();
                workers
                    .into_iter()
                    .map(|worker| {
                        worker.join().unwrap_or_else(|_| {
                            Err(EmbedError::Runtime("an embedding thread panicked".into()))
                        })
                    })
                    .collect()
            });
            let mut slots: Vec<Vec<Embedding>> = vec![Vec::new(); batches.len()];
            for worker in finished {
                for (k, embeddings) in worker? {
                    slots[k] = embeddings;
                }
            }
            Ok(slots)
        }
    }

    /// Batches embedded by one session, each with its place in the list.
    type Numbered = Vec<(usize, Vec<Embedding>)>;

    /// One session's share: batch after batch, the next not yet taken, until
    /// none is left or one fails.
    fn take_batches(
        session: &mut Session,
        batches: &[Vec<&Encoding>],
        next: &AtomicUsize,
    ) -> Result<Numbered, EmbedError> {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(batch) = batches.get(k) else {
                return Ok(done);
            };
            match run_batch(session, batch) {
                Ok(embeddings) => done.push((k, embeddings)),
                Err(e) => {
                    // The other sessions stop after their current batch.
                    next.store(batches.len(), Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
    }

    /// Embeds one batch, padded to its longest text.
    fn run_batch(session: &mut Session, batch: &[&Encoding]) -> Result<Vec<Embedding>, EmbedError> {
        let width = batch.iter().map(|e| e.len()).max().unwrap_or(0);
        let mut ids = vec![0i64; batch.len() * width];
        let mut mask = vec![0i64; batch.len() * width];
        for (row, encoding) in batch.iter().enumerate() {
            for (col, &id) in encoding.get_ids().iter().enumerate() {
                ids[row * width + col] = i64::from(id);
                mask[row * width + col] = 1;
            }
        }
        let shape = [batch.len(), width];
        let inputs = ort::inputs![
            "input_ids" => Tensor::from_array((shape, ids)).map_err(runtime)?,
            "attention_mask" => Tensor::from_array((shape, mask)).map_err(runtime)?,
        ];
        let outputs = session.run(inputs).map_err(runtime)?;
        let (_, sentences) = outputs["sentence_embedding"]
            .try_extract_tensor::<f32>()
            .map_err(runtime)?;
        let (_, tokens) = outputs["token_embeddings"]
            .try_extract_tensor::<f32>()
            .map_err(runtime)?;
        let dim = sentences.len() / batch.len();
        Ok(batch
            .iter()
            .enumerate()
            .map(|(row, encoding)| {
                // Skip [CLS] at 0 and [SEP] at the end.
                let words = 1..encoding.len().saturating_sub(1);
                Embedding {
                    sentence: sentences[row * dim..(row + 1) * dim].to_vec(),
                    tokens: words
                        .map(|t| {
                            let start = (row * width + t) * dim;
                            tokens[start..start + dim].to_vec()
                        })
                        .collect(),
                }
            })
            .collect())
    }

    impl Embedder for OnnxEmbedder {
        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Embedding>, EmbedError> {
            let encodings = self
                .tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| EmbedError::Runtime(e.to_string()))?;
            self.truncated += encodings
                .iter()
                .filter(|e| !e.get_overflowing().is_empty())
                .count();
            // Similar lengths share a batch, so little of each batch is padding.
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| encodings[i].len());
            let chunks: Vec<&[usize]> = order.chunks(self.batch_size).collect();
            let batches: Vec<Vec<&Encoding>> = chunks
                .iter()
                .map(|chunk| chunk.iter().map(|&i| &encodings[i]).collect())
                .collect();
            let mut embeddings: Vec<Option<Embedding>> = vec![None; texts.len()];
            for (chunk, batch) in chunks.iter().zip(self.run_batches(&batches)?) {
                for (&i, embedding) in chunk.iter().zip(batch) {
                    embeddings[i] = Some(embedding);
                }
            }
            Ok(embeddings.into_iter().flatten().collect())
        }

        fn truncated(&self) -> usize {
            self.truncated
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ThreadPlan;

    fn plan(threads: usize, available: usize) -> (usize, usize) {
        let plan = ThreadPlan::new(threads, available);
        (plan.sessions, plan.intra_threads)
    }

    #[test]
    fn small_machines_run_one_single_threaded_batch_per_core() {
        assert_eq!(plan(0, 2), (2, 1));
        assert_eq!(plan(1, 16), (1, 1));
        assert_eq!(plan(3, 16), (3, 1));
    }

    #[test]
    fn large_machines_split_their_cores_among_four_sessions() {
        assert_eq!(plan(0, 16), (4, 4));
        assert_eq!(plan(6, 16), (3, 2));
        assert_eq!(plan(32, 2), (4, 8));
    }

    #[test]
    fn no_cores_reported_still_gives_one_thread() {
        assert_eq!(plan(0, 0), (1, 1));
    }
}
