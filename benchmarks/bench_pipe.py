"""`nlp.pipe` with the `elmo` component against the raw biLM on the same text, and a long document.

    python benchmarks/bench_pipe.py                      # original size, 3000 tokens of real English
    python benchmarks/bench_pipe.py --size small --tokens 5000

Random weights at a published size, written once to a temporary directory. Docs come in arbitrary
(shuffled) order; `nlp.pipe` runs with its default batch size. The raw figure is `BiLM.embed` on the same
sentences at batch 64 (each run starts with an empty token cache). The long-document figure embeds one
doc of `--long-tokens` tokens without sentence boundaries in a fresh subprocess and prints its peak memory
above the loaded pipeline. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_TEXT, current_rss_mb, load_sentences, peak_rss_mb  # noqa: E402

from spacy_elmo import BiLM, preset, save_weights  # noqa: E402


def write_model(size: str, directory: Path) -> None:
    torch.manual_seed(0)
    bilm = BiLM(preset(size))
    bilm.options.to_file(directory / "options.json")
    save_weights(bilm, directory / "weights.hdf5")


def make_nlp(directory: Path):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v1",
                                           "options": str(directory / "options.json"),
                                           "weights": str(directory / "weights.hdf5")}})
    nlp.initialize()
    return nlp


def long_doc(directory: Path, n_tokens: int, text: Path) -> None:
    """Child process: peak memory of one long doc, above the loaded pipeline."""
    from spacy.tokens import Doc

    nlp = make_nlp(directory)
    words = [w for s in load_sentences(text, n_tokens) for w in s][:n_tokens]
    nlp(Doc(nlp.vocab, words=words[:50]))
    base = current_rss_mb()
    start = time.perf_counter()
    doc = nlp(Doc(nlp.vocab, words=words))
    seconds = time.perf_counter() - start
    print(json.dumps({"tokens": len(doc), "seconds": seconds, "base_mb": base, "peak_mb": peak_rss_mb()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="original", choices=["small", "medium", "original"])
    parser.add_argument("--tokens", type=int, default=3000)
    parser.add_argument("--long-tokens", type=int, default=20000)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--long-doc", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.long_doc:
        long_doc(args.long_doc, args.long_tokens, args.text)
        return
    from spacy.tokens import Doc

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        write_model(args.size, directory)
        sentences = load_sentences(args.text, args.tokens, seed=2)
        n = sum(len(s) for s in sentences)
        nlp = make_nlp(directory)
        bilm = nlp.get_pipe("elmo").model.layers[0].shims[0]._model.bilm
        warm = load_sentences(args.text, 200, seed=3)
        bilm.embed(warm)
        list(nlp.pipe([Doc(nlp.vocab, words=s) for s in warm]))

        bilm.clear_caches()
        start = time.perf_counter()
        bilm.embed(sentences, batch_size=64)
        raw = n / (time.perf_counter() - start)

        docs = [Doc(nlp.vocab, words=s) for s in sentences]
        bilm.clear_caches()
        start = time.perf_counter()
        for _ in nlp.pipe(docs):
            pass
        piped = n / (time.perf_counter() - start)
        print(f"{args.size}: {n} tokens in {len(sentences)} sentences, shuffled order")
        print(f"  BiLM.embed, batch 64:           {raw:8.1f} tokens/s")
        print(f"  nlp.pipe with the elmo component: {piped:6.1f} tokens/s ({piped / raw - 1:+.0%} vs raw)")

        out = subprocess.run([sys.executable, __file__, "--long-doc", str(directory), "--long-tokens",
                              str(args.long_tokens), "--text", str(args.text)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  one doc of {r['tokens']} tokens, no sentence boundaries: {r['seconds']:.1f} s, "
              f"peak {r['peak_mb'] - r['base_mb']:.0f} MB above the loaded pipeline ({r['peak_mb']:.0f} MB in all)")


if __name__ == "__main__":
    main()
