"""`pretrain` from the command line: config overrides as `spacy train` takes them, a summary of the run
and the exported pair in the output folder; a misspelt setting or a step too large named with no run
folder written; a read-only output refused before training."""

import shutil
from pathlib import Path

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


@pytest.mark.slow
def test_a_step_too_large_is_refused_by_name_and_the_corrected_command_runs(tmp_path):
    out = tmp_path / "run"
    for key, limit in (("--training.batch_size", 65536), ("--training.unroll_steps", 4096)):
        refused = run_cli("pretrain", PRETRAIN_TINY_CONFIG, "--output", out, *PATHS, key, 1_000_000_000)
        assert_clear_error(refused, f"{key[2:].split('.')[1]} is 1000000000, above the limit of {limit}")
        assert not out.exists()
    result = run_cli(
        "pretrain", PRETRAIN_TINY_CONFIG, "--output", out, *PATHS, "--training.max_steps", 1, "--no-progress"
    )
    assert result.returncode == 0, result.stderr


def test_an_output_under_a_read_only_folder_is_refused_before_training(tmp_path, read_only_folder):
    locked = read_only_folder(tmp_path / "locked")
    result = run_cli("pretrain", PRETRAIN_TINY_CONFIG, "--output", locked / "run", *PATHS)
    assert_clear_error(
        result, f"cannot write in run directory {locked / 'run'} (to be made in {locked}): read-only file system"
    )
    assert result.stderr.count("\n") == 1


def test_resuming_in_a_read_only_run_folder_is_refused_before_training(short_run, tmp_path, read_only_folder):
    run = Path(shutil.copytree(short_run[0], tmp_path / "run"))
    read_only_folder(run)
    result = run_cli("pretrain", PRETRAIN_TINY_CONFIG, "--output", run, *PATHS, "--resume", "--training.max_steps", 24)
    assert_clear_error(result, f"cannot write in run directory {run}: read-only file system")
    assert "Errno" not in result.stderr
