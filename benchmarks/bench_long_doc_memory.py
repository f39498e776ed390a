"""Peak memory of one long document through the default `elmo` component, by `store_layers`.

    python -m benchmarks.bench_long_doc_memory --tokens 20000
    python -m benchmarks.bench_long_doc_memory --tokens 100000 --model gutenberg-web-2x512

Each setting runs in a process of its own: the pipeline is built and warmed up on a short doc, the
kernel's peak count is restarted (benchmarks.common.reset_peak_rss), and one doc of --tokens words of
the sample text (no sentence boundaries: windows of 256) goes through `nlp`. Printed: the peak resident
memory above what the process held just before the doc, and what the doc keeps (`doc._.elmo`'s
arrays). float16 layers should peak below float32's: their rows are stored as the biLM gives them,
never whole in float32 first. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from benchmarks.common import DEFAULT_TEXT, current_rss_mb, machine, peak_rss_since_reset_mb, reset_peak_rss

SETTINGS = {"float16": "float16", "float32": True, "none": False}


def measure(store: str, tokens: int, model: str, text: str) -> dict:
    """In this process: the peak above the start and the bytes `doc._.elmo` keeps, in MB."""
    import spacy

    nlp = spacy.blank("en")
    config = {"store_layers": SETTINGS[store]}
    if model:
        config["model"] = {"@architectures": "spacy-elmo.BiLM.v2", "name": model}
    nlp.add_pipe("elmo", config=config)
    nlp.initialize()
    words = open(text, encoding="utf8").read().split()
    long_text = " ".join(words[i % len(words)] for i in range(tokens))
    nlp("A short warm-up doc .")
    doc = nlp.make_doc(long_text)
    before = current_rss_mb()
    if not reset_peak_rss():
        raise SystemExit("cannot restart the peak count (/proc/self/clear_refs): Linux only")
    doc = nlp(doc)
    peak = peak_rss_since_reset_mb() - before
    kept = sum(array.nbytes for array in doc._.elmo.values()) / 2**20
    return {"store": store, "tokens": len(doc), "peak_mb": peak, "kept_mb": kept}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--model", default="", help="a model name (default: the component's default model)")
    parser.add_argument("--text", default=str(DEFAULT_TEXT))
    parser.add_argument("--stores", default="float32,float16,none", help="store_layers settings to run")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.tokens, args.model, args.text)))
        return
    print(machine())
    for store in args.stores.split(","):
        command = [sys.executable, "-m", "benchmarks.bench_long_doc_memory", "--child", store]
        command += ["--tokens", str(args.tokens), "--model", args.model, "--text", args.text]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        print(
            f"store_layers {store:7}: one doc of {result['tokens']:,} tokens peaks {result['peak_mb']:.0f} MB "
            f"above the process before it; doc._.elmo keeps {result['kept_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
