"""The pretraining config (elmo/pretrain/config.py): overrides parsed as `spacy train` parses them, and a bad
setting named by its key before anything runs."""

import pytest

from spacy_elmo.elmo.pretrain import ConfigError, parse_overrides
from spacy_elmo.elmo.pretrain.config import parse_changes
from tests.support.pretraining import tiny_pretrain_config as tiny_config


def test_overrides_parse_like_spacy_train():
    assert parse_overrides(["--training.batch_size", "64", "--paths.train=a/*.txt", "--logging.plot", "false"]) == {
        "training.batch_size": 64,
        "paths.train": "a/*.txt",
        "logging.plot": False,
    }
    with pytest.raises(ConfigError, match="needs a value"):
        parse_overrides(["--training.batch_size"])


def test_key_value_changes_parse_as_overrides():
    assert parse_changes(["lstm.dim=1024", "model.char_cnn.filters=[[1, 32]]", "paths.train=a/*.txt"]) == {
        "lstm.dim": 1024,
        "model.char_cnn.filters": [[1, 32]],
        "paths.train": "a/*.txt",
    }


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


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"training.batch_size": 10**9}, r"\[training\] batch_size is 1000000000, above the limit of 65536"),
        ({"training.unroll_steps": 10**9}, r"\[training\] unroll_steps is 1000000000, above the limit of 4096"),
        ({"logging.eval_batch_size": 10**9}, r"\[logging\] eval_batch_size is 1000000000, above the limit of 65536"),
        ({"training.batch_size": 60_000, "training.unroll_steps": 4000}, r"batch_size x unroll_steps \(60000 x 4000\)"),
    ],
)
def test_steps_too_large_for_memory_are_refused_by_name(overrides, message):
    with pytest.raises(ConfigError, match=message):
        tiny_config(**overrides)
