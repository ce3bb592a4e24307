//! The local backend with the real SmolLM2-135M-Instruct: its tokenizer
//! rebuilt from the GGUF, and generations whose log-probabilities agree with
//! a teacher-forced pass over the same tokens.

#![cfg(feature = "local")]

mod common;

use candle_core::Device;
use codecal::generate::local::{LocalBackend, Weights};
use codecal::generate::{Backend, Params};
use codecal::prompt::{Prompt, SEED_TEMPLATE, Template};

const JAVA: &str = "public boolean isEmpty() {\n    return size == 0;\n}";
const PYTHON: &str = "def mean(values):\n    return sum(values) / len(values)";

fn load(weights: Weights) -> Option<LocalBackend> {
    let gguf = common::smollm2_file()?;
    Some(LocalBackend::load(&gguf, "smollm2", &Device::Cpu, weights).unwrap())
}

#[test]
fn tokenizer_from_gguf_metadata_gives_known_ids() {
    let Some(backend) = load(Weights::F32) else {
        return;
    };
    let tokenizer = backend.tokenizer();
    let id = |t: &str| tokenizer.token_to_id(t).unwrap();
    // Control tokens (token_type 3) are the first ids and match whole.
    assert_eq!(id("<|endoftext|>"), 0);
    assert_eq!(id("<|im_start|>"), 1);
    assert_eq!(id("<|im_end|>"), 2);
    let ids = backend.encode("<|im_start|>user\nhi<|im_end|>").unwrap();
    assert_eq!(ids[0], 1);
    assert_eq!(*ids.last().unwrap(), 2);
    assert_eq!(ids[1], id("user"));
    assert_eq!(ids[2], id("Ċ"), "the newline is its own byte-level token");
    // Digits are split one by one before byte-level BPE.
    let digits = backend.encode("2024").unwrap();
    assert_eq!(digits, vec![id("2"), id("0"), id("2"), id("4")]);
    // No prefix space; a leading space is the byte-level Ġ.
    assert_eq!(backend.encode("return").unwrap(), vec![id("return")]);
    assert_eq!(backend.encode(" return").unwrap(), vec![id("Ġreturn")]);
    for code in [JAVA, PYTHON] {
        let ids = backend.encode(code).unwrap();
        assert_eq!(tokenizer.decode(&ids, false).unwrap(), code, "round trip");
    }
}

fn seed_prompt(code: &str) -> Prompt {
    let template = Template::parse(SEED_TEMPLATE, "seed").unwrap();
    Prompt::Completion(template.query.replace("{code}", code))
}

fn check_against_teacher_forcing(weights: Weights, tolerance: f64) {
    let Some(backend) = load(weights) else { return };
    let params = Params {
        max_tokens: 24,
        ..Params::default()
    };
    for code in [JAVA, PYTHON] {
        let g = backend.generate_ids(&seed_prompt(code), &params).unwrap();
        let text = &g.generation.text;
        eprintln!(
            "{weights:?} summary of {:?}: {text:?}",
            code.lines().next().unwrap()
        );
        assert!(!text.trim().is_empty(), "a summary was written");
        assert!(!text.contains('\n'), "generation stops at a newline");
        assert_eq!(g.generation.tokens.len(), g.generated_ids.len());
        let forced = backend
            .teacher_forced_logprobs(&g.prompt_ids, &g.generated_ids)
            .unwrap();
        for (token, forced) in g.generation.tokens.iter().zip(&forced) {
            assert!(
                (token.logprob - forced).abs() < tolerance,
                "{:?}: decoded {} vs teacher-forced {forced}",
                token.token,
                token.logprob
            );
            assert!(token.logprob <= 0.0);
            assert_eq!(token.top.len(), 5);
            // Greedy: the chosen token is the most likely one.
            assert!((token.top[0].logprob - token.logprob).abs() < 1e-12);
        }
        // The same request gives the same answer.
        let again = backend.generate(&seed_prompt(code), &params).unwrap();
        assert_eq!(&again, &g.generation);
    }
}

#[test]
fn f32_generation_logprobs_match_teacher_forcing() {
    check_against_teacher_forcing(Weights::F32, 1e-4);
}

/// f16 products round differently for one row and for many, and by how
/// much depends on the CPU's f16 kernels: 1.5e-3 nats apart on one machine,
/// 0.015 on another (2026-11-23). So the f16 layout gets a looser bound.
#[test]
fn f16_generation_logprobs_are_close_to_teacher_forcing() {
    check_against_teacher_forcing(Weights::F16, 0.05);
}

/// The quantized layout multiplies 8-bit activations (llama.cpp's
/// arithmetic) in every pass, with the same per-row products in a decode
/// step as over the whole prompt. Attention is not the same code in both
/// (decode steps have their own), and an f32 difference in the last bit can
/// move an activation across an 8-bit rounding step; the prompt pass and
/// the teacher-forced pass also differ in length, so candle's attention
/// products round differently. How far apart depends on where the 8-bit
/// steps happen to fall: on 2026-11-25, kernels that differed only in the
/// order of their f32 sums gave 0.012, 0.067 and 0.12 nats here. The layout
/// is held to 0.25. Only the f32 path, the default, is held to 1e-4.
#[test]
fn quantized_generation_logprobs_are_close_to_teacher_forcing() {
    check_against_teacher_forcing(Weights::Quantized, 0.25);
}

#[test]
fn chat_prompts_use_the_chatml_template() {
    let Some(backend) = load(Weights::F32) else {
        return;
    };
    let prompt = Prompt::Chat(vec![codecal::prompt::Message::new("user", "Hi")]);
    let text = backend.render(&prompt);
    assert!(text.starts_with("<|im_start|>system\nYou are a helpful AI assistant named SmolLM"));
    assert!(text.ends_with("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
}

/// Batched decoding (issue: local generation, item 1): a prompt decoded in
/// one step with three others gets the text it gets alone, and its
/// log-probabilities within 1e-4 (the f32 layout; a product with more rows
/// may round differently). The prompts differ in length, so they end at
/// different steps and the batch shrinks while the others go on.
#[test]
fn a_prompt_decoded_beside_three_others_matches_decoding_it_alone() {
    let Some(backend) = load(Weights::F32) else {
        return;
    };
    let backend = backend.with_parallel(4);
    let codes = [
        JAVA,
        PYTHON,
        "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))",
        "public int size() {\n    return count;\n}",
    ];
    let prompts: Vec<Prompt> = codes.iter().map(|c| seed_prompt(c)).collect();
    let params = Params {
        max_tokens: 40,
        stop: Vec::new(),
        ..Params::default()
    };
    let alone: Vec<_> = prompts
        .iter()
        .map(|p| backend.generate_ids(p, &params).unwrap())
        .collect();
    assert_eq!(backend.widest_step(), 1, "one at a time");
    let start = std::sync::Barrier::new(prompts.len());
    let together: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = prompts
            .iter()
            .map(|p| {
                let (backend, params, start) = (&backend, &params, &start);
                scope.spawn(move || {
                    start.wait();
                    backend.generate_ids(p, params).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(backend.widest_step(), 4, "the four prompts shared steps");
    let mut largest = 0.0f64;
    for (alone, together) in alone.iter().zip(&together) {
        assert_eq!(together.generation.text, alone.generation.text);
        assert_eq!(together.generated_ids, alone.generated_ids);
        for (a, b) in alone
            .generation
            .tokens
            .iter()
            .zip(&together.generation.tokens)
        {
            for (x, y) in std::iter::once((a.logprob, b.logprob)).chain(
                a.top
                    .iter()
                    .zip(&b.top)
                    .map(|(x, y)| (x.logprob, y.logprob)),
            ) {
                largest = largest.max((x - y).abs());
            }
        }
    }
    eprintln!("largest log-probability difference, batched vs alone: {largest:.2e}");
    assert!(largest < 1e-4, "{largest}");
    let lengths: Vec<usize> = alone.iter().map(|g| g.generated_ids.len()).collect();
    eprintln!("tokens generated: {lengths:?}");
}

/// Issue "confidence from agreement": the answers sampled from one prompt
/// prefill it once, and an answer started from the kept prefill is the
/// answer a fresh prefill gives, token for token and bit for bit.
#[test]
fn samples_of_one_prompt_share_its_prefill_and_answer_as_if_alone() {
    let (Some(shared), Some(fresh)) = (load(Weights::F32), load(Weights::F32)) else {
        return;
    };
    let prompt = seed_prompt(PYTHON);
    let sample = |seed: u64| Params {
        max_tokens: 30,
        temperature: 1.0,
        seed,
        stop: Vec::new(),
        ..Params::default()
    };
    let first = shared.generate_ids(&prompt, &sample(1)).unwrap();
    assert_eq!(shared.reused_prefills(), 0);
    let second = shared.generate_ids(&prompt, &sample(2)).unwrap();
    assert_eq!(
        shared.reused_prefills(),
        1,
        "the second sample reused the prefill"
    );
    let alone = fresh.generate_ids(&prompt, &sample(2)).unwrap();
    assert_eq!(fresh.reused_prefills(), 0);
    assert_eq!(second.generated_ids, alone.generated_ids);
    assert_eq!(second.generation.tokens, alone.generation.tokens);
    assert_ne!(
        first.generated_ids, second.generated_ids,
        "two seeds, two samples"
    );
    // The generate bench times prefill: once forgotten, a prompt runs in full.
    shared.forget_prefills();
    let third = shared.generate_ids(&prompt, &sample(2)).unwrap();
    assert_eq!(shared.reused_prefills(), 1, "forgotten, so prefilled again");
    assert_eq!(third.generated_ids, second.generated_ids);
}
