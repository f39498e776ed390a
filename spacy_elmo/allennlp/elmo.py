"""AllenNLP's `Elmo` module and `batch_to_ids` over this package's biLM, for code written against
`allennlp.modules.elmo`: the same arguments, the same character ids (AllenNLP's and this package's
scheme are one: elmo/nn/chars.py), the same outputs and shapes.

Stateful by default, as AllenNLP's `_ElmoBiLm` is: each batch row starts from the state the same row
ended the previous call with, so a sentence's vectors depend on what that row read before (the
published reference outputs were made this way). `stateful=False` makes every call start from the
zero state; `reset_states()` forgets the carried states once. Stateful calls from several threads take
turns (`StateLock`). The weights are read by the package's resolver, so a bundled or downloaded model's
name (`allennlp-original`) or a model directory stands for the two files; an options file needs its
weight file (AllenNLP has no untrained mode).
"""

from __future__ import annotations

import math
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import ContextManager, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn

from ..elmo.errors import InputError
from ..elmo.nn.bilm import BiLM, BiLMOutput
from ..elmo.nn.chars import BOS_TOKEN, EOS_TOKEN, CharacterMapper, refuse_strings
from ..elmo.sources import reference_to, resolve
from .scalar_mix import ScalarMix

PathLike = Union[str, Path]
# Tokens embedded at a time when caching a vocabulary: the char-CNN's activations of a whole large
# vocabulary at once would not fit in memory.
CACHE_CHUNK = 512

_MAPPER = CharacterMapper()


def batch_to_ids(batch: List[List[str]]) -> torch.Tensor:
    """AllenNLP's character ids `[batch, longest sentence, 50]` (LongTensor), without `<S>`/`</S>`
    (Elmo adds them); rows past a sentence's end are zero."""
    refuse_strings(batch, "batch_to_ids")
    return torch.from_numpy(_MAPPER.batch_ids(batch, add_boundaries=False))


def load_for_allennlp(options_file: PathLike, weight_file: Optional[PathLike]) -> BiLM:
    """The biLM of AllenNLP's two arguments, with a clear error for the URLs AllenNLP fetched itself. An
    options file alone would be an untrained biLM, random vectors that look like any others: refused (the
    resolver's `trained`), while a model name or folder with `weight_file=None` holds its weights."""
    for value in (options_file, weight_file):
        if isinstance(value, str) and value.startswith(("http://", "https://", "s3://")):
            raise InputError(
                f"{value} is a URL: spacy_elmo.allennlp reads local files and model names; download the "
                "model once (`python -m spacy_elmo download allennlp-original`, `models` lists the others) "
                "and pass its name as options_file, with weight_file=None"
            )
    model = resolve(reference_to(options_file, weight_file))
    if not model.trained:
        raise InputError(
            f"{options_file} is an options file without its weight file (weight_file=None): the biLM would be "
            "untrained, its vectors random. Give the weights (.hdf5) as weight_file, or name a model instead, "
            "with weight_file=None: a model folder, or a downloaded model's name (`python -m spacy_elmo models`)"
        )
    return model.load()


class StateLock:
    """Serializes the stateful calls of one module: each starts from the states a whole earlier call
    left, as if the threads' calls had been made one after another (in the order they got the lock).
    A lock rather than an error for a second thread: refusing would make a threaded server fail by
    timing, while serialized calls are exactly AllenNLP's stateful rule. Vectors that depend on no
    other thread's calls come from `stateful=False` or a module per thread. A copy or a pickle of the
    module gets a lock of its own (a threading.Lock cannot be copied)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def __reduce__(self) -> Tuple[type, Tuple[()]]:
        return (StateLock, ())

    def held_for(self, stateful: bool) -> ContextManager[None]:
        """The lock for a stateful call; stateless calls share no state and run side by side."""
        return self if stateful else nullcontext()


def remove_sentence_boundaries(tensor: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """`[batch, time, ...]` with `<S>`/`</S>` -> `[batch, time - 2, ...]` without, padding zeroed."""
    inner_lengths = mask.sum(dim=1) - 2
    inner_mask = torch.arange(tensor.shape[1] - 2, device=tensor.device).unsqueeze(0) < inner_lengths.unsqueeze(1)
    shape = (*inner_mask.shape, *([1] * (tensor.dim() - 2)))
    return tensor[:, 1:-1] * inner_mask.view(shape).to(tensor.dtype), inner_mask


class Elmo(nn.Module):
    """`num_output_representations` mixes of the biLM's layers, each with its own `ScalarMix`
    (`scalar_mix_parameters`: fixed pre-softmax weights instead of trained ones) and dropout.

    `requires_grad` trains the biLM's weights too. `vocab_to_cache`: token strings whose char-CNN
    embeddings are computed once, so that `forward(inputs, word_inputs)` looks them up by index
    (index 0 is padding). `keep_sentence_boundaries`: the outputs keep the `<S>`/`</S>` positions.
    A new module is in training mode (its dropout on), as in AllenNLP: call `.eval()` to embed."""

    _bos_ids: torch.Tensor
    _eos_ids: torch.Tensor
    _bos_embedding: torch.Tensor
    _eos_embedding: torch.Tensor

    def __init__(
        self,
        options_file: PathLike,
        weight_file: Optional[PathLike],
        num_output_representations: int,
        requires_grad: bool = False,
        do_layer_norm: bool = False,
        dropout: float = 0.5,
        vocab_to_cache: Optional[List[str]] = None,
        keep_sentence_boundaries: bool = False,
        scalar_mix_parameters: Optional[List[float]] = None,
        *,
        stateful: bool = True,
    ) -> None:
        super().__init__()
        if num_output_representations < 1:
            raise InputError(f"num_output_representations must be at least 1, got {num_output_representations}")
        self.bilm = load_for_allennlp(options_file, weight_file)
        self.bilm.requires_grad_(requires_grad)
        self.stateful = stateful
        self._state_lock = StateLock()
        self.keep_sentence_boundaries = keep_sentence_boundaries
        self._dropout = nn.Dropout(p=dropout)
        self._scalar_mixes: List[ScalarMix] = []
        for k in range(num_output_representations):
            mix = ScalarMix(
                self.bilm.n_layers,
                do_layer_norm=do_layer_norm,
                initial_scalar_parameters=scalar_mix_parameters,
                trainable=scalar_mix_parameters is None,
            )
            self.add_module(f"scalar_mix_{k}", mix)
            self._scalar_mixes.append(mix)
        self.register_buffer("_bos_ids", torch.from_numpy(np.array(_MAPPER.token_ids(BOS_TOKEN))), persistent=False)
        self.register_buffer("_eos_ids", torch.from_numpy(np.array(_MAPPER.token_ids(EOS_TOKEN))), persistent=False)
        self._word_embedding: Optional[nn.Embedding] = None
        if vocab_to_cache:
            self._cache_vocab(vocab_to_cache, requires_grad)

    def get_output_dim(self) -> int:
        return self.bilm.output_dim

    def reset_states(self) -> None:
        """Forget the states carried from earlier calls: the next call starts from the zero state."""
        with self._state_lock:  # not halfway through another thread's call, which would store its states after
            self.bilm.reset_states()

    def _cache_vocab(self, vocab: Sequence[str], trainable: bool) -> None:
        with torch.no_grad():
            rows = [self._token_embeddings(list(vocab[i : i + CACHE_CHUNK])) for i in range(0, len(vocab), CACHE_CHUNK)]
            boundaries = self._token_embeddings([BOS_TOKEN, EOS_TOKEN])
        self._word_embedding = nn.Embedding.from_pretrained(torch.cat(rows), freeze=not trainable, padding_idx=0)
        self.register_buffer("_bos_embedding", boundaries[0].clone(), persistent=False)
        self.register_buffer("_eos_embedding", boundaries[1].clone(), persistent=False)

    def _token_embeddings(self, tokens: List[str]) -> torch.Tensor:
        ids = torch.from_numpy(_MAPPER.batch_ids([tokens], add_boundaries=False)[0]).to(self.bilm.device)
        return self.bilm.token_embeddings(ids)

    def forward(
        self, inputs: torch.Tensor, word_inputs: Optional[torch.Tensor] = None
    ) -> Dict[str, Union[torch.Tensor, List[torch.Tensor]]]:
        """`inputs`: character ids `[batch, timesteps, 50]` (`batch_to_ids`; extra leading dimensions
        are kept; any integer dtype); `word_inputs`: `[batch, timesteps]` indices into `vocab_to_cache`.
        Returns `elmo_representations`, a list of `[batch, timesteps, dim]`, and `mask`,
        `[batch, timesteps]` bool (`timesteps + 2` for both with `keep_sentence_boundaries`); an empty
        batch gives them with no rows."""
        inputs = self._checked_ids(inputs)
        if word_inputs is not None:
            if self._word_embedding is None:
                raise InputError("word_inputs were given to an Elmo built without vocab_to_cache: build it with one")
            word_inputs = _integer_tensor(word_inputs, "word_inputs", "indices into vocab_to_cache")
            if word_inputs.dim() < 2:
                raise InputError(f"word_inputs must be [batch, timesteps], got shape {tuple(word_inputs.shape)}")
            outer, time = tuple(word_inputs.shape[:-1]), word_inputs.shape[-1]
        else:
            outer, time = tuple(inputs.shape[:-2]), inputs.shape[-2]
        rows = math.prod(outer)  # not -1: reshape cannot infer it from an empty batch
        with self._state_lock.held_for(self.stateful):
            if word_inputs is not None:
                output = self._run_cached(word_inputs.reshape(rows, time))
            else:
                output = self.bilm(
                    self._with_boundaries(inputs.reshape(rows, *inputs.shape[-2:])),
                    stateful=self.stateful,
                    keep_boundaries=True,
                )
        layers, mask = list(output.layers), output.mask
        representations = []
        for mix in self._scalar_mixes:
            mixed = mix(layers, mask)
            if not self.keep_sentence_boundaries:
                mixed, kept_mask = remove_sentence_boundaries(mixed, mask)
            else:
                kept_mask = mask
            representations.append(self._dropout(mixed).reshape(*outer, *mixed.shape[-2:]))
        return {"elmo_representations": representations, "mask": kept_mask.reshape(*outer, kept_mask.shape[-1])}

    def _checked_ids(self, inputs: torch.Tensor) -> torch.Tensor:
        """Character ids as int64 (NumPy's int32 arrays give int32 tensors, as AllenNLP takes), each an
        index into the char-CNN's embedding: a wrong id would fail deep inside torch."""
        width = self.bilm.options.char_cnn.max_characters_per_token
        inputs = _integer_tensor(inputs, "character ids", "batch_to_ids makes them")
        if inputs.dim() < 3 or inputs.shape[-1] != width:
            raise InputError(
                f"Elmo takes character ids [batch, timesteps, {width}] (batch_to_ids), got shape {tuple(inputs.shape)}"
            )
        inputs = inputs.long()  # torch's unsigned tensors but uint8 have no min or max
        rows = self.bilm.char_encoder.char_embed.num_embeddings
        if inputs.numel():
            low, high = torch.stack(torch.aminmax(inputs)).tolist()  # one transfer from a GPU
            if low < 0 or high >= rows:
                raise InputError(
                    f"character ids must lie in 0..{rows - 1}, got {low}..{high}: make them with batch_to_ids"
                )
        return inputs

    def _with_boundaries(self, ids: torch.Tensor) -> torch.Tensor:
        """`<S>` first and `</S>` right after each row's last token, as AllenNLP adds them."""
        batch, time, width = ids.shape
        lengths = (ids > 0).any(dim=-1).sum(dim=1)
        out = ids.new_zeros(batch, time + 2, width)
        out[:, 1:-1] = ids
        out[:, 0] = self._bos_ids
        out[torch.arange(batch, device=ids.device), lengths + 1] = self._eos_ids
        return out

    def _run_cached(self, word_inputs: torch.Tensor) -> BiLMOutput:
        table = self._word_embedding
        assert table is not None, "forward checks that the vocabulary was cached"
        size = table.num_embeddings
        if word_inputs.numel() and (int(word_inputs.min()) < 0 or int(word_inputs.max()) >= size):
            raise InputError(
                f"word_inputs hold indices outside vocab_to_cache (0..{size - 1}): index the same vocabulary "
                "the module was built with"
            )
        batch, time = word_inputs.shape
        lengths = (word_inputs > 0).sum(dim=1)
        embedded = table(word_inputs)
        full = embedded.new_zeros(batch, time + 2, embedded.shape[-1])
        full[:, 1:-1] = embedded
        full[:, 0] = self._bos_embedding
        full[torch.arange(batch, device=full.device), lengths + 1] = self._eos_embedding
        return self.bilm.forward_embedded(
            full, (lengths + 2).cpu().numpy(), stateful=self.stateful, keep_boundaries=True
        )


def _integer_tensor(value: object, what: str, source: str) -> torch.Tensor:
    """`value` if it is a tensor of any integer dtype; else an InputError naming `what` it should hold
    and its `source`."""
    if isinstance(value, torch.Tensor) and not (
        value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool
    ):
        return value
    got = f"a {value.dtype} tensor" if isinstance(value, torch.Tensor) else type(value).__name__
    raise InputError(
        f"Elmo takes {what} as a torch tensor of integers ({source}; torch.from_numpy for a NumPy array), got {got}"
    )
