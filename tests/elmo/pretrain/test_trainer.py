"""Pretraining on the tiny bilm-tf corpus (elmo/pretrain/trainer.py): learning, resume, bad input.

The model is the `tiny` preset (char dim 4, filters [[1,4],[2,8],[3,16]], 1 highway, projection
16, LSTM cell 32, full softmax): the small preset's recipe at sizes that train in seconds.
"""

import pytest
import torch

from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.pretrain import ConfigError, CorpusError, TrainingError, train, unigram_perplexity
from spacy_elmo.elmo.pretrain import (
    trainer as trainer_module,
)
from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.model import LanguageModel
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import TRAIN_TEXT, TRAIN_VOCAB
from tests.support.pretraining import tiny_pretrain_config as tiny_config

# --- training --------------------------------------------------------------------------------------


@pytest.mark.slow  # 200 training steps: minutes on a loaded 2-core CPU
def test_sampled_softmax_trains(tmp_path):
    config = tiny_config(**{"training.softmax": "sampled", "training.n_negative_samples": 8, "training.max_steps": 200})
    result = train(config, tmp_path / "run", show_progress=False)
    assert result.step == 200
    assert result.heldout.average < unigram_perplexity(Vocabulary.from_file(TRAIN_VOCAB), TRAIN_TEXT, TRAIN_TEXT)


def test_resume_continues_exactly(tmp_path):
    settings = {"training.n_epochs": 10, "logging.checkpoint_every": 4, "logging.eval_every": 4}
    straight = train(tiny_config(**settings, **{"training.max_steps": 10}), tmp_path / "a", show_progress=False)
    train(tiny_config(**settings, **{"training.max_steps": 6}), tmp_path / "b", show_progress=False)
    resumed = train(
        tiny_config(**settings, **{"training.max_steps": 10}), tmp_path / "b", resume=True, show_progress=False
    )
    assert resumed.step == straight.step == 10 and resumed.tokens == straight.tokens
    assert resumed.digests == straight.digests
    steps = [r["step"] for r in MetricsLog(tmp_path / "b" / "log.jsonl").records() if r["event"] == "eval"]
    assert steps == [4, 6, 8, 10]


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, text, error, message",
    [("paths.train", "\n \n", CorpusError, "no tokens"), ("paths.vocab", "the\nof\n", CorpusError, "<UNK>")],
    ids=["empty-corpus", "vocab-without-specials"],
)
def test_a_bad_corpus_or_vocabulary_fails_and_writes_nothing(tmp_path, key, text, error, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text, encoding="utf8")
    with pytest.raises(error, match=message):
        train(tiny_config(**{key: str(bad)}), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_sizes_that_disagree_fail_before_writing(tmp_path):
    config = tiny_config(**{"training.softmax": "sampled", "training.n_negative_samples": 32})
    with pytest.raises(ConfigError, match="n_negative_samples"):
        train(config, tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_output_directory_holding_another_run_is_refused(short_run, tmp_path):
    out, _ = short_run
    before = sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir())
    with pytest.raises(InputError, match="--resume"):
        train(tiny_config(), out, show_progress=False)
    with pytest.raises(InputError, match="training.batch_size"):
        train(tiny_config(**{"training.batch_size": 3}), out, resume=True, show_progress=False)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir()) == before


def test_nan_stops_with_a_clear_message(tmp_path, monkeypatch):
    class Poisoned(LanguageModel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            with torch.no_grad():
                self.softmax.bias.fill_(float("nan"))

    monkeypatch.setattr(trainer_module, "LanguageModel", Poisoned)
    with pytest.raises(TrainingError, match="NaN"):
        train(tiny_config(), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run" / CHECKPOINT_FILE).exists()
