"""The biLM: char encoder + independent forward and backward LSTM stacks -> all L+1 layer activations.

Stateless by default: every row starts from the same initial state, so a sentence's vectors never depend
on the batch it is in. That state is zero unless `set_warm_start` fixes it to the state the LSTMs reach
after reading other text, which is what they saw during training (they were trained on streams carried
across sentences): benchmarks/bench_warm_start.py measures the difference. `stateful=True` reproduces
the original's behaviour (and its reference outputs): each batch row carries its final state into the
same row of the next batch, rows absent from a smaller batch or empty in this one keep theirs, and
states are detached between calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from ..errors import InputError
from ..util.validation import short_repr
from .bulk import check_token_lists, embed_sentences
from .char_encoder import CharEncoder, token_lengths
from .chars import BOS_TOKEN, EOS_TOKEN, CharacterMapper, refuse_strings
from .finite import check_finite
from .layer_choice import LayerChoice, OutputChoice
from .lstm import BiLSTMStack, State, run_directions
from .options import ElmoOptions
from .precision import fp32_scope
from .run_options import EXACT, RunOptions
from .time_loops.dispatch import stack_loop
from .token_cache import TokenEmbeddingCache

WARMUP_TEXT = Path(__file__).resolve().parent.parent / "data" / "warmup.txt"


@dataclass
class BiLMOutput:
    """`layers` `[L+1, batch, n_tokens, 2P]` with boundaries removed (unless kept: `n_tokens + 2`) and
    padding zeroed; `mask` `[batch, n_tokens]` bool."""

    layers: torch.Tensor
    mask: torch.Tensor


def reverse_within_lengths(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first `length` steps along dim 1 and leave its padding where it is."""
    time = x.shape[1]
    steps = torch.arange(time, device=x.device).unsqueeze(0)
    lengths = lengths.to(x.device).unsqueeze(1)
    index = torch.where(steps < lengths, lengths - 1 - steps, steps)
    index = index.view(*index.shape, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, index)


class BiLM(nn.Module):
    """ELMo's biLM as one torch module: token strings (or char ids) in, all L+1 layers out.

    Built from an `ElmoOptions` with bilm-tf's random initialisation; `load_bilm` / `load_weights` fill
    it from published or pretrained weights. `embed` is the convenient entry point (lists of tokens ->
    NumPy arrays); `forward_sentences` and `forward` return torch tensors on the model's device for
    training. The char-CNN output of each token string is cached at inference (see token_cache.py).

    Every call computes in full fp32 whatever torch's process-wide TF32 flags (precision.py); a call's
    `run` (run_options.py) opts into TF32 products on a GPU."""

    def __init__(self, options: ElmoOptions, dropout: float = 0.0) -> None:
        super().__init__()
        self.options = options
        lstm = options.lstm
        self.char_encoder = CharEncoder(options.char_cnn, lstm.projection_dim)
        self.lstm = BiLSTMStack(
            lstm.n_layers,
            lstm.projection_dim,
            lstm.dim,
            lstm.projection_dim,
            lstm.cell_clip,
            lstm.proj_clip,
            lstm.use_skip_connections,
            dropout,
        )
        self.char_mapper = CharacterMapper(options.char_cnn.max_characters_per_token)
        self.token_cache = TokenEmbeddingCache()
        self._token_rows_version: Tuple[int, ...] = ()
        # The initial state of stateless calls, per layer `[2, 1, dim]`; buffers, so that a saved
        # pipeline keeps it. All zero until set_warm_start.
        for i, layer in enumerate(self.lstm.layers):
            h, c = layer.zero_state(1, torch.zeros(()))
            self.register_buffer(f"initial_h_{i}", h)
            self.register_buffer(f"initial_c_{i}", c)
        self.register_buffer("warm", torch.zeros((), dtype=torch.bool))
        # The buffer on the host, so that a call never asks the device whether to start warm; read
        # again from the buffer after a load_state_dict.
        self._warm_on_host: Optional[bool] = False
        self.register_load_state_dict_post_hook(BiLM._forget_warm_on_host)
        self._states: Optional[List[State]] = None  # per layer, [2, rows, dim]

    @property
    def device(self) -> torch.device:
        """Where the parameters live: every tensor a call makes is made there."""
        return self.char_encoder.char_embed.weight.device

    @property
    def output_dim(self) -> int:
        return self.options.output_dim

    @property
    def n_layers(self) -> int:
        """L + 1 output layers."""
        return self.options.n_output_layers

    def reset_states(self) -> None:
        """Forget the states carried by stateful calls; the next batch starts cold."""
        self._states = None

    @property
    def warm_start(self) -> bool:
        if self._warm_on_host is None:
            self._warm_on_host = bool(self.warm)
        return self._warm_on_host

    @staticmethod
    def _forget_warm_on_host(module: nn.Module, incompatible_keys: Any) -> None:
        module._warm_on_host = None

    def set_warm_start(self, sentences: Optional[Sequence[Sequence[str]]] = None, run: RunOptions = EXACT) -> None:
        """Start every stateless sentence from the state each direction reaches after reading
        `sentences` (default: 50 sentences of public-domain English shipped in spacy_elmo/elmo/data/), streamed
        as in training: forward `<S> w1 .. wn <S> ...`, backward the reverse with `</S>`. Deterministic:
        the same state for every sentence."""
        if sentences is None:
            sentences = [line.split() for line in WARMUP_TEXT.read_text(encoding="utf8").splitlines() if line.split()]
        if not sentences:
            raise InputError("set_warm_start needs at least one sentence")
        forward = [t for s in sentences for t in (BOS_TOKEN, *s)]
        backward = [t for s in reversed(sentences) for t in (EOS_TOKEN, *reversed(s))]
        was_training = self.training
        self.eval()  # no dropout
        with torch.no_grad(), fp32_scope(run.tf32):
            table = self._encode_strings(forward + backward)
            n = len(forward)
            x = torch.stack([table[:n], table[n:]]).unsqueeze(1)  # [2, 1, n, P]
            _, finals = self.lstm(x, [n])
            for i, (h, c) in enumerate(finals):
                getattr(self, f"initial_h_{i}").copy_(h)
                getattr(self, f"initial_c_{i}").copy_(c)
            self.warm.fill_(True)
            self._warm_on_host = True
        self.train(was_training)

    def clear_warm_start(self) -> None:
        """Back to the zero initial state."""
        for name, buffer in self.named_buffers():
            if name.startswith("initial_"):
                buffer.zero_()
        self.warm.fill_(False)
        self._warm_on_host = False

    def clear_caches(self) -> None:
        """Drop cached token embeddings; needed whenever the char-CNN weights change."""
        self.token_cache.clear()

    def _apply(self, fn: Any, recurse: bool = True) -> "BiLM":
        # .to(), .cuda(), .half() ... all come here: cached rows and carried states would stay behind
        # on the old device or dtype.
        self.clear_caches()
        self._states = None
        return super()._apply(fn, recurse)

    def forward(
        self, char_ids: torch.Tensor, stateful: bool = False, run: RunOptions = EXACT, keep_boundaries: bool = False
    ) -> BiLMOutput:
        """char_ids `[batch, n_tokens + 2, max_chars]` with `<S>`/`</S>` included (see chars.py);
        all-zero rows are padding. `run`: how the call computes (run_options.py). `keep_boundaries`:
        the `<S>`/`</S>` positions stay in the output, for mixes that count them (AllenNLP's layer norm)."""
        # Lengths steer the loop on the host: one transfer per batch.
        lengths = (char_ids > 0).any(dim=-1).sum(dim=1).cpu().numpy()  # [batch], boundaries included
        with fp32_scope(run.tf32):
            return self._contextualize(self.char_encoder(char_ids), lengths, stateful, run, keep_boundaries)

    def forward_embedded(
        self,
        embedded: torch.Tensor,
        lengths: np.ndarray,
        stateful: bool = False,
        run: RunOptions = EXACT,
        keep_boundaries: bool = False,
    ) -> BiLMOutput:
        """`forward` from token embeddings `[batch, n_tokens + 2, P]` (boundaries included) and each
        row's length on the host (boundaries included), for a caller holding its own table of token
        embeddings (AllenNLP's `vocab_to_cache`)."""
        with fp32_scope(run.tf32):
            return self._contextualize(embedded, lengths, stateful, run, keep_boundaries)

    def forward_sentences(
        self, sentences: Sequence[Sequence[str]], stateful: bool = False, run: RunOptions = EXACT
    ) -> BiLMOutput:
        """The same as `forward` on the sentences' char ids, from token strings: each distinct string is
        encoded once per batch, and at inference taken from the token cache when it was seen before."""
        with fp32_scope(run.tf32):
            embedded, lengths = self._embed_sentences(sentences)
            return self._contextualize(embedded, lengths, stateful, run)

    def _embed_sentences(self, sentences: Sequence[Sequence[str]]) -> Tuple[torch.Tensor, np.ndarray]:
        """Token embeddings `[batch, max_len + 2, P]` with boundaries, and host-side lengths with
        boundaries."""
        positions: dict = {}
        width = max((len(s) for s in sentences), default=0) + 2
        index = np.zeros((len(sentences), width), dtype=np.int64)
        lengths = np.zeros(len(sentences), dtype=np.int64)
        for i, sentence in enumerate(sentences):
            row = [BOS_TOKEN, *sentence, EOS_TOKEN]
            index[i, : len(row)] = [positions.setdefault(t, len(positions)) for t in row]
            lengths[i] = len(row)
        tokens = list(positions)
        # Cached rows carry no gradient, so the cache serves only when no gradient is wanted.
        wants_grad = torch.is_grad_enabled() and any(p.requires_grad for p in self.char_encoder.parameters())
        if wants_grad:
            table = self._encode_strings(tokens)
        else:
            self._drop_stale_token_rows()
            table = self.token_cache.lookup(tokens, self._encode_strings)
        return table[torch.from_numpy(index).to(table.device)], lengths

    def _drop_stale_token_rows(self) -> None:
        """Cached rows are valid for the char-CNN weights they were computed with. Every in-place change
        of a parameter (an optimizer step, `load_state_dict`, a manual edit) bumps its version counter,
        so comparing the counters catches all of them; switching train/eval does not change weights
        (thinc's shim switches both ways around every prediction, which must keep the cache). Inference
        tensors (the int8 copy's, made once and never edited) keep no counter."""
        version = tuple(-1 if p.is_inference() else p._version for p in self.char_encoder.parameters())
        if version != self._token_rows_version:
            self.token_cache.clear()
            self._token_rows_version = version

    def _encode_strings(self, tokens: List[str]) -> torch.Tensor:
        ids = np.stack([self.char_mapper.token_ids(t) for t in tokens])
        return self.char_encoder.encode_rows(torch.from_numpy(ids).to(self.device), token_lengths(ids))

    def _contextualize(
        self,
        embedded: torch.Tensor,
        lengths: np.ndarray,
        stateful: bool,
        run: RunOptions = EXACT,
        keep_boundaries: bool = False,
    ) -> BiLMOutput:
        """`lengths` (boundaries included) stay on the host: they decide the loop, not the arithmetic.

        The L+1 layers are written into one tensor as they are assembled (each direction's output
        copied once into its half), and only the positions past each row's end are zeroed: stacking
        the layers and multiplying by the mask cost two more passes over the largest tensor of a
        batch, which at inference weighed as much as a tenth of a step loop's time."""
        batch, time, half = embedded.shape
        device_lengths = torch.from_numpy(np.asarray(lengths, dtype=np.int64)).to(embedded.device)
        outputs = self._run_directions(embedded, lengths, device_lengths, stateful, run)
        trim = 0 if keep_boundaries else 1  # <S> and </S> dropped unless kept
        width = max(time - 2 * trim, 0)
        start, stop = min(trim, time), min(trim, time) + width
        kept = np.maximum(np.asarray(lengths, dtype=np.int64) - 2 * trim, 0)
        layers = embedded.new_empty(1 + len(outputs), batch, width, 2 * half)
        layers[0, ..., :half] = embedded[:, start:stop]
        layers[0, ..., half:] = embedded[:, start:stop]
        for i, (forward, backward) in enumerate(outputs, 1):
            layers[i, ..., :half] = forward[:, start:stop]
            layers[i, ..., half:] = reverse_within_lengths(backward, device_lengths)[:, start:stop]
        for row in np.flatnonzero(kept < width):
            layers[:, row, kept[row] :] = 0.0
        positions = torch.arange(width, device=embedded.device).unsqueeze(0)
        mask = positions < torch.from_numpy(kept).to(embedded.device).unsqueeze(1)
        check_finite(layers, self, "activations")
        return BiLMOutput(layers=layers, mask=mask)

    def _run_directions(
        self,
        embedded: torch.Tensor,
        lengths: np.ndarray,
        device_lengths: torch.Tensor,
        stateful: bool,
        run: RunOptions = EXACT,
    ) -> List[Tuple[torch.Tensor, torch.Tensor]]:
        """Each LSTM layer's forward and backward outputs `[batch, time, P]` over the full sequence,
        boundaries included, the backward one in its own (reversed) order."""
        backward_input = reverse_within_lengths(embedded, device_lengths)
        batch = embedded.shape[0]
        if stateful:
            initial = self._initial_states(batch, embedded)
        elif self.warm_start:
            initial = [
                (
                    getattr(self, f"initial_h_{i}").expand(-1, batch, -1).contiguous(),
                    getattr(self, f"initial_c_{i}").expand(-1, batch, -1).contiguous(),
                )
                for i in range(len(self.lstm.layers))
            ]
        else:
            initial = None
        loop = stack_loop(run.time_loop, embedded.device)
        outputs, finals = run_directions(self.lstm, (embedded, backward_input), (lengths, lengths), initial, loop)
        if stateful:
            self._store_states(finals, lengths)
        return outputs

    def _initial_states(self, batch: int, like: torch.Tensor) -> List[State]:
        """Row i's carried state (zero for rows never seen), in the batch's row order."""
        states = self.lstm.zero_states(batch, like)
        if self._states is None:
            return states
        for (zero_h, zero_c), (h, c) in zip(states, self._states):
            kept = min(batch, h.shape[1])
            zero_h[:, :kept], zero_c[:, :kept] = h[:, :kept], c[:, :kept]
        return states

    def _store_states(self, finals: List[State], lengths: np.ndarray) -> None:
        """Row i keeps its final state if it held a sequence; rows beyond this batch keep theirs."""
        batch = len(lengths)
        present = torch.from_numpy(np.asarray(lengths) > 0).to(finals[0][0].device).view(1, batch, 1)
        stored = self._states or self.lstm.zero_states(batch, finals[0][0])
        new_states: List[State] = []
        for (old_h, old_c), (h, c) in zip(stored, finals):
            rows = max(old_h.shape[1], batch)
            merged = []
            for old, new in ((old_h, h), (old_c, c)):
                value = old.new_zeros(old.shape[0], rows, old.shape[2])
                value[:, : old.shape[1]] = old
                value[:, :batch] = torch.where(present, new.detach(), value[:, :batch])
                merged.append(value)
            new_states.append((merged[0], merged[1]))
        self._states = new_states

    def token_embeddings(self, char_ids: torch.Tensor, run: RunOptions = EXACT) -> torch.Tensor:
        """Context-independent embeddings `[..., P]` of char ids `[..., max_chars]`."""
        flat = char_ids.reshape(1, -1, char_ids.shape[-1])
        with fp32_scope(run.tf32):
            embedded = self.char_encoder(flat).reshape(*char_ids.shape[:-1], -1)
        check_finite(embedded, self, "token embeddings")
        return embedded

    def embed(
        self,
        sentences: Sequence[Sequence[str]],
        stateful: bool = False,
        batch_size: int = 64,
        run: RunOptions = EXACT,
        layers: LayerChoice = "all",
        pool: Optional[str] = None,
        max_batch_tokens: Optional[int] = None,
    ) -> List[np.ndarray]:
        """Each sentence's activations, float32, in input order: `[L+1, n_tokens, 2P]` by default.

        `layers`: "all", "top", "average" or L+1 weights (token layer first) for one mix `[n_tokens, 2P]`;
        `pool="mean"`: the mean over the sentence's tokens instead (`[L+1, 2P]` or `[2P]`; zeros for an
        empty sentence). Stateless (default): sentences are grouped by length so batches carry little
        padding, `batch_size` sentences at most, or with `max_batch_tokens` at most that many padded tokens
        (rows x longest row); the result does not depend on the batches or the other sentences. A batch
        out of GPU memory is halved and the call goes on (bulk.py). Stateful: batches are the consecutive
        groups of `batch_size` sentences, in order, row i carrying its state from row i of the previous
        batch, as the original does. `run`: how the calls compute (run_options.py).
        """
        check_token_lists(sentences, "embed")
        refuse_strings(sentences, "embed", fix=", or run `nlp(text)` in a pipeline with the elmo component")
        return embed_sentences(self, sentences, stateful, batch_size, run, OutputChoice(layers, pool), max_batch_tokens)

    def embed_tokens(self, words: Sequence[str]) -> np.ndarray:
        """Context-independent token embeddings `[n, P]` float32 (the char-CNN layer, before doubling)."""
        if isinstance(words, str):
            raise InputError(
                f"embed_tokens takes a list of tokens, got the string {short_repr(words)}: it would be read as one "
                f"token per character; give a list ([{short_repr(words)}] for one token, `text.split()` for a text)"
            )
        with torch.inference_mode():
            ids = self.char_mapper.batch_ids([list(words)], add_boundaries=False)[0]
            if len(words) == 0:
                return np.zeros((0, self.options.projection_dim), dtype=np.float32)
            return self.token_embeddings(torch.from_numpy(ids).to(self.device)).cpu().numpy().astype(np.float32)
