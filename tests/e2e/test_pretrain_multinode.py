"""Pretraining on two "machines": two torchrun launchers (`--nnodes 2 --nproc_per_node 1`) meeting at a
c10d rendezvous on 127.0.0.1, as two hosts with a shared output directory would. Replicas stay
identical, one rank writes, and after one node is killed the job resumes on both with `--resume`."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from tests.support.pretraining import pretrain_arguments

# The first run is long enough that it is always killed mid-way; the resumed one ends soon after.
FIRST_RUN_STEPS = 100_000
MORE_STEPS = 8


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher(out: Path, port: int, run_id: str, *extra: str) -> List[str]:
    torchrun = Path(sys.executable).parent / "torchrun"
    start = [str(torchrun)] if torchrun.exists() else [sys.executable, "-m", "torch.distributed.run"]
    return start + [
        "--nnodes",
        "2",
        "--nproc_per_node",
        "1",
        "--rdzv_backend",
        "c10d",
        "--rdzv_endpoint",
        f"127.0.0.1:{port}",
        "--rdzv_id",
        run_id,
        "-m",
        *pretrain_arguments(out, **{"logging.checkpoint_every": 4, "training.n_epochs": 100_000}),
        *extra,
    ]


def start_nodes(out: Path, *extra: str) -> List[subprocess.Popen]:
    port, run_id = free_port(), f"elmo-{time.monotonic_ns()}"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return [
        subprocess.Popen(
            launcher(out, port, run_id, *extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        for _ in range(2)
    ]


def descendants(pid: int) -> List[int]:
    """Every process below `pid` (Linux /proc): torchrun may start its workers in their own sessions,
    so killing the launcher's process group alone can leave a worker training."""
    children: dict = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill(node: subprocess.Popen) -> None:
    """A machine dies: its launcher and every worker under it, at once."""
    for pid in [node.pid, *descendants(node.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    node.wait(timeout=30)


def checkpoints(out: Path) -> List[int]:
    return [r["step"] for r in MetricsLog(out / "log.jsonl").records() if r["event"] == "checkpoint"]


@pytest.mark.slow
def test_multinode_two_launchers_identical_replicas_one_writer_and_resume_after_a_node_dies(tmp_path):
    out = tmp_path / "shared-run"
    nodes = start_nodes(out, "--training.max_steps", str(FIRST_RUN_STEPS))
    try:
        deadline = time.monotonic() + 120
        while not (out / "log.jsonl").exists() or not checkpoints(out):
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            assert all(n.poll() is None for n in nodes), b"".join(n.communicate()[0] for n in nodes)[-3000:]
            time.sleep(0.1)
        kill(nodes[1])  # one machine dies
        try:
            nodes[0].wait(timeout=20)  # its peer fails or hangs in a collective: the job is then stopped
        except subprocess.TimeoutExpired:
            pass
        kill(nodes[0])
        killed_at = max(checkpoints(out))
        target = killed_at + MORE_STEPS

        nodes = start_nodes(out, "--resume", "--training.max_steps", str(target))
        outputs = [n.communicate(timeout=180)[0].decode(errors="replace") for n in nodes]
        assert all(n.returncode == 0 for n in nodes), "\n".join(o[-2000:] for o in outputs)
    finally:
        for node in nodes:
            if node.poll() is None:
                kill(node)
    end = [r for r in MetricsLog(out / "log.jsonl").records() if r["event"] == "end"][-1]
    assert end["step"] == target and len(end["digests"]) == 2 and len(set(end["digests"])) == 1
    assert load_checkpoint(out / CHECKPOINT_FILE)["world_size"] == 2
    # One writer: every checkpoint step is logged once (a second writer would log each twice).
    steps = checkpoints(out)
    assert len(steps) == len(set(steps)) and steps[-1] == target
    assert sum("resumed from step" in o for o in outputs) >= 1
