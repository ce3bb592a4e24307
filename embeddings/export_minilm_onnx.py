"""Exports all-MiniLM-L6-v2 from its safetensors to an fp32 ONNX graph.

Needs only numpy and onnx (no torch). The graph is a plain BERT encoder:
embeddings (word + position + token type 0, LayerNorm), 6 layers of 12-head
self-attention and a GELU (erf) feed-forward block, LayerNorm eps 1e-12.

Inputs:  input_ids, attention_mask: int64 [batch, seq]
Outputs: token_embeddings [batch, seq, 384] (for BERTScore),
         sentence_embedding [batch, 384]: mean over the attention mask, L2-normalised
         (sentence-transformers' Pooling + Normalize modules).

Position ids are a slice of the position table by the sequence length: ONNX
Runtime 1.31's optimizer breaks the usual Shape -> Gather(scalar) -> Range
subgraph ("Starts must be a 1-D array").

Usage: python export_minilm_onnx.py MODEL_DIR OUT.onnx
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, LAYERS, EPS = 384, 12, 6, 1e-12
HEAD_DIM = HIDDEN // HEADS


def read_safetensors(path):
    """The tensors of a safetensors file as numpy arrays, by name."""
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
        data = f.read()
    dtypes = {"F32": np.float32, "I64": np.int64}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


class Graph:
    """Collects nodes and initializers; every helper returns its output name."""

    def __init__(self, weights):
        self.weights = weights
        self.nodes = []
        self.initializers = []
        self.count = 0

    def const(self, array, name=None):
        name = name or f"const_{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, key, transpose=False):
        array = self.weights[key]
        return self.const(array.T.copy() if transpose else array, key)

    def op(self, op_type, inputs, **attrs):
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def linear(self, x, prefix):
        y = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [y, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x, prefix):
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=EPS)

    def gelu(self, x):
        inner = self.op("Erf", [self.op("Div", [x, self.const(np.float32(np.sqrt(2.0)))])])
        one_plus = self.op("Add", [inner, self.const(np.float32(1.0))])
        return self.op("Mul", [self.op("Mul", [x, one_plus]), self.const(np.float32(0.5))])


def embeddings(g, input_ids):
    words = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), input_ids], axis=0)
    seq_len = g.op("Slice", [g.op("Shape", [input_ids]), g.const(np.array([1])), g.const(np.array([2]))])
    positions = g.op(
        "Slice",
        [g.weight("embeddings.position_embeddings.weight"), g.const(np.array([0])), seq_len, g.const(np.array([0]))],
    )
    token_type = g.const(g.weights["embeddings.token_type_embeddings.weight"][0], "token_type_0")
    summed = g.op("Add", [g.op("Add", [words, positions]), token_type])
    return g.layer_norm(summed, "embeddings.LayerNorm")


def split_heads(g, x):
    shaped = g.op("Reshape", [x, g.const(np.array([0, 0, HEADS, HEAD_DIM]))])
    return g.op("Transpose", [shaped], perm=[0, 2, 1, 3])


def encoder_layer(g, x, mask_bias, i):
    p = f"encoder.layer.{i}"
    q = split_heads(g, g.linear(x, f"{p}.attention.self.query"))
    k = split_heads(g, g.linear(x, f"{p}.attention.self.key"))
    v = split_heads(g, g.linear(x, f"{p}.attention.self.value"))
    scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = g.op("Div", [scores, g.const(np.float32(np.sqrt(HEAD_DIM)))])
    probs = g.op("Softmax", [g.op("Add", [scores, mask_bias])], axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    context = g.op("Reshape", [context, g.const(np.array([0, 0, HIDDEN]))])
    attended = g.linear(context, f"{p}.attention.output.dense")
    x = g.layer_norm(g.op("Add", [attended, x]), f"{p}.attention.output.LayerNorm")
    hidden = g.gelu(g.linear(x, f"{p}.intermediate.dense"))
    out = g.linear(hidden, f"{p}.output.dense")
    return g.layer_norm(g.op("Add", [out, x]), f"{p}.output.LayerNorm")


def build(weights):
    g = Graph(weights)
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    # Padded keys get a large negative bias before the softmax, as in BERT.
    inverted = g.op("Sub", [g.const(np.float32(1.0)), mask])
    bias = g.op("Mul", [inverted, g.const(np.float32(np.finfo(np.float32).min))])
    mask_bias = g.op("Unsqueeze", [bias, g.const(np.array([1, 2]))])
    x = embeddings(g, "input_ids")
    for i in range(LAYERS):
        x = encoder_layer(g, x, mask_bias, i)
    g.nodes.append(helper.make_node("Identity", [x], ["token_embeddings"]))
    # Mean pooling over real tokens, then L2 normalisation.
    mask3 = g.op("Unsqueeze", [mask, g.const(np.array([2]))])
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), g.const(np.array([1]))], keepdims=0)
    counts = g.op("ReduceSum", [mask3, g.const(np.array([1]))], keepdims=0)
    mean = g.op("Div", [summed, g.op("Max", [counts, g.const(np.float32(1e-9))])])
    norm = g.op("ReduceL2", [mean, g.const(np.array([1]))], keepdims=1)
    g.nodes.append(
        helper.make_node("Div", [mean, g.op("Max", [norm, g.const(np.float32(1e-12))])], ["sentence_embedding"])
    )
    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, batch_seq),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq),
        ],
        [
            helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, batch_seq + [HIDDEN]),
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN]),
        ],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="codecal")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    model_dir, out = sys.argv[1], sys.argv[2]
    weights = read_safetensors(f"{model_dir}/model.safetensors")
    onnx.save(build(weights), out)


if __name__ == "__main__":
    main()
