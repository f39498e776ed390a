"""The pretraining config (pretrain/config.py): overrides parsed as `spacy train` parses them, and a bad
setting named by its key before anything runs."""

import pytest

from spacy_elmo.pretrain import ConfigError, parse_overrides
from tests.support.pretraining import tiny_pretrain_config as tiny_config


def test_overrides_parse_like_spacy_train():
    assert parse_overrides(["--training.batch_size", "64", "--paths.train=a/*.txt", "--logging.plot", "false"]) == {
        "training.batch_size": 64,
        "paths.train": "a/*.txt",
        "logging.plot": False,
    }
    with pytest.raises(ConfigError, match="needs a value"):
        parse_overrides(["--training.batch_size"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"training.bacth_size": 3}, "bacth_size"),
        ({"model.char_cnn.filters": [[1, 4], [60, 8]]}, "exceeds max_characters_per_token"),
        ({"training.dropout": 1.5}, "dropout"),
        ({"training.softmax": "hierarchical"}, "softmax"),
    ],
)
def test_bad_configs_name_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        tiny_config(**overrides)
