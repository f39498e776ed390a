"""Output layers for pretraining: one softmax over the vocabulary, full or sampled.

The sampled softmax follows the original's recipe so that hyperparameters carry over: negatives are
drawn without repetition from a log-uniform (Zipfian) distribution over the ids, which only matches the
word frequencies when the vocabulary is sorted by descending frequency; every logit is corrected by the
log of its expected count in the sample, and a negative that happens to be a row's own target is
removed from that row. The sampled loss estimates the full one, so perplexity is always measured with
`full_loss`.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import InputError


class LogUniformSampler:
    """Distinct ids from P(k) = log((k + 2) / (k + 1)) / log(V + 1), k in [0, V)."""

    def __init__(self, n_vocab: int, n_samples: int) -> None:
        if not 0 < n_samples < n_vocab:
            raise InputError(
                f"the sampled softmax needs 0 < n_negative_samples < vocabulary size, got {n_samples} "
                f"negatives for {n_vocab} words; lower n_negative_samples or use the full softmax"
            )
        self.n_vocab = n_vocab
        self.n_samples = n_samples
        self._log_range = math.log(n_vocab + 1)

    def probability(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.double()
        return torch.log1p(1.0 / (ids + 1.0)) / self._log_range

    def expected_count(self, ids: torch.Tensor, n_tries: Union[int, torch.Tensor]) -> torch.Tensor:
        """How often `ids` are expected in a sample of `n_tries` draws that stops at n distinct ids
        (`n_tries` a one-element tensor in a compiled step, so that its value is no constant of the graph)."""
        p = self.probability(ids)
        return (-torch.expm1(n_tries * torch.log1p(-p))).float()

    def sample(self, generator: Optional[torch.Generator] = None) -> Tuple[torch.Tensor, int]:
        """`n_samples` distinct ids `[S]` and the number of draws it took, on the generator's device."""
        device = generator.device if generator is not None else torch.device("cpu")
        draws = torch.empty(0, dtype=torch.long, device=device)
        chunk = 2 * self.n_samples
        while True:
            u = torch.rand(chunk, generator=generator, dtype=torch.float64, device=device)
            new = (torch.exp(u * self._log_range).floor().long() - 1).clamp_(0, self.n_vocab - 1)
            draws = torch.cat([draws, new])
            values, inverse = torch.unique(draws, return_inverse=True)
            positions = torch.arange(len(draws), device=device)
            first = torch.full((len(values),), len(draws), dtype=torch.long, device=device)
            first = first.scatter_reduce(0, inverse, positions, reduce="amin")
            is_first = torch.zeros(len(draws), dtype=torch.bool, device=device)
            is_first[first] = True
            n_distinct = torch.cumsum(is_first, 0)
            if n_distinct[-1] >= self.n_samples:
                n_tries = int(torch.searchsorted(n_distinct, self.n_samples)) + 1
                return draws[:n_tries][is_first[:n_tries]], n_tries
            chunk *= 2


class GatherRows(torch.autograd.Function):
    """W[ids] and b[ids] whose gradients are sparse: only the gathered rows, as the original's
    IndexedSlices. With Adagrad (or plain SGD) the update is the same as from the dense gradient, whose
    other rows are zero, without materialising a `[V, dim]` gradient at every step."""

    @staticmethod
    def forward(ctx: Any, ids: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        ctx.save_for_backward(ids)
        ctx.shapes = (weight.shape, bias.shape)
        return weight[ids], bias[ids]

    @staticmethod
    def backward(ctx: Any, grad_rows: torch.Tensor, grad_bias: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        (ids,) = ctx.saved_tensors
        weight_shape, bias_shape = ctx.shapes
        index = ids.unsqueeze(0)
        return (
            None,
            torch.sparse_coo_tensor(index, grad_rows, weight_shape, check_invariants=False),
            torch.sparse_coo_tensor(index, grad_bias, bias_shape, check_invariants=False),
        )


class Softmax(nn.Module):
    """Scores `[N, dim]` hidden states against every word: W `[V, dim]`, b `[V]`."""

    def __init__(self, n_vocab: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_vocab, dim))
        self.bias = nn.Parameter(torch.zeros(n_vocab))
        nn.init.normal_(self.weight, std=1.0 / math.sqrt(dim))

    @property
    def n_vocab(self) -> int:
        return self.weight.shape[0]

    def full_loss(self, hidden: torch.Tensor, targets: torch.Tensor, chunk_size: int = 1024) -> torch.Tensor:
        """Negative log-likelihood of each target `[N]`; scored in chunks so that N x V logits never
        sit in memory at once."""
        losses = [
            F.cross_entropy(F.linear(h, self.weight, self.bias), t, reduction="none")
            for h, t in zip(hidden.split(chunk_size), targets.split(chunk_size))
        ]
        return torch.cat(losses) if losses else hidden.new_zeros(0)

    def sampled_loss(
        self,
        hidden: torch.Tensor,
        targets: torch.Tensor,
        sampler: LogUniformSampler,
        negatives: torch.Tensor,
        n_tries: Union[int, torch.Tensor],
        sparse: bool = False,
    ) -> torch.Tensor:
        """Sampled estimate of each target's loss `[N]`, the same negatives `[S]` for every row. With
        `sparse` the softmax's gradients hold only the rows of the targets and negatives."""
        if sparse:
            target_w, target_b = GatherRows.apply(targets, self.weight, self.bias)
            negative_w, negative_b = GatherRows.apply(negatives, self.weight, self.bias)
        else:
            target_w, target_b = self.weight[targets], self.bias[targets]
            negative_w, negative_b = self.weight[negatives], self.bias[negatives]
        target_logits = (hidden * target_w).sum(-1) + target_b
        target_logits = target_logits - torch.log(sampler.expected_count(targets, n_tries))
        # The count correction folded into the bias, the hits masked in place and the cross-entropy
        # written as logaddexp(target, logsumexp(negatives)) - target: the [N, S] logits are the
        # largest tensor of a step, and this makes as few passes over them as possible.
        corrected_bias = negative_b - torch.log(sampler.expected_count(negatives, n_tries))
        sampled_logits = F.linear(hidden, negative_w, corrected_bias)
        accidental = targets.unsqueeze(1) == negatives.unsqueeze(0)
        sampled_logits.masked_fill_(accidental, torch.finfo(sampled_logits.dtype).min)
        return torch.logaddexp(target_logits, torch.logsumexp(sampled_logits, dim=1)) - target_logits
