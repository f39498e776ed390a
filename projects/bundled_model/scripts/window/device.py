"""The one command of a GPU window: continue pretraining the candidate for a wall-clock budget and put
the new candidate's files, each under the transfer limit, with the window's figures into OUT.

The training itself is the package's `pretrain` from the candidate (`[paths] init`: biLM and softmax;
Adagrad starts afresh, since its state would not fit the transfer), stopped at the deadline by its own
`max_time`, which ends after the current step with a checkpoint and the export. The softmax comes back
as float16, half the size (a 50k x 128 float32 softmax is 25 MB), so that it fits a smaller
`--max-file-mib`; the held-out perplexity is measured with both, so what rounding costs is on record.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

from spacy_elmo.elmo.nn.options import ElmoOptions
from spacy_elmo.elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.config import load_config, parse_overrides
from spacy_elmo.elmo.pretrain.corpus import expand_paths
from spacy_elmo.elmo.pretrain.export import (
    OPTIONS_FILE,
    SOFTMAX_FILE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    exported_step,
    load_language_model,
    write_softmax,
)
from spacy_elmo.elmo.pretrain.perplexity import Perplexity, perplexity
from spacy_elmo.elmo.pretrain.presets import preset_config
from spacy_elmo.elmo.pretrain.trainer import train
from spacy_elmo.elmo.util.io import atomic_output
from spacy_elmo.elmo.util.machine import cpu_name

from .errors import WindowError
from .paths import HELDOUT_DIR, RECORD_FILE, TRAIN_DIR
from .state import start_text

# The fastest pretraining setting measured (docs/results.md, "On a GPU"): the compiled step with TF32 and
# prefetching at batch 1024.
GPU_SETTINGS = {
    "training.batch_size": 1024,
    "training.tf32": True,
    "training.prefetch": 4,
    "training.step_mode": "compiled",
}
LOGGING = {
    "logging.log_every": 20,
    "logging.eval_every": 250,
    "logging.eval_max_tokens": 50000,
    "logging.checkpoint_every": 1000,
}


def model_overrides(options: ElmoOptions) -> Dict[str, Any]:
    """`[model]` set to the candidate's sizes, so the run continues the model it starts from."""
    data = options.to_dict()
    out: Dict[str, Any] = {f"model.lstm.{k}": v for k, v in data["lstm"].items()}
    for key, value in data["char_cnn"].items():
        if key == "embedding":
            out["model.char_cnn.embedding.dim"] = value["dim"]
        else:
            out[f"model.char_cnn.{key}"] = value
    return out


def pretrain_command(config: Path, run_dir: Path, overrides: Dict[str, Any], extra: Sequence[str]) -> List[str]:
    """This module as a process of its own that runs `pretrain.train` (not the CLI, which needs spaCy)."""
    overrides = {**overrides, **parse_overrides(extra)}
    return [sys.executable, "-m", __name__, str(config), str(run_dir), json.dumps(overrides)]


def preset_file(name: str) -> Path:
    """The package's pretraining preset `name` (what `init-config` writes) as a file of its own, for `run`."""
    path = Path(tempfile.mkdtemp(prefix="window-config-")) / f"pretrain_{name}.cfg"
    path.write_text(preset_config(name), encoding="utf8")
    return path


def run_until(command: List[str], env: Dict[str, str], run_dir: Path, hard_deadline: float) -> None:
    """Run the pretraining command (which stops itself at its `max_time`); kill it at `hard_deadline`."""
    process = subprocess.Popen(command, env=env)
    try:
        process.wait(timeout=max(0.0, hard_deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise WindowError(f"pretraining ran past the window's budget; raise --reserve-s (the log: {run_dir})") from None
    if process.returncode != 0:
        raise WindowError(f"pretraining failed with exit status {process.returncode}; its output is above")


def heldout_perplexity(model_dir: Path, heldout: List[Path], device: torch.device, half_softmax: bool) -> Perplexity:
    model, vocab = load_language_model(model_dir)
    if half_softmax:
        with torch.no_grad():
            model.softmax.weight.copy_(model.softmax.weight.half().float())
    return perplexity(model.to(device), vocab, heldout)


def copy_file(source: Path, target: Path) -> None:
    with atomic_output(target) as tmp:
        shutil.copyfile(source, tmp)


def bring_back(run_dir: Path, out: Path, max_file_bytes: Optional[int]) -> None:
    """The new candidate (softmax as float16) and its log into `out`, each file within `max_file_bytes`
    (when given)."""
    model, _ = load_language_model(run_dir)
    for name in (OPTIONS_FILE, WEIGHTS_FILE, VOCAB_FILE, LOG_FILE):
        copy_file(run_dir / name, out / name)
    write_softmax(model, out / SOFTMAX_FILE, exported_step(run_dir), np.float16)
    if max_file_bytes is None:
        return
    too_big = [f"{p.name} ({p.stat().st_size:,} bytes)" for p in out.iterdir() if p.stat().st_size > max_file_bytes]
    if too_big:
        raise WindowError(f"over the {max_file_bytes:,}-byte limit per file brought back: {', '.join(too_big)}")


def eval_curve(run_dir: Path) -> List[List[float]]:
    return [[r["tokens"], r["average"]] for r in MetricsLog(run_dir / LOG_FILE).records() if r.get("event") == "eval"]


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name()


def write_record(out: Path, record: Dict[str, Any]) -> None:
    with atomic_output(out / RECORD_FILE) as tmp:
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf8")


def run_window(
    candidate: Path,
    send: Path,
    out: Path,
    run_dir: Optional[Path],
    config: Path,
    budget_s: float,
    reserve_s: float,
    device: str,
    extra: Sequence[str] = (),
    max_file_bytes: Optional[int] = None,
) -> Dict[str, Any]:
    """One window: held-out perplexity of the candidate, pretraining from it until the deadline, then
    the new candidate into `out` before its two held-out evaluations (float32 and float16 softmax), so a
    command cut short still brings the model back. The deadline leaves `reserve_s` seconds, or more when
    the first evaluation shows the two will take longer."""
    started = time.monotonic()
    torch_device = torch.device(device)
    if torch_device.type == "cuda" and not torch.cuda.is_available():
        raise WindowError("--device cuda, but torch sees no GPU here; rehearse on the CPU with --device cpu")
    train, heldout = expand_paths([send / TRAIN_DIR]), expand_paths([send / HELDOUT_DIR])
    if run_dir is None:
        run_dir = Path(tempfile.mkdtemp(prefix="window-run-"))
    elif run_dir.exists() and any(run_dir.iterdir()):
        raise WindowError(f"{run_dir} is not empty: a window starts a new run; remove it or give another --run-dir")
    from_scratch = not (candidate / WEIGHTS_FILE).exists()  # a new line's first window (begin.py)
    start = None if from_scratch else heldout_perplexity(candidate, heldout, torch_device, half_softmax=False)
    reserve_s = max(reserve_s, 3 * (time.monotonic() - started) + 30)
    overrides: Dict[str, Any] = {
        **model_overrides(ElmoOptions.from_file(candidate / OPTIONS_FILE)),
        **({} if from_scratch else {"paths.init": str(candidate)}),
        "paths.train": str(send / TRAIN_DIR),
        "paths.vocab": str(candidate / VOCAB_FILE),
        "paths.dev": str(heldout[0]),
        "training.n_epochs": 1000,  # the deadline ends the run, not the data
        "training.max_steps": None,
        **(GPU_SETTINGS if torch_device.type == "cuda" else {}),
        **LOGGING,
    }
    env = dict(os.environ)
    if torch_device.type == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    train_started = time.monotonic()
    overrides["training.max_time"] = max(started + budget_s - reserve_s - train_started, 1.0) / 60
    run_until(pretrain_command(config, run_dir, overrides, extra), env, run_dir, started + budget_s)
    finished = [r for r in MetricsLog(run_dir / LOG_FILE).records() if r.get("event") == "end"]
    record: Dict[str, Any] = {
        "id": uuid.uuid4().hex,  # so that `accept` takes each window once
        "device": device_name(torch_device),
        "budget_s": budget_s,
        "train_s": round(time.monotonic() - train_started, 1),
        "steps": finished[-1]["step"],
        "tokens": finished[-1]["tokens"],
        "train_shards": [p.name for p in train],
        "overrides": {k: v for k, v in overrides.items() if k.startswith("training.")},
        "extra": list(extra),
        "start": None if start is None else start.to_dict(),
        "curve": eval_curve(run_dir),
    }
    bring_back(run_dir, out, max_file_bytes)
    write_record(out, record)
    record["end_fp32"] = heldout_perplexity(run_dir, heldout, torch_device, half_softmax=False).to_dict()
    record["end"] = heldout_perplexity(run_dir, heldout, torch_device, half_softmax=True).to_dict()
    record["seconds"] = round(time.monotonic() - started, 1)
    write_record(out, record)
    return record


def summary(record: Dict[str, Any], out: Optional[Path] = None) -> str:
    where = f" in {out}" if out else ""
    return (
        f"window on {record['device']}: {record['steps']} steps, {record['tokens']:,} tokens in {record['train_s']} s; "
        f"held-out perplexity {start_text(record)} -> {record['end']['average']:.2f} "
        f"(float16 softmax; float32 {record['end_fp32']['average']:.2f}){where}"
    )


def pretrain_process(argv: Sequence[str]) -> None:
    """CONFIG RUN_DIR OVERRIDES_JSON: the window's pretraining run, which its max_time ends cleanly."""
    config, run_dir, overrides = argv
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    train(load_config(config, json.loads(overrides)), run_dir, show_progress=False)


if __name__ == "__main__":
    pretrain_process(sys.argv[1:])
