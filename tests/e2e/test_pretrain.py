"""Pretraining as a user runs it: a process killed with SIGKILL and resumed, and torchrun on two CPU
processes (gloo) whose replicas must stay identical."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from tests.support.cli import run_cli
from tests.support.paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB

PATHS = [
    "--paths.train",
    str(TRAIN_TEXT),
    "--paths.vocab",
    str(TRAIN_VOCAB),
    "--paths.dev",
    str(TRAIN_TEXT),
    "--logging.plot",
    "false",
]


def pretrain_args(out: Path, *extra: str):
    return [
        "pretrain",
        str(PRETRAIN_TINY_CONFIG),
        "--output",
        str(out),
        "--no-progress",
        *PATHS,
        *extra,
    ]


def wait_for_checkpoint(log: MetricsLog, min_step: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(r["event"] == "checkpoint" and r["step"] >= min_step for r in log.records()):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint at step >= {min_step} within {timeout} s")


@pytest.mark.slow
def test_sigkill_mid_run_resumes_from_the_last_checkpoint(tmp_path):
    out = tmp_path / "run"
    # A checkpoint every 3 steps, so the kill often lands while one is being written.
    # a real process, so that it can be killed with SIGKILL mid-run (run_cli waits for the end)
    args = pretrain_args(
        out, "--training.n_epochs", "1000", "--logging.checkpoint_every", "3", "--logging.eval_every", "1000000"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_elmo", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_checkpoint(MetricsLog(out / "log.jsonl"), 30, process)
        time.sleep(0.137)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()
    assert process.returncode == -signal.SIGKILL
    recorded = load_checkpoint(out / CHECKPOINT_FILE)["step"]
    assert recorded >= 30 and recorded % 3 == 0

    resumed = run_cli(
        *pretrain_args(
            out,
            "--resume",
            "--training.n_epochs",
            "1000",
            "--logging.checkpoint_every",
            "3",
            "--logging.eval_every",
            "1000000",
            "--training.max_steps",
            str(recorded + 4),
        ),
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed from step {recorded} " in resumed.stderr + resumed.stdout
    assert load_checkpoint(out / CHECKPOINT_FILE)["step"] == recorded + 4
    steps = [r["step"] for r in MetricsLog(out / "log.jsonl").records() if r["event"] == "checkpoint"]
    assert steps == sorted(steps) and steps[-1] == recorded + 4


@pytest.mark.slow
@pytest.mark.parametrize(
    "softmax",
    [[], ["--training.softmax", "sampled", "--training.sparse_softmax", "true"]],
    ids=["full", "sparse-sampled"],
)
def test_torchrun_two_cpu_processes_keep_identical_replicas(tmp_path, softmax):
    out = tmp_path / "run"
    args = pretrain_args(out, "--training.max_steps", "12", "--logging.checkpoint_every", "5", *softmax)
    result = run_cli(  # torchrun is `python -m torch.distributed.run`
        "--standalone",
        "--nproc_per_node",
        2,
        "-m",
        "spacy_elmo",
        *args,
        module="torch.distributed.run",
        timeout=180,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    end = [r for r in MetricsLog(out / "log.jsonl").records() if r["event"] == "end"][-1]
    assert end["step"] == 12 and len(end["digests"]) == 2 and len(set(end["digests"])) == 1
    # The run's tokens are both processes' together: one process's 12 steps of 2 x 10 positions hold
    # at most 240 targets.
    assert end["tokens"] > 12 * 2 * 10
    checkpoint = load_checkpoint(out / CHECKPOINT_FILE)
    assert checkpoint["world_size"] == 2 and len(checkpoint["ranks"]) == 2
    assert json.loads((out / "options.json").read_text())["lstm"]["dim"] == 32
