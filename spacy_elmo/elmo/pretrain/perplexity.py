"""Held-out perplexity, measured the way the original reports it: the full softmax (never the sampled
estimate), LSTM states carried from window to window of each row, no dropout.

Each row is a stream of whole sentences, topped up whenever it runs low, so the batch size and window
length decide which sentences precede which and hence the context carried into each: the numbers move
slightly with them (the original used 256 rows of 1-token windows; longer windows are much faster).
Perplexity is exp of the mean loss per target token,
`</S>` (forward) and `<S>` (backward) included; the average is exp of the mean of the two directions'
losses, which is what the original prints as "perplexity".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Union

import torch
from tqdm import tqdm

from ..nn.chars import EOS_TOKEN, CharacterMapper
from ..nn.precision import fp32_scope
from .batching import StreamBatcher, TokenRows
from .corpus import CorpusError, corpus_stats, read_sentences
from .errors import TrainingError
from .model import LanguageModel
from .steps import HostBatch
from .vocab import Vocabulary

# math.exp overflows beyond this loss: a perplexity above 1e308 is no figure, only a broken model.
_MAX_LOSS = math.log(1e308)


@dataclass
class Perplexity:
    forward: float
    backward: float
    average: float
    n_tokens: int  # target tokens per direction

    def to_dict(self) -> dict:
        return {"forward": self.forward, "backward": self.backward, "average": self.average, "n_tokens": self.n_tokens}


def _sentences(paths: Sequence[Path]) -> Iterator[List[str]]:
    for path in paths:
        yield from read_sentences(path)


def perplexity(
    model: LanguageModel,
    vocab: Vocabulary,
    path: Union[str, Path, Sequence[Union[str, Path]]],
    batch_size: int = 64,
    unroll_steps: int = 20,
    max_tokens: Optional[int] = None,
    show_progress: bool = False,
) -> Perplexity:
    """Perplexity of both directions on text (one whitespace-tokenized sentence per line): a file, or
    several read one after the other; over the first `max_tokens` targets when given (whole windows, so
    slightly more). `show_progress`: a progress bar over the targets (the files are counted first)."""
    paths = [Path(p) for p in ([path] if isinstance(path, (str, Path)) else path)]
    for p in paths:
        if not p.is_file():
            raise CorpusError(f"evaluation file {p} does not exist")
    table = TokenRows(CharacterMapper(model.options.char_cnn.max_characters_per_token))
    forward = StreamBatcher(_sentences(paths), vocab, batch_size, unroll_steps)
    backward = StreamBatcher(_sentences(paths), vocab, batch_size, unroll_steps, reverse=True)
    total = None
    if show_progress:
        stats = corpus_stats(paths)
        total = stats.n_tokens + stats.n_sentences
        total = min(total, max_tokens) if max_tokens is not None else total
    bar = tqdm(total=total, unit="tok", unit_scale=True, desc="perplexity", disable=not show_progress)
    states = model.zero_states(batch_size)
    device = model.softmax.weight.device
    sums = torch.zeros(2, dtype=torch.float64, device=device)  # read once, at the end
    counts = [0, 0]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), fp32_scope():
            for fwd, bwd in zip(forward, backward):
                out = model(HostBatch.from_batches(fwd, bwd, table).to(device), states)
                states = out.states
                sums += out.loss_sums.double()
                counts = [counts[0] + out.counts[0], counts[1] + out.counts[1]]
                bar.update(out.counts[0])
                if max_tokens is not None and min(counts) >= max_tokens:
                    break
    finally:
        model.train(was_training)
        bar.close()
    if min(counts) == 0:
        names = ", ".join(str(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise CorpusError(f"evaluation text {names} has no tokens; it needs one whitespace-tokenized sentence per line")
    losses = [total / count for total, count in zip(sums.tolist(), counts)]
    if not all(math.isfinite(loss) and loss < _MAX_LOSS for loss in losses):
        raise TrainingError(
            f"the model's held-out loss per token is {losses[0]:.4g} (forward) and {losses[1]:.4g} (backward): "
            "its weights give NaN or overflowing scores (weights near float32's limit, or a diverged run), so "
            "there is no perplexity to report; use weights from an earlier checkpoint or fetch the model again"
        )
    return Perplexity(
        forward=math.exp(losses[0]),
        backward=math.exp(losses[1]),
        average=math.exp(sum(losses) / 2),
        n_tokens=counts[0],
    )


def unigram_perplexity(vocab: Vocabulary, train: Union[str, Path], heldout: Union[str, Path]) -> float:
    """Perplexity of a unigram model (add-one smoothed counts on `train`) on `heldout`, over the same
    targets as the forward LM: the baseline a language model has to beat."""
    counts = torch.ones(len(vocab), dtype=torch.float64)
    for sentence in read_sentences(train):
        for i in vocab.ids(sentence) + [vocab.id(EOS_TOKEN)]:
            counts[i] += 1
    log_probs = torch.log(counts / counts.sum())
    total, n = 0.0, 0
    for sentence in read_sentences(heldout):
        ids = vocab.ids(sentence) + [vocab.id(EOS_TOKEN)]
        total -= float(log_probs[ids].sum())
        n += len(ids)
    if n == 0:
        raise CorpusError(f"{heldout} has no tokens")
    return math.exp(total / n)
