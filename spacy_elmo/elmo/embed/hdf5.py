"""A text file's biLM layers into one HDF5 file: the layout of the original's dataset dump.

One dataset per input line, named by the line's index, `[L+1, n_tokens, 2P]` float32 by default, or
what `output` keeps of it (elmo/nn/layer_choice.py) stored as `storage` says (storage.py). `dump` writes a
file this way, and so does each worker of the distributed dump (`ray_dump.py`), so a shard is the file
`dump` would write for that input alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Union

import numpy as np

from ..errors import InputError
from ..nn.bilm import BiLM
from ..nn.errors import DeviceMemoryError
from ..nn.layer_choice import OutputChoice
from ..nn.run_options import EXACT, RunOptions
from ..util.hdf5 import create_hdf5
from ..util.io import atomic_output, check_room, text_lines
from .storage import Storage

# Lines read at a time, in batches: a few batches keep memory flat however long the file is.
BATCHES_PER_BLOCK = 16


@dataclass(frozen=True)
class LayersWritten:
    """What one file's dump held: `blank_lines` of its sentences were blank lines, each written as a
    dataset of no tokens so that keys stay line indexes; said after the dump, as a blank line may be a
    mistake."""

    sentences: int
    tokens: int
    blank_lines: int = 0

    def summary(self) -> str:
        """The counts as a user reads them after a dump."""
        many = "s as empty datasets" if self.blank_lines > 1 else " as an empty dataset"
        blank = f" ({self.blank_lines} blank line{many})" if self.blank_lines else ""
        return f"{self.sentences} sentences{blank}"


def _tokenized_lines(path: Path) -> Iterator[List[str]]:
    for line in text_lines(path, "input"):
        yield line.split()


def check_has_tokens(path: Union[str, Path]) -> None:
    """An InputFileError (via `text_lines`) for a missing or non-UTF-8 file, an ElmoError for a file
    without a single token; reads only up to the first token."""
    if not any(line.split() for line in text_lines(path, "input")):
        raise InputError(
            f"input file {path} has no tokens; it needs one whitespace-tokenized sentence per "
            "line (nothing was written)"
        )


def _least_bytes(bilm: BiLM, input_path: Path, output: OutputChoice, storage: Storage) -> int:
    """The fewest bytes the input's datasets take uncompressed (HDF5's own overhead left out), from a
    first pass that keeps no line; 0 when compressed, whose size is not known before writing (the
    first failed write then stops the dump)."""
    if storage.compression is not None:
        return 0
    n_lines = n_tokens = 0
    for words in _tokenized_lines(input_path):
        n_lines += 1
        n_tokens += len(words)
    rows = n_lines if output.pool is not None else n_tokens
    layers = bilm.n_layers if output.layers == "all" else 1
    return rows * layers * bilm.output_dim * np.dtype(storage.dtype).itemsize


def write_layers(
    bilm: BiLM,
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    batch_size: int = 64,
    stateful: bool = False,
    on_block: Optional[Callable[[int], None]] = None,
    output: OutputChoice = OutputChoice(),
    storage: Storage = Storage(),
    max_batch_tokens: Optional[int] = None,
    run: RunOptions = EXACT,
) -> LayersWritten:
    """Embed every line of `input_path` (whitespace-tokenized) and write the layers to `output_path`
    atomically: the file appears complete or not at all, and a disk without room for the layers is a
    DiskFullError before the first line is embedded. `on_block(n_lines)` follows progress;
    `max_batch_tokens`: batches by padded tokens instead of `batch_size` sentences; `run`: how the calls
    compute (both as in `BiLM.embed`)."""
    check_room(output_path, _least_bytes(bilm, Path(input_path), output, storage))
    sentences = tokens = blank_lines = 0
    with atomic_output(output_path) as tmp_path, create_hdf5(tmp_path, **storage.file()) as out:
        lines = _tokenized_lines(Path(input_path))
        while block := list(islice(lines, batch_size * BATCHES_PER_BLOCK)):
            try:
                embedded = bilm.embed(
                    block,
                    stateful=stateful,
                    batch_size=batch_size,
                    layers=output.layers,
                    pool=output.pool,
                    max_batch_tokens=max_batch_tokens,
                    run=run,
                )
            except DeviceMemoryError as error:
                raise error.renamed(f"line {sentences + error.sentence + 1} of {input_path}") from None
            for layers in embedded:
                out.create_dataset(str(sentences), **storage.dataset(layers))
                sentences += 1
            tokens += sum(len(words) for words in block)
            blank_lines += sum(1 for words in block if not words)
            if on_block is not None:
                on_block(len(block))
    return LayersWritten(sentences, tokens, blank_lines)
