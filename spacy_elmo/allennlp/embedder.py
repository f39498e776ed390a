"""AllenNLP 0.9's `ElmoEmbedder` (`allennlp.commands.elmo`, removed in 1.0) over this package's biLM:
every layer of each sentence as NumPy `[L+1, n_tokens, dim]`, and `embed_file`'s HDF5 layout, one
dataset per sentence (keyed by its line index, or the sentence itself with `use_sentence_keys`) and a
`sentence_to_index` dataset holding a JSON string unless `forget_sentences`.

Stateful by default, as AllenNLP's was: `embed_sentences` and `embed_file` batch consecutive sentences
and row i of a batch starts from the state row i of the previous batch ended with, so a sentence's
vectors depend on the sentences before it in the same rows. `stateful=False` makes each sentence's
vectors its own; `reset_states()` forgets the carried states once. Batches from several threads take
turns, as `Elmo`'s calls do (elmo.StateLock).
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import IO, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import h5py
import numpy as np
import torch

from ..elmo.errors import InputError
from ..elmo.nn.chars import refuse_strings
from ..elmo.util.io import atomic_output, text_lines
from .elmo import PathLike, StateLock, load_for_allennlp

DEFAULT_BATCH_SIZE = 64
OUTPUT_FORMATS = ("all", "top", "average")


class ElmoEmbedder:
    """The biLM's layers for tokenized sentences. `options_file` may name a downloaded or bundled
    model (weight_file None); `cuda_device` >= 0 runs on that GPU."""

    def __init__(
        self,
        options_file: PathLike = "allennlp-original",
        weight_file: Optional[PathLike] = None,
        cuda_device: int = -1,
        *,
        stateful: bool = True,
    ) -> None:
        self.bilm = load_for_allennlp(options_file, weight_file)
        if cuda_device >= 0:
            if cuda_device >= torch.cuda.device_count():
                raise InputError(
                    f"cuda_device={cuda_device} but torch sees {torch.cuda.device_count()} CUDA devices: "
                    "give one of them, or -1 for the CPU"
                )
            self.bilm.to(torch.device("cuda", cuda_device))
        self.cuda_device = cuda_device
        self.stateful = stateful
        self._state_lock = StateLock()

    def reset_states(self) -> None:
        """Forget the states carried from earlier batches."""
        with self._state_lock:  # not halfway through another thread's call, which would store its states after
            self.bilm.reset_states()

    def _empty(self) -> np.ndarray:
        return np.zeros((self.bilm.n_layers, 0, self.bilm.output_dim), dtype=np.float32)

    def batch_to_embeddings(self, batch: List[List[str]]) -> Tuple[torch.Tensor, torch.Tensor]:
        """Activations `[batch, L+1, timesteps, dim]` and mask `[batch, timesteps]` (long, as 0.9's)."""
        return self._embeddings(batch, "batch_to_embeddings")

    def _embeddings(self, batch: List[List[str]], caller: str) -> Tuple[torch.Tensor, torch.Tensor]:
        refuse_strings(batch, caller)
        if not batch:
            layers = torch.zeros(0, self.bilm.n_layers, 0, self.bilm.output_dim, device=self.bilm.device)
            return layers, torch.zeros(0, 0, dtype=torch.long, device=self.bilm.device)
        with self._state_lock.held_for(self.stateful), torch.no_grad():
            output = self.bilm.forward_sentences(batch, stateful=self.stateful)
        return output.layers.transpose(0, 1), output.mask.long()

    def embed_sentence(self, sentence: List[str]) -> np.ndarray:
        """One sentence's `[L+1, n_tokens, dim]`."""
        return self._embed_batch([sentence], "embed_sentence")[0]

    def embed_batch(self, batch: List[List[str]]) -> List[np.ndarray]:
        """Each sentence's `[L+1, n_tokens, dim]`; an empty sentence gives `[L+1, 0, dim]`, an empty
        batch an empty list."""
        return self._embed_batch(batch, "embed_batch")

    def _embed_batch(self, batch: List[List[str]], caller: str) -> List[np.ndarray]:
        if batch == [[]]:
            return [self._empty()]
        embeddings, mask = self._embeddings(batch, caller)
        lengths = mask.sum(dim=1).tolist()
        layers = embeddings.cpu().numpy()
        return [layers[i, :, :length].copy() if length else self._empty() for i, length in enumerate(lengths)]

    def embed_sentences(
        self, sentences: Iterable[List[str]], batch_size: int = DEFAULT_BATCH_SIZE
    ) -> Iterator[np.ndarray]:
        """`embed_batch` over consecutive groups of `batch_size` sentences, lazily."""
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if isinstance(sentences, str):  # not a stream of sentences, but one sentence's characters
            refuse_strings(sentences, "embed_sentences")
        sentences = iter(sentences)
        while batch := list(islice(sentences, batch_size)):
            yield from self._embed_batch(batch, "embed_sentences")

    def embed_file(
        self,
        input_file: Union[IO[str], PathLike],
        output_file_path: PathLike,
        output_format: str = "all",
        batch_size: int = DEFAULT_BATCH_SIZE,
        forget_sentences: bool = False,
        use_sentence_keys: bool = False,
    ) -> None:
        """Embed each line of `input_file` (an open text file or a path; whitespace-tokenized, no blank
        lines) into `output_file_path`: `all` layers `[L+1, n, dim]`, the `top` one or their `average`
        `[n, dim]`, float32. The file is written whole or not at all."""
        if output_format not in OUTPUT_FORMATS:
            raise InputError(f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}")
        lines = text_lines(input_file, "input") if isinstance(input_file, (str, Path)) else input_file
        sentences = [line.strip() for line in lines]
        blank = [i for i, line in enumerate(sentences) if not line]
        if blank:
            raise InputError(
                f"input file has empty lines (line indexes {blank[:10]}{' ...' if len(blank) > 10 else ''}): "
                "remove them, one sentence per line (nothing was written)"
            )
        if use_sentence_keys:
            _check_sentence_keys(sentences)
        embedded = self.embed_sentences((s.split() for s in sentences), batch_size)
        sentence_to_index: Dict[str, str] = {}
        with atomic_output(output_file_path) as tmp_path, h5py.File(tmp_path, "w") as out:
            for i, (sentence, layers) in enumerate(zip(sentences, embedded)):
                key = sentence if use_sentence_keys else str(i)
                out.create_dataset(key, data=_select(layers, output_format), dtype="float32")
                if not forget_sentences and not use_sentence_keys:
                    sentence_to_index[sentence] = key
            if not forget_sentences and not use_sentence_keys:
                index = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
                index[0] = json.dumps(sentence_to_index)


def _select(layers: np.ndarray, output_format: str) -> np.ndarray:
    if output_format == "top":
        return layers[-1]
    if output_format == "average":
        return layers.mean(axis=0)
    return layers


def _check_sentence_keys(sentences: List[str]) -> None:
    """Sentences as HDF5 names must be distinct and plain: `/` nests groups, `.` alone is the file."""
    seen: Dict[str, int] = {}
    for i, sentence in enumerate(sentences):
        if "/" in sentence or sentence == ".":
            raise InputError(
                f"line {i} ({sentence[:60]!r}) cannot be an HDF5 dataset name ('/' or '.'): leave "
                "use_sentence_keys off to key datasets by line index (nothing was written)"
            )
        if sentence in seen:
            raise InputError(
                f"lines {seen[sentence]} and {i} hold the same sentence, so use_sentence_keys would write one "
                "key twice: leave use_sentence_keys off to key datasets by line index (nothing was written)"
            )
        seen[sentence] = i
