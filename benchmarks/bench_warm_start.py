"""Does a fixed warm LSTM state beat the zero state for sentences embedded one by one?

    python -m benchmarks.bench_warm_start MODEL_DIR heldout.txt [--sentences 2000]

MODEL_DIR is a pretraining output directory (options, weights, softmax, vocabulary). Each held-out
sentence (one whitespace-tokenized sentence per line) is scored on its own, the forward LM predicting
w_1..w_n, </S> from <S>, w_1..w_n and the backward LM w_n..w_1, <S> from </S>, w_n..w_1, starting from:
- zero: the zero state, this package's default (a sentence's vectors never depend on anything else);
- warm: one fixed state per direction, the state after reading other text (`--warm-sentences` sentences
  of the held-out file's end, streamed as in training), the same for every sentence, so still
  deterministic;
- carried: the original's stateful mode, each sentence starting where the previous one ended.
Perplexity (full softmax) is the language model's own measure of how well the states serve it.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import torch

from benchmarks.common import machine
from spacy_elmo.elmo.nn.chars import BOS_TOKEN, EOS_TOKEN
from spacy_elmo.elmo.pretrain.export import load_language_model

State = List[Tuple[torch.Tensor, torch.Tensor]]


def read(path: Path) -> List[List[str]]:
    return [line.split() for line in path.read_text(encoding="utf8").splitlines() if line.split()]


def run(model, tokens: List[str], direction: int, state: Optional[State]) -> Tuple[torch.Tensor, State]:
    """Top-layer outputs `[n, P]` of one direction over `tokens`, and the final state."""
    bilm = model.bilm
    ids = torch.from_numpy(np.stack([bilm.char_mapper.token_ids(t) for t in tokens]))
    x = bilm.char_encoder.encode_rows(ids).unsqueeze(0).unsqueeze(0)  # [1, 1, n, P]
    if state is None:
        state = bilm.lstm.zero_states(1, x, 1)
    outputs, finals = bilm.lstm(x, [len(tokens)], state, slice(direction, direction + 1))
    return outputs[-1][0, 0], finals


def sentence_losses(model, vocab, words: List[str], states: List[Optional[State]]) -> Tuple[float, float, List[State]]:
    """Summed forward and backward losses of one sentence, and the final states."""
    totals, finals = [], []
    for direction, (inputs, targets) in enumerate(
        (
            ([BOS_TOKEN, *words], [*words, EOS_TOKEN]),
            ([EOS_TOKEN, *reversed(words)], [*reversed(words), BOS_TOKEN]),
        )
    ):
        hidden, final = run(model, inputs, direction, states[direction])
        losses = model.softmax.full_loss(hidden, torch.tensor(vocab.ids(targets)))
        totals.append(float(losses.sum()))
        finals.append(final)
    return totals[0], totals[1], finals


def warm_states(model, warm: List[List[str]]) -> List[State]:
    """Each direction's state after streaming `warm` as in training (no </S> input forward, no <S>
    input backward), ready for the next sentence's first input."""
    forward = [t for s in warm for t in [BOS_TOKEN, *s]]
    backward = [t for s in reversed(warm) for t in [EOS_TOKEN, *reversed(s)]]
    return [run(model, forward, 0, None)[1], run(model, backward, 1, None)[1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("heldout", type=Path)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--warm-sentences", type=int, default=50)
    args = parser.parse_args()
    print(machine(), flush=True)
    model, vocab = load_language_model(args.model_dir)
    sentences = read(args.heldout)
    scored, warm_text = sentences[: args.sentences], sentences[-args.warm_sentences :]
    with torch.inference_mode():
        warm = warm_states(model, warm_text)
        results = {}
        for name in ("zero", "warm", "carried"):
            sums = [0.0, 0.0]
            count = 0
            carried: List[Optional[State]] = [None, None]
            for words in scored:
                start = {"zero": [None, None], "warm": warm, "carried": carried}[name]
                fwd, bwd, finals = sentence_losses(model, vocab, words, start)
                carried = finals
                sums[0] += fwd
                sums[1] += bwd
                count += len(words) + 1
            results[name] = (
                math.exp(sums[0] / count),
                math.exp(sums[1] / count),
                math.exp((sums[0] + sums[1]) / (2 * count)),
            )
    print(f"{len(scored)} sentences of {args.heldout.name}, scored one by one; model {args.model_dir}")
    print(f"{'initial state':>14} {'forward':>9} {'backward':>9} {'average':>9}")
    for name, (fwd, bwd, avg) in results.items():
        print(f"{name:>14} {fwd:>9.1f} {bwd:>9.1f} {avg:>9.1f}")


if __name__ == "__main__":
    main()
