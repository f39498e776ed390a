"""Speed and deviation of the fast modes (spacy_elmo/elmo/nn/fast/int8.py) next to the exact path.

    python -m benchmarks.bench_fast                                   # small, medium, original; batch 1 and 32
    python -m benchmarks.bench_fast --model spacy_elmo/elmo/sources/models/gutenberg-web-2x512  # a trained model's
    python -m benchmarks.bench_fast --sizes original --batch-sizes 32 --tokens 3000
    python -m benchmarks.bench_fast --sizes original --threads 2 --rounds 3      # issue 69's figures
    python -m benchmarks.bench_fast --skip-speed --pipelines MODEL_DIR [...] --corpus test.spacy  # scores

Speed: random weights at the published sizes (the speed does not depend on the values), `embed` on
real English sentences after a warm-up on other sentences (so the token cache holds only what running
text would already have put there), each model timed in turn, `--rounds` times over (the best of its
rounds kept), so that a busy machine slows every mode alike (`--cold`: each pass on an empty token
cache, as for text whose words were not seen yet); "auto" is the mode `make_fast(bilm,
"auto")` chooses on this machine, named in its row. Deviation of each mode from the exact path on the top layer (the
one that moves most): max and mean absolute difference, mean and minimum cosine per token; on the
random-weight models from the same timed runs, and with `--model DIR` on that trained model
(options.json + weights.hdf5), whose clipping and saturation behave like a real model's. With
`--pipelines` (trained spaCy pipelines, such as projects/downstream's `model-best`) and `--corpus`:
each pipeline's scores (tag accuracy, entity F1) with its biLM exact and in each fast mode, and the
documents each mode changes, the heads trained on the exact biLM; then docs/fast_modes.md's rows (a
task's seeds as its pipelines, in order, on its test set).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine
from spacy_elmo import BiLM, load_bilm, preset  # noqa: E402
from spacy_elmo.elmo.nn.fast.fast_bilm import (  # noqa: E402
    AUTO,
    FAST_MODE_SETTINGS,
    FastModeUnavailable,
    make_fast,
    resolve_mode,
)
from spacy_elmo.elmo.util.machine import unit_flags  # noqa: E402


def deviation(exact: Sequence[np.ndarray], fast: Sequence[np.ndarray]) -> Dict[str, float]:
    """Top layer of every token: max and mean |exact - fast|, mean and min cosine."""
    a = np.concatenate([e[-1] for e in exact])
    b = np.concatenate([f[-1] for f in fast])
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    diff = np.abs(a - b)
    return {
        "max": float(diff.max()),
        "mean": float(diff.mean()),
        "cos": float(cos.mean()),
        "min_cos": float(cos.min()),
        "scale": float(np.abs(a).mean()),
    }


def timed_embed(model: BiLM, sentences: List[List[str]], batch_size: int):
    start = time.perf_counter()
    out = model.embed(sentences, batch_size=batch_size)
    return out, time.perf_counter() - start


def fast_models(exact: BiLM, modes: Sequence[str]) -> Dict[str, BiLM]:
    """The exact model and each mode's copy, keyed by name; "auto" as "auto:CHOICE" (the exact model
    itself when it chose none); a mode this machine cannot run is named with the reason and left out."""
    models: Dict[str, BiLM] = {"exact": exact}
    for mode in modes:
        try:
            if mode == AUTO:
                chosen = resolve_mode(exact, AUTO)
                models[f"auto:{chosen or 'exact'}"] = exact if chosen is None else make_fast(exact, chosen)
            else:
                models[mode] = make_fast(exact, mode)
        except FastModeUnavailable as error:
            print(f"{mode}: not run here: {error}", flush=True)
    return models


def deviation_header() -> str:
    return f"{'max |d|':>9} {'mean |d|':>9} {'mean cos':>9} {'min cos':>9}"


def deviation_row(d: Dict[str, float]) -> str:
    return f"{d['max']:>9.4f} {d['mean']:>9.5f} {d['cos']:>9.6f} {d['min_cos']:>9.5f}"


def bench_size(
    size: str,
    modes: Sequence[str],
    batch_sizes: Sequence[int],
    n_tokens: int,
    text: Path,
    rounds: int,
    cold: bool = False,
) -> None:
    torch.manual_seed(0)
    models = fast_models(BiLM(preset(size)).eval(), modes)
    cache = "token cache cleared before each pass" if cold else "token cache warm"
    print(f"\n{size} (random weights, {cache}); deviation of the top layer from exact, mean |exact| in brackets")
    print(f"{'batch':>6} {'mode':>10} {'tokens/s':>9} {'speedup':>8} " + deviation_header())
    for batch in batch_sizes:
        sentences = load_sentences(text, n_tokens // 4 if batch == 1 else n_tokens)
        warm = load_sentences(text, 200, seed=1)
        n = sum(len(s) for s in sentences)
        best = {name: float("inf") for name in models}
        outputs = {}
        for model in models.values():
            model.embed(warm, batch_size=batch)
        for _ in range(rounds):
            for name, model in models.items():
                if cold:
                    model.clear_caches()
                outputs[name], seconds = timed_embed(model, sentences, batch)
                best[name] = min(best[name], seconds)
        for name in models:
            row = f"{batch:>6} {name:>10} {n / best[name]:>9.1f} {best['exact'] / best[name]:>7.2f}x"
            if name != "exact":
                d = deviation(outputs["exact"], outputs[name])
                row += f" {deviation_row(d)} [{d['scale']:.3f}]"
            print(row, flush=True)


def bench_model(model_dir: Path, modes: Sequence[str], n_tokens: int, text: Path, batch_size: int) -> None:
    exact = load_bilm(model_dir / "options.json", model_dir / "weights.hdf5").eval()
    sentences = load_sentences(text, n_tokens, seed=2)
    n = sum(len(s) for s in sentences)
    lstm = exact.options.lstm
    print(
        f"\ntrained model {model_dir} ({lstm.n_layers}x{lstm.dim}, projection {lstm.projection_dim}, "
        f"cell_clip {lstm.cell_clip}, proj_clip {lstm.proj_clip}); {n} tokens at batch {batch_size}"
    )
    reference = exact.embed(sentences, batch_size=batch_size)
    print(f"{'mode':>10} " + deviation_header() + "   mean |exact|")
    for name, model in fast_models(exact, modes).items():
        if name != "exact":
            d = deviation(reference, model.embed(sentences, batch_size=batch_size))
            print(f"{name:>10} {deviation_row(d)}   {d['scale']:.3f}", flush=True)


def bench_pipeline(pipelines: Sequence[Path], corpus: Path, modes: Sequence[str]) -> None:
    """Each trained pipeline's scores on `corpus` (a .spacy file, read as `spacy evaluate` reads it) with
    its biLM exact and in each fast mode, only the biLM's `fast_mode` changed when it is loaded; and in
    how many documents a fast mode's entities or tags differ from the exact biLM's. Then the same as one
    markdown row per score and mode, the pipelines (seeds) side by side: docs/fast_modes.md's table."""
    import spacy
    from spacy.scorer import Scorer
    from spacy.training import Corpus

    table: Dict[Tuple[str, str], List[Tuple[float, int]]] = {}
    print(f"\n{'pipeline':<40} {'mode':>6} {'score':>8} {'value':>8} {'docs changed':>13} {'seconds':>8}")
    for path in pipelines:
        components = spacy.util.load_config(path / "config.cfg")["components"]
        name = next(n for n, component in components.items() if component.get("factory") == "elmo")
        exact_predictions: List[tuple] = []
        for mode in [None, *modes]:
            nlp = spacy.load(path, config={"components": {name: {"model": {"fast_mode": mode}}}})
            examples = list(Corpus(corpus)(nlp))
            started = time.perf_counter()
            for example, doc in zip(examples, nlp.pipe(example.predicted for example in examples)):
                example.predicted = doc
            seconds = time.perf_counter() - started
            scores = Scorer(nlp=nlp).score(examples)  # as nlp.evaluate scores
            predictions = [
                (tuple((e.start, e.end, e.label_) for e in ex.predicted.ents), tuple(t.tag_ for t in ex.predicted))
                for ex in examples
            ]
            if mode is None:
                exact_predictions = predictions
            changed = sum(p != q for p, q in zip(predictions, exact_predictions))
            for key in ("ents_f", "tag_acc"):
                if scores.get(key) is not None:
                    print(
                        f"{path.parent.parent.name + '/' + path.name:<40} {mode or 'exact':>6} {key:>8} "
                        f"{100 * scores[key]:8.2f} {changed:>6} of {len(examples):<5} {seconds:8.0f}",
                        flush=True,
                    )
                    table.setdefault((key, mode or "exact"), []).append((100 * scores[key], changed))
    print(f"\n| score | biLM at test | per pipeline, in order | docs changed, of {len(examples)} |\n|---|---|---|---|")
    for (key, mode), cells in table.items():
        values = " / ".join(f"{value:.2f}" for value, _ in cells)
        print(f"| {key} | {mode} | {values} | {' / '.join(str(n) for _, n in cells)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "medium", "original"])
    parser.add_argument("--modes", nargs="+", default=list(FAST_MODE_SETTINGS), choices=FAST_MODE_SETTINGS)
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds per batch size")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per measurement (batch 1 uses a quarter)")
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--model", type=Path, help="a trained model's directory: deviation measured on it too")
    parser.add_argument("--model-tokens", type=int, default=10000)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument(
        "--cold", action="store_true", help="clear the token cache before each timed pass (text not seen yet)"
    )
    parser.add_argument("--skip-speed", action="store_true", help="only the trained model's deviation")
    parser.add_argument(
        "--pipelines", nargs="+", type=Path, default=[], help="trained spaCy pipelines with an elmo component"
    )
    parser.add_argument("--corpus", type=Path, help="with --pipelines: the .spacy file they are scored on")
    args = parser.parse_args()
    if args.pipelines and not args.corpus:
        parser.error("--pipelines needs --corpus, the .spacy file to score them on")
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine(), flush=True)
    print(f"bf16 / int8 unit flags: {unit_flags()}")
    if args.model:
        bench_model(args.model, args.modes, args.model_tokens, args.text, 32)
    if args.pipelines:
        bench_pipeline(args.pipelines, args.corpus, args.modes)
    if not args.skip_speed:
        for size in args.sizes:
            bench_size(size, args.modes, args.batch_sizes, args.tokens, args.text, args.rounds, args.cold)


if __name__ == "__main__":
    main()
