"""How a run starts (elmo/pretrain/start.py): from a pretraining output (its weights exactly) or from published
weights; sizes that disagree with the starting point named before anything is written."""

import json

import pytest

from spacy_elmo.elmo.formats.errors import WeightsError
from spacy_elmo.elmo.pretrain import ConfigError, load_language_model, train
from spacy_elmo.elmo.pretrain.model import LanguageModel, parameters_digest
from spacy_elmo.elmo.pretrain.start import initialize_from
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import ALLENNLP_DIR, TRAIN_VOCAB
from tests.support.pretraining import tiny_pretrain_config as tiny_config
from tests.support.pretraining import with_softmax_bomb


def test_continue_from_a_run_and_from_published_weights(short_run, tmp_path):
    out, _ = short_run
    config = tiny_config(**{"paths.init": str(out), "training.max_steps": 1})
    model = LanguageModel(config.options, 32)
    initialize_from(model, Vocabulary.from_file(TRAIN_VOCAB), out)
    exported, _ = load_language_model(out)
    assert parameters_digest(model) == parameters_digest(exported)
    train(config, tmp_path / "continued", show_progress=False)

    published = json.loads((ALLENNLP_DIR / "options.json").read_text())
    overrides = {f"model.lstm.{k}": v for k, v in published["lstm"].items()}
    overrides.update({f"model.char_cnn.{k}": v for k, v in published["char_cnn"].items() if k != "embedding"})
    overrides.update({"paths.init": str(ALLENNLP_DIR / "lm_weights.hdf5"), "training.max_steps": 2})
    assert train(tiny_config(**overrides), tmp_path / "from-published", show_progress=False).step == 2
    with pytest.raises(ConfigError, match="lstm.dim"):
        train(tiny_config(**{"paths.init": str(out), "model.lstm.dim": 48}), tmp_path / "mismatch", show_progress=False)
    assert not (tmp_path / "mismatch").exists()


def test_an_init_run_whose_softmax_declares_more_than_it_holds_is_refused(short_run, tmp_path):
    run = with_softmax_bomb(short_run[0], tmp_path)
    config = tiny_config(**{"paths.init": str(run), "training.max_steps": 1})
    with pytest.raises(WeightsError, match=r"dataset 'softmax/W' declares shape \(2000000000, 16\)"):
        train(config, tmp_path / "out", show_progress=False)
    assert not (tmp_path / "out").exists()
