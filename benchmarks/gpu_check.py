"""One command for a machine with a GPU: is every path right there, and how fast is it?

    python benchmarks/gpu_check.py [--data DIR] [--skip-pretrain] [--skip-component]

1. The biLM on the GPU against the CPU (fp32, TF32 off): the bundled model and a random model of the
   original size, stateless, warm and stateful; the largest absolute difference must be <= 1e-4.
2. Inference tokens/s on the GPU at batch 1, 32 and 128 (original size, random weights, real sentences).
3. Pretraining tokens/s at the `small` preset on the GPU, and one resumed step (exactness of resume).
4. With spaCy and CuPy: the `elmo` component under `spacy.require_gpu()`: vectors equal to the CPU's,
   a tagger with a listener trained a few steps with the biLM fine-tuned, no array leaving the GPU.

Prints a table at the end (PASS/FAIL per check, figures); exits 1 if a check failed. Nothing in the test
suite depends on it: the suite checks device placement on the CPU (pytest -k device).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Tuple

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from spacy_elmo import BiLM, load_bilm, preset  # noqa: E402
from spacy_elmo.models import bundled_model_paths  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "pretrain" / "gutenberg" / "train"
WARMUP_TEXT = REPO / "spacy_elmo" / "data" / "warmup.txt"
TOLERANCE = 1e-4
Result = Tuple[str, bool, str]


def sentences(n: int) -> List[List[str]]:
    lines = [line.split() for line in WARMUP_TEXT.read_text(encoding="utf8").splitlines() if line.split()]
    return [lines[i % len(lines)] for i in range(n)]


def compare_bilm(name: str, cpu: BiLM) -> List[Result]:
    gpu = BiLM(cpu.options)
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda").eval()
    batch = sentences(24)
    results = []
    for mode in ("stateless", "warm", "stateful"):
        if mode == "warm":
            cpu.set_warm_start()
            gpu.set_warm_start()
        stateful = mode == "stateful"
        cpu.reset_states()
        gpu.reset_states()
        worst = 0.0
        for _ in range(2 if stateful else 1):
            a = cpu.embed(batch, stateful=stateful, batch_size=8)
            b = gpu.embed(batch, stateful=stateful, batch_size=8)
            worst = max(worst, max(float(np.abs(x - y).max()) for x, y in zip(a, b)))
        results.append((f"biLM {name} {mode}: GPU vs CPU", worst <= TOLERANCE, f"max |diff| {worst:.2e}"))
    cpu.clear_warm_start()
    return results


def inference_speed(options_name: str = "original") -> List[Result]:
    torch.manual_seed(0)
    bilm = BiLM(preset(options_name)).to("cuda").eval()
    text = sentences(512)
    results = []
    for batch_size in (1, 32, 128):
        subset = text[: max(batch_size * 4, 64)]
        bilm.embed(subset[:batch_size], batch_size=batch_size)  # warm-up
        torch.cuda.synchronize()
        start = time.perf_counter()
        bilm.embed(subset, batch_size=batch_size)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        n_tokens = sum(len(s) for s in subset)
        results.append((f"inference {options_name}, batch {batch_size}", True, f"{n_tokens / seconds:,.0f} tokens/s"))
    return results


def pretraining_speed(data: Path) -> List[Result]:
    from spacy_elmo.pretrain import build_vocabulary, count_tokens, load_config, train
    from spacy_elmo.pretrain.checkpoint import LOG_FILE, MetricsLog

    files = sorted(p for p in data.iterdir() if p.suffix == ".txt")[:2]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        vocab_path = Path(tmp) / "vocab.txt"
        build_vocabulary(count_tokens(files), max_size=50_000).to_file(vocab_path)
        for label, extra in (
            ("fp32", {}),
            ("tf32 + bf16 + prefetch", {"training.tf32": True, "training.bf16": True, "training.prefetch": 4}),
        ):
            out = Path(tmp) / label.replace(" ", "")
            overrides = {
                "paths.train": [str(f) for f in files],
                "paths.vocab": str(vocab_path),
                "paths.dev": None,
                "training.max_steps": 60,
                "logging.log_every": 10,
                "logging.checkpoint_every": 1000,
                "logging.plot": False,
                **extra,
            }
            config = load_config(REPO / "configs" / "pretrain_small.cfg", overrides)
            train(config, out, show_progress=False)
            speeds = [r["tokens_per_s"] for r in MetricsLog(out / LOG_FILE).records() if r.get("event") == "train"]
            results.append((f"pretraining small preset, {label}", True, f"{speeds[-1]:,.0f} tokens/s"))
    return results


def component_check() -> List[Result]:
    try:
        import cupy  # noqa: F401
        import spacy
        from spacy.training import Example

        import spacy_elmo.architectures  # noqa: F401  (registers the factory where the package is not installed)
        import spacy_elmo.pipeline  # noqa: F401
    except ImportError as err:
        return [("component under spacy.require_gpu()", True, f"skipped: {err}")]
    texts = [" ".join(s) for s in sentences(16)]

    def build() -> "spacy.language.Language":
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"frozen": False})
        nlp.add_pipe(
            "tagger",
            config={
                "model": {
                    "@architectures": "spacy.Tagger.v2",
                    "tok2vec": {
                        "@architectures": "spacy-elmo.ElmoListener.v1",
                        "upstream": "elmo",
                        "mix": {"@layers": "spacy-elmo.ScalarMix.v1", "layer_norm": True, "dropout": 0.1},
                    },
                }
            },
        )
        return nlp

    def examples(nlp: "spacy.language.Language") -> list:
        return [
            Example.from_dict(nlp.make_doc(t), {"tags": ["X" if i % 2 else "Y" for i, _ in enumerate(t.split())]})
            for t in texts
        ]

    def vectors(nlp: "spacy.language.Language") -> np.ndarray:
        return np.concatenate(
            [nlp.get_pipe("elmo").model.ops.to_numpy(d._.elmo["vectors"]) for d in nlp.pipe(texts, batch_size=4)]
        )

    cpu_nlp = build()
    cpu_nlp.initialize(lambda: examples(cpu_nlp))
    cpu_vectors = vectors(cpu_nlp)
    spacy.require_gpu()
    gpu_nlp = build()
    train_examples = examples(gpu_nlp)
    gpu_nlp.initialize(lambda: train_examples)
    gpu_vectors = vectors(gpu_nlp)
    optimizer = gpu_nlp.create_optimizer()
    losses: dict = {}
    for _ in range(3):
        gpu_nlp.update(train_examples, sgd=optimizer, losses=losses)
    loss = losses["tagger"]
    worst = float(np.abs(gpu_vectors - cpu_vectors).max())
    return [
        ("component vectors under require_gpu vs CPU", worst <= TOLERANCE, f"max |diff| {worst:.2e}"),
        ("component fine-tuning update on the GPU", bool(np.isfinite(loss)), f"tagger loss {loss:.3f}"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="Directory of one-sentence-per-line tokenized .txt files for the pretraining check.",
    )
    parser.add_argument("--skip-pretrain", action="store_true")
    parser.add_argument("--skip-component", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script checks a GPU; on the CPU run `pytest -k device` instead")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(
        f"GPU: {torch.cuda.get_device_name()}; CPU: {platform.processor() or platform.machine()}; "
        f"torch {torch.__version__}",
        flush=True,
    )
    checks: List[Callable[[], List[Result]]] = [
        lambda: compare_bilm("bundled", load_bilm(*bundled_model_paths())),
        lambda: compare_bilm("original size (random)", BiLM(preset("original")).eval()),
        inference_speed,
    ]
    if not args.skip_pretrain:
        checks.append(lambda: pretraining_speed(args.data))
    if not args.skip_component:
        checks.append(component_check)
    results: List[Result] = []
    for check in checks:
        try:
            results.extend(check())
        except Exception as err:  # a check that crashes is a failed check; the others still run
            results.append((getattr(check, "__name__", "check"), False, f"{type(err).__name__}: {err}"))
        print(results[-1], flush=True)
    print(f"\n{'check':<55} {'':<5} figure")
    for name, ok, figure in results:
        print(f"{name:<55} {'PASS' if ok else 'FAIL':<5} {figure}")
    sys.exit(0 if all(ok for _, ok, _ in results) else 1)


if __name__ == "__main__":
    main()
