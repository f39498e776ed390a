"""Every command's exit status is honest for signals, sent here to a real process: Ctrl-C (SIGINT) exits
with 130 and SIGTERM with 143; `pretrain` writes its checkpoint first and prints no success line."""

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List

import pytest

from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from tests.support.paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB

SIGNALS = [pytest.param(signal.SIGINT, 130, id="ctrl-c"), pytest.param(signal.SIGTERM, 143, id="sigterm")]


def _as_in_a_terminal() -> None:
    """The signals' default actions in the command, as a command run in a terminal has them. A test run
    started in the background by a shell (`pytest ... &`) inherits SIGINT ignored, as POSIX shells set it
    for background commands, and Python then installs no Ctrl-C handler: the command would run on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _signalled(args: List[str], ready: Callable[[], bool], signum: int) -> subprocess.CompletedProcess:
    """Run `python -m spacy_elmo ARGS`, send `signum` once `ready()`, and wait for the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_elmo", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_in_a_terminal,
    )
    try:
        deadline = time.monotonic() + 600
        while not ready():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the command never got under way"
            time.sleep(0.05)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


@pytest.mark.slow
@pytest.mark.parametrize("signum, status", SIGNALS)
def test_pretrain_checkpoints_and_exits_with_the_signals_status(tmp_path, signum, status):
    out = tmp_path / "run"
    args = ["pretrain", str(PRETRAIN_TINY_CONFIG), "--output", str(out), "--no-progress"]
    args += ["--paths.train", str(TRAIN_TEXT), "--paths.vocab", str(TRAIN_VOCAB), "--logging.plot", "false"]
    args += ["--paths.dev", str(TRAIN_TEXT), "--logging.eval_every", "1000000"]
    args += ["--training.n_epochs", "1000", "--logging.checkpoint_every", "5"]
    log = MetricsLog(out / "log.jsonl")

    def checkpointed() -> bool:
        return (out / "log.jsonl").exists() and any(r["event"] == "checkpoint" for r in log.records())

    result = _signalled(args, checkpointed, signum)
    assert result.returncode == status, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "Model in" not in result.stdout, "the success line was printed"
    assert "go on with --resume" in " ".join((result.stdout + result.stderr).split())
    end = [r for r in log.records() if r["event"] == "end"][-1]
    assert load_checkpoint(out / CHECKPOINT_FILE)["step"] == end["step"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("signum, status", SIGNALS)
def test_dump_exits_with_the_signals_status_and_leaves_no_partial_output(tmp_path, fixture_paths, signum, status):
    source = tmp_path / "in.txt"
    # Long enough that the signal arrives while the dump is still writing, even on a loaded machine.
    source.write_text("the river bank is muddy .\n" * 200_000, encoding="utf8")
    target = tmp_path / "layers.hdf5"
    args = ["dump", str(source), str(target), "--no-progress", "--batch-size", "4"]
    args += ["--options", str(fixture_paths[0]), "--weights", str(fixture_paths[1])]

    def writing() -> bool:
        return bool(list(Path(tmp_path).glob(".layers.hdf5.*")))

    result = _signalled(args, writing, signum)
    assert result.returncode == status, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"], "a partial output was left"
