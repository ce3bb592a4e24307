//! The token embedding table as the GGUF keeps it, each row dequantized
//! when a token is looked up. An f32 copy of the whole table is large and
//! mostly unread: 151,936 rows of 1,536 values are 0.93 GB for
//! Qwen2.5-Coder-1.5B (0.55 GB for 0.5B), and it took a share of the
//! model's start-up in page faults. A row is dequantized by candle's own
//! block code, so it holds the same f32 values the copy did. Not here: the
//! tied output projection, which reads the same matrix as a weight matrix
//! (`llama.rs`, `packed.rs`).

use std::borrow::Cow;

use candle_core::quantized::{GgmlDType, QStorage, QTensor};
use candle_core::{Device, Result, Tensor};

/// The table's blocks, row after row.
pub(super) struct QuantizedEmbedding {
    blocks: Vec<u8>,
    dtype: GgmlDType,
    row_bytes: usize,
    hidden: usize,
}

impl QuantizedEmbedding {
    /// The table `q`, of shape (vocabulary, hidden).
    pub(super) fn new(q: &QTensor) -> Result<QuantizedEmbedding> {
        let (rows, hidden) = q.shape().dims2()?;
        let blocks = q.data()?.into_owned();
        if rows == 0 || blocks.len() % rows != 0 {
            candle_core::bail!(
                "the token embedding's {} bytes are not {rows} rows",
                blocks.len()
            );
        }
        Ok(QuantizedEmbedding {
            row_bytes: blocks.len() / rows,
            blocks,
            dtype: q.dtype(),
            hidden,
        })
    }

    /// The rows of `tokens` as one sequence: shape (1, tokens, hidden).
    pub(super) fn forward(&self, tokens: &[u32], device: &Device) -> Result<Tensor> {
        let mut values = Vec::with_capacity(tokens.len() * self.hidden);
        for &token in tokens {
            let start = token as usize * self.row_bytes;
            let Some(row) = self.blocks.get(start..start + self.row_bytes) else {
                candle_core::bail!("token id {token} is past the embedding table's rows");
            };
            let storage = QStorage::from_data(Cow::Borrowed(row), &Device::Cpu, self.dtype)?;
            let row = QTensor::new(storage, (self.hidden,))?.dequantize(&Device::Cpu)?;
            values.extend(row.to_vec1::<f32>()?);
        }
        Tensor::from_vec(values, (1, tokens.len(), self.hidden), device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Module;

    /// Each looked-up row is the row of the whole table dequantized at once,
    /// to the bit, for a K-quant and a 32-weight format; a token past the
    /// table is an error, not a panic.
    #[test]
    fn rows_are_the_dequantized_table_to_the_bit() {
        let (rows, hidden) = (7, 512);
        let values: Vec<f32> = (0..rows * hidden)
            .map(|i| ((i * 7919 % 1000) as f32 / 500.0 - 1.0) * 0.3)
            .collect();
        let table = Tensor::from_vec(values, (rows, hidden), &Device::Cpu).unwrap();
        for dtype in [
            GgmlDType::Q4K,
            GgmlDType::Q6K,
            GgmlDType::Q8_0,
            GgmlDType::Q5_0,
        ] {
            let q = QTensor::quantize(&table, dtype).unwrap();
            let whole = candle_nn::Embedding::new(q.dequantize(&Device::Cpu).unwrap(), hidden);
            let tokens = [3u32, 0, 6, 3];
            let ids = Tensor::new(&tokens[..], &Device::Cpu)
                .unwrap()
                .unsqueeze(0)
                .unwrap();
            let expected = whole.forward(&ids).unwrap().flatten_all().unwrap();
            let embedding = QuantizedEmbedding::new(&q).unwrap();
            let got = embedding.forward(&tokens, &Device::Cpu).unwrap();
            assert_eq!(got.dims(), [1, 4, hidden]);
            let (got, expected) = (
                got.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                expected.to_vec1::<f32>().unwrap(),
            );
            assert!(
                got.iter()
                    .zip(&expected)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{dtype:?}"
            );
            let past = embedding.forward(&[rows as u32], &Device::Cpu).unwrap_err();
            assert!(past.to_string().contains("token id 7"), "{past}");
        }
    }
}
