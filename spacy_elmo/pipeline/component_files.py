"""What a saved `elmo` component holds, field by field: `cfg`, the vocab, the biLM layer (`model`) and the
pooling layer (`pooling`).

The pooling layer is kept because a ScalarMix started from a TF-Hub module (`start_from`) holds the
module's mix, which its config would read from the module again, and a saved pipeline must load where
the module is not; a pipeline saved before it was kept has none and keeps the pooling its config builds.
On disk `cfg`, `model` and `pooling` are written beside and renamed: spaCy rewrites a saved pipeline in
place (`spacy train`'s model-best and model-last), and a kill mid-write must leave the previous files
whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Iterable

import srsly
from spacy.pipeline import TrainablePipe
from spacy.util import from_bytes, to_bytes, to_disk
from thinc.api import Model

from ..util.io import atomic_output

POOLING = "pooling"


def component_to_bytes(pipe: TrainablePipe, pooling: Model, exclude: Iterable[str]) -> bytes:
    fields: Dict[str, Callable[[], Any]] = {
        "cfg": lambda: srsly.json_dumps(pipe.cfg),
        "vocab": lambda: pipe.vocab.to_bytes(exclude=exclude),
        "model": pipe.model.to_bytes,
        POOLING: pooling.to_bytes,
    }
    return to_bytes(fields, exclude)


def component_from_bytes(pipe: TrainablePipe, pooling: Model, data: bytes, exclude: Iterable[str]) -> None:
    fields: Dict[str, Callable[[Any], Any]] = {
        "cfg": lambda b: pipe.cfg.update(srsly.json_loads(b)),
        "vocab": lambda b: pipe.vocab.from_bytes(b, exclude=exclude),
        "model": pipe.model.from_bytes,
        POOLING: pooling.from_bytes,  # skipped where the bytes have no such field
    }
    from_bytes(data, fields, exclude)


def component_to_disk(pipe: TrainablePipe, pooling: Model, path: Any, exclude: Iterable[str]) -> None:
    fields: Dict[str, Callable[[Path], Any]] = {
        "cfg": lambda p: _replace_file(p, (srsly.json_dumps(pipe.cfg, indent=2) + "\n").encode("utf8")),
        "vocab": lambda p: pipe.vocab.to_disk(p, exclude=exclude),
        "model": lambda p: _replace_file(p, pipe.model.to_bytes()),
        POOLING: lambda p: _replace_file(p, pooling.to_bytes()),
    }
    to_disk(path, fields, exclude)


def read_pooling(pooling: Model, path: Any, exclude: Iterable[str]) -> None:
    """The saved pooling layer's parameters, where the component's folder has them."""
    saved = Path(path) / POOLING
    if POOLING not in exclude and saved.is_file():
        pooling.from_bytes(saved.read_bytes())


def _replace_file(path: Path, data: bytes) -> None:
    """`path` holds `data` or, if writing is cut short, what it held before."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
