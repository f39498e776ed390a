"""`max_time` (spacy_elmo/elmo/pretrain/trainer.py, `pretrain --max-time`): a run stops at its deadline after
the current step with a checkpoint and the export, and a resume goes on from there."""

import pytest

from spacy_elmo.elmo.pretrain import ConfigError, train
from spacy_elmo.elmo.pretrain import trainer as trainer_module
from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from spacy_elmo.elmo.pretrain.export import exported_step
from tests.support.cli import run_cli
from tests.support.paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB
from tests.support.pretraining import tiny_pretrain_config


class MinuteClock:
    """A clock that moves on one minute each time it is read, so that the deadline falls after a known
    number of reads whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 60.0
        return self.now


def test_the_deadline_stops_the_run_with_a_checkpoint_and_the_export(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(trainer_module, "time", MinuteClock())
    config = tiny_pretrain_config(
        training__max_time=3.5, training__n_epochs=1000, logging__checkpoint_every=1000, logging__eval_every=1000
    )
    with caplog.at_level("WARNING"):
        result = train(config, tmp_path, show_progress=False)
    # The deadline is set at one read and checked before every step at the next: 3.5 minutes is three steps.
    assert result.step == 3
    assert "max_time (3.5 minutes) is up" in caplog.text
    assert load_checkpoint(tmp_path / CHECKPOINT_FILE)["step"] == 3 and exported_step(tmp_path) == 3
    # No evaluation at the stop: its time goes to the checkpoint.
    assert not [r for r in MetricsLog(tmp_path / "log.jsonl").records() if r["event"] == "eval"]

    monkeypatch.undo()
    resumed = train(tiny_pretrain_config(training__max_steps=5, training__n_epochs=1000), tmp_path, resume=True)
    assert resumed.step == 5


def test_max_time_must_be_positive():
    with pytest.raises(ConfigError, match="max_time"):
        tiny_pretrain_config(training__max_time=0)


@pytest.mark.slow
def test_the_command_line_max_time_ends_a_long_run_cleanly(tmp_path):
    out = tmp_path / "run"
    paths = ["--paths.train", TRAIN_TEXT, "--paths.vocab", TRAIN_VOCAB, "--paths.dev", TRAIN_TEXT]
    result = run_cli(
        "pretrain", PRETRAIN_TINY_CONFIG, "--output", out, *paths, "--training.n_epochs", "100000",
        "--logging.plot", "false", "--no-progress", "--max-time", "0.25",
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "max_time (0.25 minutes) is up" in result.stderr
    # Whatever step the deadline fell on (a loaded machine may not reach the first), it is checkpointed
    # and exported.
    assert exported_step(out) == load_checkpoint(out / CHECKPOINT_FILE)["step"]
