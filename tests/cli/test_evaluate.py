"""`evaluate`: a run's held-out perplexity from the command line, the trainer's own figure."""

import json

import pytest

from tests.support.cli import run_cli
from tests.support.paths import TRAIN_TEXT
from tests.support.pretraining import TRAIN_SENTENCES as SENTENCES


def test_evaluate_cli_reports_the_trainers_heldout_perplexity(short_run):
    out, result = short_run
    # The trainer evaluates with the config's window (10) and eval batch (64); the packing of sentences
    # into rows, hence the context carried into each sentence, depends on both.
    cli = run_cli("evaluate", out, TRAIN_TEXT, "--json", "--unroll-steps", 10, "--batch-size", 64)
    assert cli.returncode == 0, cli.stderr
    reported = json.loads(cli.stdout)
    assert reported["average"] == pytest.approx(result.heldout.average, rel=1e-5)
    assert reported["n_tokens"] == sum(len(s) + 1 for s in SENTENCES)
