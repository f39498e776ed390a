"""`evaluate`: a run's held-out perplexity from the command line, the trainer's own figure."""

import json

import h5py
import pytest

from tests.support.cli import assert_clear_error, run_cli
from tests.support.paths import TRAIN_TEXT
from tests.support.pretraining import TRAIN_SENTENCES as SENTENCES
from tests.support.pretraining import untrained_export, with_softmax_bomb


def test_evaluate_cli_reports_the_trainers_heldout_perplexity(short_run):
    out, result = short_run
    # The trainer evaluates with the config's window (10) and eval batch (64); the packing of sentences
    # into rows, hence the context carried into each sentence, depends on both.
    cli = run_cli("evaluate", out, TRAIN_TEXT, "--json", "--unroll-steps", 10, "--batch-size", 64)
    assert cli.returncode == 0, cli.stderr
    reported = json.loads(cli.stdout)
    assert reported["average"] == pytest.approx(result.heldout.average, rel=1e-5)
    assert reported["n_tokens"] == sum(len(s) + 1 for s in SENTENCES)


def test_evaluate_refuses_a_softmax_declaring_more_than_its_file_holds(short_run, tmp_path):
    run = with_softmax_bomb(short_run[0], tmp_path)
    result = run_cli("evaluate", run, TRAIN_TEXT)
    assert_clear_error(result, "dataset 'softmax/W' declares shape (2000000000, 16)")
    assert "MemoryError" not in result.stderr


def test_evaluate_refuses_an_infinite_perplexity(tmp_path):
    model_dir = untrained_export(tmp_path / "model")
    with h5py.File(model_dir / "softmax.hdf5", "a") as f:
        f["softmax/W"][0, 0] = 3e38  # finite, but the logits overflow: no perplexity, not "inf" with exit code 0
    result = run_cli("evaluate", model_dir, TRAIN_TEXT, "--json")
    assert_clear_error(result, "held-out loss per token is")
    assert not result.stdout


def test_evaluate_on_an_export_names_the_softmax_and_vocabulary_it_lacks(tmp_path):
    assert run_cli("export", tmp_path / "bilm", "--model", "fixture-tiny").returncode == 0
    result = run_cli("evaluate", tmp_path / "bilm", TRAIN_TEXT)
    assert_clear_error(result, "no softmax.hdf5 and no vocab.txt", "softmax over its vocabulary", "pretrain")
    assert "no weights.hdf5" not in result.stderr
