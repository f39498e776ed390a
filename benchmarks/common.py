"""Shared pieces of the benchmarks: real English sentences, FLOP counts, the machine's matmul rate."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import random
import resource
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch

from spacy_elmo.elmo.nn.options import ElmoOptions
from spacy_elmo.elmo.pretrain import load_config
from spacy_elmo.elmo.pretrain.presets import preset_config
from spacy_elmo.elmo.util.machine import cpu_name, machine

if TYPE_CHECKING:
    from spacy_elmo.elmo.pretrain import PretrainConfig

__all__ = ["cpu_name", "machine"]

# A public-domain sample kept in the repository (benchmarks/data/README.md); every benchmark takes --text.
DEFAULT_TEXT = Path(__file__).resolve().parent / "data" / "gutenberg-sample.txt"


def load_sentences(path: Path, n_tokens: int, seed: int = 0, max_len: int = 80) -> List[List[str]]:
    """Sentences of real English text, tokenized by spaCy's English tokenizer, shuffled with `seed`,
    taken until `n_tokens` tokens."""
    import spacy

    tokenizer = spacy.blank("en").tokenizer
    lines = [line.strip() for line in path.read_text(encoding="utf8").splitlines() if line.strip()]
    random.Random(seed).shuffle(lines)
    sentences: List[List[str]] = []
    total = 0
    for line in lines:
        words = [t.text for t in tokenizer(line) if not t.is_space][:max_len]
        if len(words) < 3:
            continue
        sentences.append(words)
        total += len(words)
        if total >= n_tokens:
            break
    return sentences


def flops_per_token(options: ElmoOptions) -> float:
    """Multiply-adds x 2 of one token through the biLM (both directions, all layers)."""
    cnn = options.char_cnn
    chars, emb = cnn.max_characters_per_token, cnn.embedding_dim
    conv = sum((chars - w + 1) * w * emb * n for w, n in cnn.filters)
    f = cnn.n_filters
    highway = cnn.n_highway * 2 * f * f
    proj = f * options.projection_dim if f != options.projection_dim else 0
    lstm = options.lstm
    per_layer = (
        options.projection_dim * 4 * lstm.dim  # input product
        + options.projection_dim * 4 * lstm.dim  # recurrent product
        + lstm.dim * options.projection_dim
    )  # projection
    return 2.0 * (conv + highway + proj + 2 * lstm.n_layers * per_layer)


def _gflops(product: Callable[[], object], flops: float, repeat: int) -> float:
    """GFLOP/s of `product` (`flops` per call) over `repeat` calls after one warm-up call."""
    product()
    start = time.perf_counter()
    for _ in range(repeat):
        product()
    return flops * repeat / (time.perf_counter() - start) / 1e9


def matmul_gflops(size: int = 2048, repeat: int = 10) -> float:
    """This machine's sustained fp32 matrix-multiply rate (GFLOP/s) on large square matrices."""
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    return _gflops(lambda: torch.mm(a, b), 2 * size**3, repeat)


def head_and_bilm_gflops(rows: int = 1000, n_in: int = 384, n_out: int = 288, repeat: int = 50) -> Tuple[float, float]:
    """fp32 GFLOP/s of one matrix product of a spaCy head's shape (the default tagger's hash-embedding
    Maxout: 1,000 tokens x 384 -> 96 x 3 pieces) through thinc's NumpyOps.gemm, which every spaCy
    head uses (BLIS), and through torch, which the biLM uses. Their ratio differs from CPU to CPU
    (BLIS ran 4x slower than torch on one AMD EPYC), and with it an ELMo run's time against the
    baseline's."""
    from thinc.api import NumpyOps

    ops = NumpyOps()
    x = np.random.default_rng(0).random((rows, n_in), dtype=np.float32)
    w = np.random.default_rng(1).random((n_out, n_in), dtype=np.float32)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    flops = 2 * rows * n_in * n_out
    return (
        _gflops(lambda: ops.gemm(x, w, trans2=True), flops, repeat),
        _gflops(lambda: torch.mm(tx, tw.t()), flops, repeat),
    )


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    """Resident memory of this process now (MB), from /proc (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    ]


@functools.lru_cache(maxsize=1)
def _mallinfo2() -> Optional[Callable[[], _MallInfo2]]:
    """glibc's `mallinfo2` (2.33+), looked up once (finding the C library may run `ldconfig`); None
    elsewhere."""
    try:
        info = ctypes.CDLL(ctypes.util.find_library("c")).mallinfo2
    except (OSError, AttributeError, TypeError):
        return None
    info.restype = _MallInfo2
    return info


def malloc_mb() -> Optional[Tuple[float, float]]:
    """(in use, freed but kept) by the C allocator, in MB, where it is glibc; None elsewhere. Resident
    memory is roughly the two plus code and libraries: what the program holds apart from what glibc
    keeps of freed blocks for reuse."""
    info = _mallinfo2()
    if info is None:
        return None
    m = info()
    return (m.uordblks + m.hblkhd) / 2**20, m.fordblks / 2**20


def reset_peak_rss() -> bool:
    """Restart the kernel's peak-memory count of this process (Linux: /proc/self/clear_refs), so that a
    peak measured next belongs to what runs next, not to loading; False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_since_reset_mb() -> float:
    """Peak resident memory (VmHWM) since reset_peak_rss (MB), from /proc (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def preset_settings(name: str, overrides: Optional[Dict[str, Any]] = None) -> "PretrainConfig":
    """The pretraining preset `name` (what `init-config` writes) with `overrides`, read without a file."""
    return load_config(preset_config(name), overrides, from_string=True)


def pretraining_flops_per_token(options: ElmoOptions, n_classes: int) -> float:
    """Nominal FLOPs of one step per forward target: the biLM's (char CNN counted once, as a step
    encodes each distinct token once; both directions' LSTMs) and both directions' softmax over
    `n_classes` rows (negatives or the vocabulary), forward and backward (backward about twice the
    forward)."""
    return 3.0 * (flops_per_token(options) + 2 * 2.0 * options.projection_dim * n_classes)


def softmax_rows(config: "PretrainConfig") -> int:
    """The rows each target's logits are taken over: the negatives, or the whole vocabulary."""
    from spacy_elmo.elmo.pretrain import Vocabulary

    t = config.training
    if t.softmax == "sampled":
        return t.n_negative_samples
    return len(Vocabulary.from_file(config.vocab))


def write_pretraining_corpus(directory: Path, text: Path = DEFAULT_TEXT) -> Dict[str, Any]:
    """The sample's lines as a training file and its vocabulary; the `[paths]` overrides for them."""
    from spacy_elmo.elmo.pretrain import build_vocabulary, count_tokens

    directory.mkdir(parents=True, exist_ok=True)
    train_file = directory / "train.txt"
    lines = [line.strip() for line in text.read_text(encoding="utf8").splitlines() if line.strip()]
    train_file.write_text("\n".join(lines) + "\n", encoding="utf8")
    vocab = directory / "vocab.txt"
    build_vocabulary(count_tokens([train_file])).to_file(vocab)
    return {"paths.train": [str(train_file)], "paths.vocab": str(vocab), "paths.dev": None}
