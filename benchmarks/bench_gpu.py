"""GPU speed: inference tokens/s of the original size at batch 1, 32 and 128 (random weights, real
sentences) and pretraining tokens/s of the `small` preset, fp32 and with TF32 + bf16 + prefetching.
Each figure comes with the fraction of the device's peak (fp32 and TF32, from nominal FLOPs per token)
and how busy the GPU was.

    python -m benchmarks.bench_gpu $SPACY_ELMO_DATA/pretrain/gutenberg/train   # one-sentence-per-line .txt files
    python -m benchmarks.bench_gpu DIR --device cpu --tiny   # the same code at the tiny size: seconds, CI
    python -m benchmarks.bench_gpu DIR --variants   # tests/device/test_gpu.py, then every candidate side by side
    python -m benchmarks.bench_gpu DIR --variants --time-limit 360   # the same, ending within six minutes

About two minutes on an H100. Prints figures; asserts nothing (the GPU's correctness: tests/device/test_gpu.py).
With `--variants` it first runs tests/device/test_gpu.py under torch's defaults, then times every candidate of
benchmarks/variants.py against the plain path of its kind, at each batch size, in one table.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch
from torch._dynamo.utils import counters

from benchmarks.common import (
    DEFAULT_TEXT,
    flops_per_token,
    load_sentences,
    machine,
    preset_settings,
    pretraining_flops_per_token,
    softmax_rows,
)
from benchmarks.variants import INFERENCE, PRETRAINING, VARIANTS, Setup, of_kind
from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.pretrain import build_vocabulary, count_tokens
from spacy_elmo.elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.distributed import Context
from spacy_elmo.elmo.pretrain.shards import shard_paths
from spacy_elmo.elmo.pretrain.trainer import Trainer

REPO = Path(__file__).resolve().parent.parent
# Dense peak FLOP/s (fp32 on the CUDA cores, TF32 on the tensor cores) by a part of the device's name.
PEAKS: Dict[str, Tuple[float, float]] = {
    "H100 80GB HBM3": (67e12, 495e12),
    "H100 SXM": (67e12, 495e12),
    "H200": (67e12, 495e12),
}


@dataclass
class Size:
    """How much to measure: the full figures, or the tiny run that checks the code in seconds."""

    options: str
    pretrain_config: str
    batch_sizes: Tuple[int, ...]
    min_sentences: int
    steps: int
    log_every: int
    units: int  # batches (or steps) timed per candidate with --variants
    pretrain_batch_sizes: Tuple[int, ...]  # sequences a step, for the pretraining candidates

    @property
    def pretrain_preset(self) -> str:
        return self.pretrain_config.removeprefix("pretrain_").removesuffix(".cfg")


FULL = Size("original", "pretrain_small.cfg", (1, 32, 128), 64, 60, 10, 8, (128, 1024))
TINY = Size("tiny", "pretrain_tiny.cfg", (1, 4), 8, 4, 2, 2, (2,))


def peaks(device: torch.device) -> Optional[Tuple[float, float]]:
    """(fp32, TF32) peak FLOP/s of the device, None where the table does not know it (any CPU)."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for key, peak in PEAKS.items() if key in name), None)


class BusyMeter:
    """The GPU's mean utilisation (%) while the block runs, sampled every 0.1 s from NVML through
    torch.cuda.utilization, else nvidia-smi; None where neither answers (a CPU, no driver tools).
    Samples carry the wall-clock time, so a part of the block can be reported (`figure(span)`): a
    pretraining run's timed steps without its compiling."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.samples: List[Tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> Optional[float]:
        try:
            return float(torch.cuda.utilization(self.device))
        except Exception:  # no pynvml or no NVML: torch raises several kinds; nvidia-smi may still answer
            pass
        if shutil.which("nvidia-smi") is None:
            return None
        index = self.device.index if self.device.index is not None else torch.cuda.current_device()
        query = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", f"--id={index}"]
        result = subprocess.run(query, capture_output=True, text=True)
        return float(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip() else None

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            value = self._read()
            if value is None:
                return
            self.samples.append((time.time(), value))

    def __enter__(self) -> "BusyMeter":
        if self.device.type == "cuda":
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def figure(self, span: Optional[Tuple[float, float]] = None) -> str:
        values = [v for t, v in self.samples if span is None or span[0] <= t <= span[1]]
        return f"{sum(values) / len(values):.0f}%" if values else "n/a"


def line(
    name: str,
    device: torch.device,
    tokens_per_s: float,
    flops: float,
    busy: BusyMeter,
    span: Optional[Tuple[float, float]] = None,
) -> str:
    """One figure: tokens/s, the fraction of the fp32 and the TF32 peak, and how busy the GPU was
    (over `span` of the wall clock where given)."""
    peak = peaks(device)
    rate = tokens_per_s * flops
    fractions = "n/a" if peak is None else f"{rate / peak[0]:.1%} / {rate / peak[1]:.1%}"
    return f"{name:<64} {tokens_per_s:>12,.0f} tokens/s   peak fp32/TF32 {fractions:<15}   busy {busy.figure(span)}"


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def inference_speed(device: torch.device, size: Size) -> List[str]:
    torch.manual_seed(0)
    options = preset(size.options)
    bilm = BiLM(options).to(device).eval()
    n_sentences = max(max(b * 4, size.min_sentences) for b in size.batch_sizes)
    text = load_sentences(DEFAULT_TEXT, n_sentences * 40)
    text = [text[i % len(text)] for i in range(n_sentences)]
    results = []
    for batch_size in size.batch_sizes:
        subset = text[: max(batch_size * 4, size.min_sentences)]
        bilm.embed(subset[:batch_size], batch_size=batch_size)  # warm-up
        synchronize(device)
        with BusyMeter(device) as busy:
            start = time.perf_counter()
            bilm.embed(subset, batch_size=batch_size)
            synchronize(device)
            seconds = time.perf_counter() - start
        speed = sum(len(s) for s in subset) / seconds
        results.append(
            line(f"inference {size.options}, batch {batch_size}", device, speed, flops_per_token(options), busy)
        )
    return results


def corpus_paths(data: Path, vocab: Optional[Path], tmp: Path) -> Dict[str, Any]:
    """`[paths]` overrides that train on DATA: its first two .txt files (a vocabulary of their 50k most
    frequent words built into `tmp` unless `vocab` is given), or its token-id shards with `vocab`."""
    files = sorted(p for p in data.iterdir() if p.suffix == ".txt")[:2] if data.is_dir() else []
    if files:
        if vocab is None:
            vocab = tmp / "vocab.txt"
            build_vocabulary(count_tokens(files), max_size=50_000).to_file(vocab)
        train: Any = [str(f) for f in files]
    elif data.is_dir() and shard_paths(data):
        if vocab is None:
            raise SystemExit(f"{data} holds token-id shards: name their model's vocabulary with --vocab")
        train = str(data)
    else:
        raise SystemExit(f"{data} holds no .txt files (one whitespace-tokenized sentence per line) or shards")
    return {"paths.train": train, "paths.vocab": str(vocab), "paths.dev": None}  # the presets name a dev file


def pretraining_speed(corpus: Dict[str, Any], device: torch.device, size: Size) -> List[str]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, extra in (
            ("fp32", {}),
            ("tf32 + bf16 + prefetch", {"training.tf32": True, "training.bf16": True, "training.prefetch": 4}),
        ):
            out = Path(tmp) / label.replace(" ", "")
            overrides = {
                **corpus,
                "training.max_steps": size.steps,
                "logging.log_every": size.log_every,
                "logging.checkpoint_every": 1000,
                "logging.plot": False,
                **extra,
            }
            config = preset_settings(size.pretrain_preset, overrides)
            with BusyMeter(device) as busy:
                Trainer(config, out, Context(device=device), show_progress=False).run()
            logged = [r for r in MetricsLog(out / LOG_FILE).records() if r.get("event") == "train"]
            span = (logged[-2]["time"], logged[-1]["time"]) if len(logged) > 1 else None  # the last log's steps
            flops = pretraining_flops_per_token(config.options, softmax_rows(config))
            name = f"pretraining {size.pretrain_config}, {label}"
            results.append(line(name, device, logged[-1]["tokens_per_s"], flops, busy, span))
    return results


def variants_table(
    device: torch.device, size: Size, corpus: Dict[str, Any], deadline: float = float("inf")
) -> Iterator[str]:
    """Every registered candidate at each batch size: tokens/s (and its ratio to the plain path's, the
    kind's first candidate, where that was timed), the fraction of the fp32 / TF32 peak, how busy the
    GPU was, and for pretraining the mean loss of the timed steps against the plain step's (the same
    seed: point 1's 1e-4 relative). Each does its timed work once before (compiling); a workload that
    times itself (pretraining: the trainer's own rate after its warm-up) is run once. Rows come as they
    are measured, so a call cut short keeps the ones it finished; a candidate that fails gets a row
    naming the error, and the others still run.
    A candidate is started only while the time left before `deadline` (`time.monotonic()`) is at least
    what it took at the batch size before (its compiling included), or, the first time, the longest any
    candidate has taken so far; else it gets a row saying so: a session with a time limit ends on its
    own, with the rows it has, and its time left is free."""
    took: Dict[str, float] = {}
    for kind, batch_sizes in ((INFERENCE, size.batch_sizes), (PRETRAINING, size.pretrain_batch_sizes)):
        for batch_size in batch_sizes:
            base: Optional[float] = None
            base_loss: Optional[float] = None
            names = of_kind(kind)
            for name in names:
                started = time.monotonic()
                if started >= deadline or deadline - started < took.get(name, max(took.values(), default=0.0)):
                    yield f"{name}, batch {batch_size}: NOT TIMED, too little of --time-limit left"
                    continue
                skipped = cudagraph_skips()
                try:
                    setup = Setup(device, size.options, batch_size, size.pretrain_preset, corpus)
                    workload = VARIANTS[name].prepare(setup)
                    if workload.timed is None:
                        workload.run(size.units)  # the timed work once before: every shape it meets compiled
                    synchronize(device)
                    with BusyMeter(device) as busy:
                        start = time.perf_counter()
                        workload.run(size.units)
                        synchronize(device)
                        seconds = time.perf_counter() - start
                except Exception as error:  # a device-only failure must not cost the other candidates' rows
                    yield f"{name}, batch {batch_size}: FAILED, {type(error).__name__}: {str(error)[:300]}"
                    continue
                finally:
                    took[name] = time.monotonic() - started
                timed = workload.timed() if workload.timed is not None else None
                speed = timed.rate if timed is not None else workload.tokens * size.units / seconds
                if name == names[0]:
                    base, base_loss = speed, timed.loss if timed is not None else None
                ratio = f"{speed / base:.2f}x" if base else "plain path not timed"
                label = f"{name}, batch {batch_size} ({ratio})"
                row = line(label, device, speed, workload.flops_per_token, busy, timed.span if timed else None)
                if timed is not None:
                    deviation = f"{(timed.loss - base_loss) / base_loss:+.1e}" if base_loss else "plain path not timed"
                    row += f"   loss {timed.loss:.5f} ({deviation})"
                yield row + f"   graphs without CUDA graphs {cudagraph_skips() - skipped}"


def cudagraph_skips() -> int:
    """How many compiled graphs inductor has run without capturing them as CUDA graphs (a graph that
    writes an input whose address may change, or runs an operator on the CPU): none in a setting that
    is one replay per graph. Counted only on a GPU."""
    return int(counters["inductor"]["cudagraph_skips"])


def run_gpu_tests(seconds: Optional[float] = None) -> str:
    """tests/device/test_gpu.py under torch's defaults, as CI runs it, stopped after `seconds`: a line
    saying how it ended (its output is above it)."""
    try:
        status = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rfE", "tests/device/test_gpu.py"], cwd=REPO, timeout=seconds
        ).returncode
    except subprocess.TimeoutExpired:
        return f"tests/device/test_gpu.py STOPPED after {seconds:.0f} s (--time-limit); the candidates are timed"
    if status != 0:
        return "tests/device/test_gpu.py FAILED (above); the candidates are timed all the same"
    return "tests/device/test_gpu.py passed"


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"GPU: {torch.cuda.get_device_name(device)}, CUDA {torch.version.cuda}"
    return "GPU: none (measured on the CPU)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="Directory of one-sentence-per-line .txt files.")
    parser.add_argument("--device", default="cuda", help="Where to run: cuda (default), cuda:N or cpu.")
    parser.add_argument("--tiny", action="store_true", help="The tiny model and a few steps: checks the code runs.")
    parser.add_argument(
        "--variants", action="store_true", help="Run tests/device/test_gpu.py, then time every candidate (variants.py)."
    )
    parser.add_argument("--vocab", type=Path, default=None, help="The vocabulary (needed where DATA holds shards).")
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=None, help="Inference batches to time.")
    parser.add_argument("--pretrain-batch-sizes", type=int, nargs="*", default=None, help="Pretraining batches.")
    parser.add_argument(
        "--no-tests", action="store_true", help="With --variants: time without tests/device/test_gpu.py."
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="With --variants: seconds for the whole run; the GPU tests get at most a third, and a candidate "
        "that took longer at the batch before than the time left is listed as not timed (a session with a "
        "time limit ends on its own).",
    )
    args = parser.parse_args()
    if args.time_limit is not None and args.time_limit <= 0:
        parser.error(f"--time-limit must be a positive number of seconds, not {args.time_limit:g}")
    if args.time_limit is not None and not args.variants:
        parser.error("--time-limit applies to --variants only: add --variants, or leave the limit out")
    deadline = float("inf") if args.time_limit is None else time.monotonic() + args.time_limit
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: nothing to measure (--device cpu --tiny runs the same code on the CPU)")
    size = TINY if args.tiny else FULL
    if args.batch_sizes is not None:
        size = replace(size, batch_sizes=tuple(args.batch_sizes))
    if args.pretrain_batch_sizes is not None:
        size = replace(size, pretrain_batch_sizes=tuple(args.pretrain_batch_sizes))
    print(machine(), flush=True)
    print(device_name(device), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = corpus_paths(args.data, args.vocab, Path(tmp))
        if not args.variants:
            for figure in inference_speed(device, size) + pretraining_speed(corpus, device, size):
                print(figure, flush=True)
            return
        if not (args.tiny or args.no_tests):
            print(run_gpu_tests(None if args.time_limit is None else args.time_limit / 3), flush=True)
        for figure in variants_table(device, size, corpus, deadline):
            print(figure, flush=True)


if __name__ == "__main__":
    main()
