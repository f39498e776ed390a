"""Held-out perplexity (elmo/pretrain/perplexity.py): the tiny run ends far below the unigram model's, and its
log and plot hold every event."""

import pytest

from spacy_elmo.elmo.pretrain import unigram_perplexity
from spacy_elmo.elmo.pretrain.checkpoint import MetricsLog
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import TRAIN_TEXT, TRAIN_VOCAB


@pytest.mark.slow
def test_perplexity_falls_far_below_unigram(trained):
    out, result = trained
    unigram = unigram_perplexity(Vocabulary.from_file(TRAIN_VOCAB), TRAIN_TEXT, TRAIN_TEXT)
    assert result.heldout is not None
    assert result.heldout.average < unigram / 3, (result.heldout, unigram)
    records = list(MetricsLog(out / "log.jsonl").records())
    assert {"train", "eval", "checkpoint", "end"} <= {r["event"] for r in records}
    assert (out / "perplexity.png").stat().st_size > 1000
