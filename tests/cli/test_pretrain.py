"""`pretrain` from the command line: config overrides as `spacy train` takes them, a summary of the run
and the exported pair in the output folder; a misspelt setting named with no run folder written."""

import pytest

from tests.support.cli import assert_clear_error, run_cli
from tests.support.paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB

PATHS = (
    "--paths.train",
    TRAIN_TEXT,
    "--paths.vocab",
    TRAIN_VOCAB,
    "--paths.dev",
    TRAIN_TEXT,
    "--logging.plot",
    "false",
)


@pytest.mark.slow
def test_a_short_run_reports_its_steps_and_exports_the_model(tmp_path):
    out = tmp_path / "run"
    result = run_cli(
        "pretrain", PRETRAIN_TINY_CONFIG, "--output", out, *PATHS, "--training.max_steps", 2, "--no-progress"
    )
    assert result.returncode == 0, result.stderr
    assert "2 steps" in result.stdout and "held-out perplexity" in result.stdout
    assert (out / "options.json").is_file() and (out / "weights.hdf5").is_file()


@pytest.mark.slow
def test_a_misspelt_setting_is_named_and_nothing_is_written(tmp_path):
    out = tmp_path / "run"
    assert_clear_error(
        run_cli("pretrain", PRETRAIN_TINY_CONFIG, "--output", out, *PATHS, "--training.bacth_size", 3), "bacth_size"
    )
    assert not out.exists()
