"""all-MiniLM-L6-v2's forward pass in NumPy, from its ``model.safetensors`` (no torch).

Used by the ``minilm`` embedder (`graphonomous.embed.minilm`, which batches
and pools the texts) and once, to distil a static table
(`graphonomous.embed.distill`).  The architecture is BERT (Devlin et al., NAACL 2019) as in
the model's ``config.json``: word + position + token-type embeddings,
LayerNorm (eps 1e-12), then ``num_hidden_layers`` post-norm blocks of
multi-head self-attention and a GELU feed-forward; the sentence vector is
the attention-mask mean of the last hidden states, L2-normalised (the
pooling the model was trained with, Reimers & Gurevych, EMNLP 2019).

The safetensors file is parsed here: 8-byte little-endian header length,
a JSON header (name -> dtype, shape, byte offsets), then the raw
little-endian tensors.  NumPy is imported by the functions, never at module
import time.  GELU is the exact ``x/2 (1 + erf(x/sqrt 2))``; erf comes from
Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution of
the activations it feeds).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Final

SAFETENSORS_FILE: Final = "model.safetensors"
CONFIG_FILE: Final = "config.json"
_DTYPES: Final = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
# Abramowitz & Stegun 7.1.26 coefficients.
_AS_P: Final = 0.3275911
_AS_A: Final = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Past |x| = 4 the formula's 1 - erf is below 1.5e-8, under half a float32 step below 1,
# so erf rounds to exactly +-1; capping |x| there keeps exp(-x^2) out of the float32
# subnormals (exp(-100) = 4e-44), whose arithmetic is many times slower on x86.
_ERF_SATURATION: Final = 4.0


def read_safetensors(path: str | Path) -> dict[str, Any]:
    """Every tensor of a safetensors file as a NumPy array (float tensors as float32).

    Raises `ValueError` naming the file when the header is malformed or a
    tensor's bytes fall outside the file.
    """
    import numpy as np

    data = Path(path).read_bytes()
    size = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8 : 8 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path}: not a safetensors file ({exc})") from exc
    base = 8 + size
    tensors: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(meta.get("dtype"))
        start, end = meta["data_offsets"]
        if dtype is None or base + end > len(data):
            raise ValueError(
                f"{path}: tensor {name!r} has an unknown dtype or lies outside the file"
            )
        array = np.frombuffer(data, dtype=dtype, count=-1, offset=base + start)
        array = array[: (end - start) // np.dtype(dtype).itemsize].reshape(meta["shape"])
        tensors[name] = array.astype(np.float32) if dtype in ("<f4", "<f2") else array
    return tensors


def _erf(x: Any) -> Any:
    """sign(x) (1 - t (a0 + t (a1 + ... t a4)) exp(-x^2)), t = 1 / (1 + p |x|).

    Computed in place (a few arrays of x's size instead of one per operation):
    the feed-forward activations are the largest arrays of the forward pass.
    |x| is capped at `_ERF_SATURATION`, which changes no value.
    """
    import numpy as np

    a = np.minimum(np.abs(x), np.float32(_ERF_SATURATION))
    t = a * np.float32(_AS_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(_AS_A[4])
    for coefficient in reversed(_AS_A[:4]):
        poly += coefficient
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(1.0, poly, out=poly)
    poly *= np.sign(x)
    return poly


def _gelu(x: Any) -> Any:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float) -> Any:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class BertEncoder:
    """A BERT encoder read from a sentence-transformers model directory.

    Input: a directory with ``model.safetensors`` and ``config.json``.
    `sentence_vectors` maps padded id batches to pooled unit vectors.
    """

    def __init__(self, model_dir: str | Path) -> None:
        directory = Path(model_dir)
        self.config = json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))
        self.weights = read_safetensors(directory / SAFETENSORS_FILE)
        self.layers = int(self.config["num_hidden_layers"])
        self.heads = int(self.config["num_attention_heads"])
        self.eps = float(self.config.get("layer_norm_eps", 1e-12))
        self.dimensions = int(self.config["hidden_size"])

    def _w(self, name: str) -> Any:
        return self.weights[name]

    def hidden_states(self, ids: Any, mask: Any) -> Any:
        """Last hidden states, shape (batch, tokens, hidden), of int id / 0-1 mask arrays."""
        import numpy as np

        batch, length = ids.shape
        x = (
            self._w("embeddings.word_embeddings.weight")[ids]
            + self._w("embeddings.position_embeddings.weight")[:length][None, :, :]
            + self._w("embeddings.token_type_embeddings.weight")[0][None, None, :]
        )
        x = _layer_norm(
            x,
            self._w("embeddings.LayerNorm.weight"),
            self._w("embeddings.LayerNorm.bias"),
            self.eps,
        )
        head = self.dimensions // self.heads
        blocked = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def dense(v: Any, name: str, prefix: str = p) -> Any:
                # one (batch * tokens) x in matrix product: a single BLAS call
                flat = v.reshape(-1, v.shape[-1]) @ self._w(prefix + name + ".weight").T
                flat += self._w(prefix + name + ".bias")
                return flat.reshape(*v.shape[:-1], -1)

            def split(v: Any) -> Any:
                return v.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(head)) + blocked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attention = scores / scores.sum(axis=-1, keepdims=True)
            context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.dimensions)
            x = _layer_norm(
                x + dense(context, "attention.output.dense"),
                self._w(p + "attention.output.LayerNorm.weight"),
                self._w(p + "attention.output.LayerNorm.bias"),
                self.eps,
            )
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(
                x + dense(inner, "output.dense"),
                self._w(p + "output.LayerNorm.weight"),
                self._w(p + "output.LayerNorm.bias"),
                self.eps,
            )
        return x.astype(np.float32)

    def sentence_vectors(self, ids: Any, mask: Any, *, normalise: bool = True) -> Any:
        """Attention-mask mean of the last hidden states, L2-normalised when asked."""
        import numpy as np

        hidden = self.hidden_states(ids, mask)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if not normalise:
            return pooled
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
