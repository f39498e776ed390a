"""What storing a biLM's weights as float16 costs: the file's size against float32, and how far the
vectors move when the float16 file is loaded (the loader widens every dataset to float32).

    python -m benchmarks.bench_float16_weights                     # the bundled default
    python -m benchmarks.bench_float16_weights --options O --weights W --tokens 5000

Every layer of `--tokens` tokens of the sample text, from the float32 file and from its float16 copy:
the largest absolute difference, the largest relative to the layer's largest value, and the smallest
cosine between a token's two vectors; and whether each of the demo's "bank" sentences keeps its nearest
other sentence (top layer, as the demo shows it). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import h5py
import numpy as np

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine
from spacy_elmo.cli.demo import SENTENCES, nearest_others
from spacy_elmo.elmo.sources import DEFAULT_MODEL, bundled_model_paths, load_bilm


def write_float16(source: Path, target: Path) -> None:
    """A copy of an hdf5 weights file with every floating-point dataset stored as float16."""
    with h5py.File(source, "r") as src, h5py.File(target, "w") as dst:

        def copy(name: str, item: Any) -> None:
            if isinstance(item, h5py.Dataset):
                data = item[()]
                dst.create_dataset(name, data=data.astype(np.float16) if data.dtype.kind == "f" else data)

        src.visititems(copy)


def bank_nearest(layers: List[np.ndarray], sentences: List[List[str]]) -> List[int]:
    top = np.stack([layer[-1, words.index("bank")] for layer, words in zip(layers, sentences)])
    unit = top / np.linalg.norm(top, axis=1, keepdims=True)
    return nearest_others((unit @ unit.T).tolist())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--options", type=Path, default=None)
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--tokens", type=int, default=5000)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    args = parser.parse_args()
    options, weights = (args.options, args.weights) if args.weights else bundled_model_paths(DEFAULT_MODEL)
    sentences = load_sentences(args.text, args.tokens)
    banks = [sentence.rstrip(".").split() for sentence in SENTENCES]
    with tempfile.TemporaryDirectory() as tmp:
        half = Path(tmp) / "weights16.hdf5"
        write_float16(Path(weights), half)
        runs = {}
        for name, path in (("float32", Path(weights)), ("float16", half)):
            bilm = load_bilm(options, path)
            runs[name] = (bilm.embed(sentences), bilm.embed(banks), path.stat().st_size)
    (full, full_banks, full_bytes), (rounded, rounded_banks, half_bytes) = runs["float32"], runs["float16"]
    result: Dict[str, Any] = {"machine": machine(), "weights": str(weights), "tokens": sum(map(len, sentences))}
    result["bytes"] = {"float32": full_bytes, "float16": half_bytes}
    for layer in range(full[0].shape[0]):
        a = np.concatenate([x[layer] for x in full])
        b = np.concatenate([x[layer] for x in rounded])
        cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        result[f"layer {layer}"] = {
            "max_abs_diff": float(np.abs(a - b).max()),
            "max_rel_diff": float(np.abs(a - b).max() / np.abs(a).max()),
            "min_cosine": float(cosine.min()),
        }
    result["bank_nearest"] = {"float32": bank_nearest(full_banks, banks), "float16": bank_nearest(rounded_banks, banks)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
