"""Held-out perplexity (elmo/pretrain/perplexity.py): the tiny run ends far below the unigram model's, and its
log and plot hold every event."""

import pytest
import torch

from spacy_elmo.elmo.pretrain import TrainingError, load_language_model, perplexity, unigram_perplexity
from spacy_elmo.elmo.pretrain.checkpoint import MetricsLog
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import TRAIN_TEXT, TRAIN_VOCAB
from tests.support.pretraining import untrained_export


@pytest.mark.slow
def test_perplexity_falls_far_below_unigram(trained):
    out, result = trained
    unigram = unigram_perplexity(Vocabulary.from_file(TRAIN_VOCAB), TRAIN_TEXT, TRAIN_TEXT)
    assert result.heldout is not None
    assert result.heldout.average < unigram / 3, (result.heldout, unigram)
    records = list(MetricsLog(out / "log.jsonl").records())
    assert {"train", "eval", "checkpoint", "end"} <= {r["event"] for r in records}
    assert (out / "perplexity.png").stat().st_size > 1000


@pytest.mark.parametrize("weight", [3e38, -3e38])
def test_a_model_whose_loss_overflows_has_no_perplexity(tmp_path, weight):
    model_dir = untrained_export(tmp_path / "model")
    model, vocab = load_language_model(model_dir)
    with torch.no_grad():
        model.softmax.weight[0, 0] = weight  # finite, but the logits overflow
    with pytest.raises(TrainingError, match="held-out loss per token is .*no perplexity to report"):
        perplexity(model, vocab, TRAIN_TEXT, batch_size=8, unroll_steps=10)
