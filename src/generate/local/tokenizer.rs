//! The byte-level BPE tokenizer of a GGUF model, rebuilt from the file's
//! metadata: the GGUF carries the vocabulary, the merges and the token types,
//! but no `tokenizer.json`.
//!
//! The pre-tokenizer follows `tokenizer.ggml.pre`, as llama.cpp does: for
//! `qwen2`, Qwen2's split pattern (contractions, letter runs with one
//! leading non-letter, single digits, punctuation runs, newlines and spaces)
//! before GPT-2 byte level; otherwise SmolLM2's: every digit on its own, then
//! GPT-2 byte level with its own pattern. No prefix space either way. Tokens
//! of type 3 (control), and for qwen2 of type 4 (user-defined, such as
//! `<|fim_prefix|>`), are special and are matched whole in the input, so
//! `<|im_start|>` in a prompt is one id.

use candle_core::quantized::gguf_file::{Content, Value};
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

/// GGUF token types of control and user-defined tokens.
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

/// Qwen2's pre-tokenizer pattern (llama.cpp's `qwen2` pre-type; the same
/// split as the `tokenizer.json` Qwen publishes).
const QWEN2_PATTERN: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Why the GGUF file's tokenizer could not be rebuilt; each names the key.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("GGUF metadata has no {0}")]
    Missing(&'static str),
    #[error("{key}: {source}")]
    Metadata {
        key: &'static str,
        source: candle_core::Error,
    },
    #[error("tokenizer.ggml.model is {0:?}; only byte-level BPE (\"gpt2\") is supported")]
    NotBytePairs(String),
    #[error("tokenizer.ggml.merges: {0:?} is not a pair")]
    Merge(String),
    #[error("{what}: {source}")]
    Build {
        what: &'static str,
        source: tokenizers::Error,
    },
}

/// Builds the tokenizer; errors name the metadata key that is missing or odd.
pub fn from_gguf(content: &Content) -> Result<Tokenizer, TokenizerError> {
    let get = |key: &'static str| {
        content
            .metadata
            .get(key)
            .ok_or(TokenizerError::Missing(key))
    };
    let metadata = |key: &'static str| move |source| TokenizerError::Metadata { key, source };
    let model = get("tokenizer.ggml.model")?
        .to_string()
        .map_err(metadata("tokenizer.ggml.model"))?;
    if model != "gpt2" {
        return Err(TokenizerError::NotBytePairs(model.clone()));
    }
    let tokens = strings(get("tokenizer.ggml.tokens")?, "tokenizer.ggml.tokens")?;
    let merges = strings(get("tokenizer.ggml.merges")?, "tokenizer.ggml.merges")?;
    let types: Vec<i32> = get("tokenizer.ggml.token_type")?
        .to_vec()
        .map_err(metadata("tokenizer.ggml.token_type"))?
        .iter()
        .map(|v| v.to_i32().unwrap_or(1))
        .collect();
    let vocab: tokenizers::models::bpe::Vocab = tokens
        .iter()
        .enumerate()
        .map(|(id, token)| (token.clone(), id as u32))
        .collect();
    let merges = merges
        .iter()
        .map(|m| {
            m.split_once(' ')
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| TokenizerError::Merge(m.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let build = |what: &'static str| move |source| TokenizerError::Build { what, source };
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(build("the byte-pair model"))?;
    let mut tokenizer = Tokenizer::new(bpe);
    let pre = content
        .metadata
        .get("tokenizer.ggml.pre")
        .and_then(|v| v.to_string().ok())
        .map_or("", |s| s.as_str());
    let qwen2 = pre == "qwen2";
    tokenizer.with_pre_tokenizer(Some(
        pre_tokenizer(qwen2).map_err(build("the qwen2 pre-tokenizer pattern"))?,
    ));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    let special: Vec<AddedToken> = tokens
        .iter()
        .zip(&types)
        .filter(|(_, t)| **t == CONTROL || (qwen2 && **t == USER_DEFINED))
        .map(|(token, _)| AddedToken::from(token.clone(), true))
        .collect();
    tokenizer
        .add_special_tokens(special)
        .map_err(build("special tokens"))?;
    Ok(tokenizer)
}

fn pre_tokenizer(qwen2: bool) -> Result<Sequence, tokenizers::Error> {
    let steps: Vec<PreTokenizerWrapper> = if qwen2 {
        let split = Split::new(
            SplitPattern::Regex(QWEN2_PATTERN.to_owned()),
            SplitDelimiterBehavior::Isolated,
            false,
        )?;
        vec![split.into(), ByteLevel::new(false, false, false).into()]
    } else {
        vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ]
    };
    Ok(Sequence::new(steps))
}

fn strings(value: &Value, key: &'static str) -> Result<Vec<String>, TokenizerError> {
    let metadata = |source| TokenizerError::Metadata { key, source };
    value
        .to_vec()
        .map_err(metadata)?
        .iter()
        .map(|v| v.to_string().cloned().map_err(metadata))
        .collect()
}
