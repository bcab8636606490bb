"""A BERT encoder written as an ONNX graph from its safetensors weights, with no PyTorch.

This is the transformer of all-MiniLM-L6-v2 (``BertModel``, eager attention), up to its last hidden
state: the embedder pools it in numpy. It replaces a one-off ``torch.onnx.export``, which made
PyTorch (2 GB, 4.7 GB with a CUDA build) a required dependency for one file. The graph uses only
standard operators of opset 17 (``LayerNormalization`` is its newest), matches
sentence-transformers' vectors within 1e-5 (``tests/unit/test_local_embedder.py``, against vectors
recorded from it) and quantizes like the exported one: its dense layers are ``MatMul`` over
initializers, which ``quantize_dynamic`` turns into int8 weights.
"""

import json
import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"


class _Graph:
    """Nodes and initializers, each named uniquely by the step that makes it."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        value = self.weights[key]
        return self.const(key, np.ascontiguousarray(value.T) if transpose else value)

    def op(self, kind: str, *inputs: str, **attributes) -> str:
        self._count += 1
        output = f"{kind.lower()}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [output], name=output, **attributes))
        return output

    def dense(self, x: str, prefix: str) -> str:
        """x · Wᵀ + b, as torch's Linear: the transposed weight is the MatMul's initializer."""
        return self.op(
            "Add", self.weight(f"{prefix}.bias"), self.op("MatMul", x, self.weight(f"{prefix}.weight", True))
        )

    def layer_norm(self, x: str, prefix: str, epsilon: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=epsilon)


def build(model_dir: Path, path: Path) -> None:
    """Write the fp32 graph of the BERT model in ``model_dir`` (config.json, model.safetensors) to
    ``path``: inputs ``INPUTS`` of shape (batch, tokens), int64; output (batch, tokens, hidden)."""
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError("only BERT with absolute positions and erf GELU is supported")
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_size, epsilon = hidden // heads, config["layer_norm_eps"]
    g = _Graph(load_file(str(model_dir / "model.safetensors")))

    # Embeddings: word + position (0..tokens-1) + token type, normalised.
    tokens = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.array(1, np.int64)), axis=0)
    positions = g.op("Range", g.const("zero", np.array(0, np.int64)), tokens, "one")
    x = g.op(
        "Add",
        g.op(
            "Add",
            g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids"),
            g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions),
        ),
        g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"),
    )
    x = g.layer_norm(x, "embeddings.LayerNorm", epsilon)

    # The additive attention mask, as transformers' eager attention: 0 for a token, float32's
    # lowest for padding, broadcast over heads and query positions: (batch, 1, 1, tokens).
    padding = g.op(
        "Sub",
        g.const("ones", np.array(1.0, np.float32)),
        g.op("Cast", "attention_mask", to=TensorProto.FLOAT),
    )
    lowest = g.const("lowest", np.array(np.finfo(np.float32).min, np.float32))
    mask = g.op("Unsqueeze", g.op("Mul", padding, lowest), g.const("mask_axes", np.array([1, 2], np.int64)))

    split = g.const("heads_shape", np.array([0, 0, heads, head_size], np.int64))  # 0: keep that dim
    merged = g.const("hidden_shape", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1 / math.sqrt(head_size), np.float32))
    root_two = g.const("root_two", np.array(math.sqrt(2), np.float32))
    half, one = g.const("half", np.array(0.5, np.float32)), "ones"

    def heads_of(projection: str, perm: list[int]) -> str:  # (batch, tokens, hidden) -> per head
        return g.op("Transpose", g.op("Reshape", projection, split), perm=perm)

    for i in range(config["num_hidden_layers"]):
        layer = f"encoder.layer.{i}"
        query = heads_of(g.dense(x, f"{layer}.attention.self.query"), [0, 2, 1, 3])
        key_t = heads_of(g.dense(x, f"{layer}.attention.self.key"), [0, 2, 3, 1])
        value = heads_of(g.dense(x, f"{layer}.attention.self.value"), [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key_t), scale), mask)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged)
        attended = g.dense(context, f"{layer}.attention.output.dense")
        x = g.layer_norm(g.op("Add", attended, x), f"{layer}.attention.output.LayerNorm", epsilon)
        inner = g.dense(x, f"{layer}.intermediate.dense")
        # GELU exactly as transformers writes it, which ONNX Runtime fuses into one kernel
        gelu = g.op(
            "Mul", g.op("Mul", inner, g.op("Add", g.op("Erf", g.op("Div", inner, root_two)), one)), half
        )
        out = g.dense(gelu, f"{layer}.output.dense")
        x = g.layer_norm(g.op("Add", out, x), f"{layer}.output.LayerNorm", epsilon)
    g.nodes.append(helper.make_node("Identity", [x], [OUTPUT], name=OUTPUT))

    axes = ["batch", "tokens"]
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [*axes, hidden])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="loom")
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
