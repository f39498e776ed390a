"""Pretraining under kills, full disks, concurrent runs and bad settings: the run directory always holds
one consistent model and bad input is refused before anything is written."""

import builtins
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.formats import WeightsError
from spacy_elmo.elmo.pretrain import (
    ConfigError,
    CorpusError,
    load_config,
    load_language_model,
    parse_overrides,
    train,
)
from spacy_elmo.elmo.pretrain.checkpoint import (
    CHECKPOINT_FILE,
    LOCK_FILE,
    MetricsLog,
    check_run_dir,
    load_checkpoint,
    run_lock,
    write_config,
)
from spacy_elmo.elmo.pretrain.export import SOFTMAX_FILE, WEIGHTS_FILE
from spacy_elmo.elmo.util import io
from spacy_elmo.elmo.util.io import OutputFileError
from tests.support.full_disk import FullDiskFile
from tests.support.paths import PRETRAIN_TINY_CONFIG
from tests.support.pretraining import TINY_RUN_PATHS, pretrain_arguments, tiny_pretrain_config

PATHS = {**TINY_RUN_PATHS, "paths.dev": None}


def tiny(**overrides):
    """The tiny run without held-out text."""
    return tiny_pretrain_config(**{"paths.dev": None, **overrides})


def files(folder: Path):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("key", ["clip_norm", "learning_rate", "initial_accumulator", "dropout"])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_float_settings_are_refused(key, value, tmp_path):
    overrides = {**PATHS, **parse_overrides([f"--training.{key}", value])}
    with pytest.raises(ConfigError, match=f"\\[training\\] {key}"):
        train(load_config(PRETRAIN_TINY_CONFIG, overrides), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_non_finite_values_in_a_config_file_are_refused(tmp_path):
    text = PRETRAIN_TINY_CONFIG.read_text().replace("clip_norm = 10.0", "clip_norm = NaN")
    with pytest.raises(ConfigError, match="clip_norm"):
        load_config(text, PATHS, from_string=True)


def test_non_finite_parameters_stop_the_run_before_a_checkpoint():
    from spacy_elmo.elmo.pretrain.model import LanguageModel
    from spacy_elmo.elmo.pretrain.steps import TrainingError, check_finite_parameters

    model = LanguageModel(tiny().options, 10)
    check_finite_parameters(model, 3)
    with torch.no_grad():
        model.softmax.bias[2] = float("nan")
    with pytest.raises(TrainingError, match="step 7.*softmax.bias.*not finite"):
        check_finite_parameters(model, 7)


def test_an_empty_dev_file_is_refused_before_step_one(tmp_path):
    dev = tmp_path / "dev.txt"
    dev.write_text("\n   \n", encoding="utf8")
    config = tiny(paths__dev=str(dev), training__max_steps=4, logging__checkpoint_every=1, logging__eval_every=3)
    with pytest.raises(CorpusError, match="dev.txt has no tokens"):
        train(config, tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def assert_export_is_the_checkpoints(out: Path) -> None:
    model, _ = load_language_model(out)
    saved = load_checkpoint(out / CHECKPOINT_FILE)["model"]
    for name, value in model.state_dict().items():
        assert torch.equal(value, saved[name]), name


@pytest.mark.parametrize("stale", [[WEIGHTS_FILE, SOFTMAX_FILE], [SOFTMAX_FILE]], ids=["both", "softmax"])
def test_resume_exports_again_when_a_kill_left_the_export_behind_the_checkpoint(tmp_path, stale):
    out = tmp_path / "run"
    train(tiny(training__max_steps=2, logging__checkpoint_every=2), out, show_progress=False)
    step_2 = files(out)
    train(tiny(training__max_steps=4, logging__checkpoint_every=2), out, resume=True, show_progress=False)
    assert_export_is_the_checkpoints(out)
    # A kill after the last checkpoint was written and before (or during) its export.
    for name in stale:
        (out / name).write_bytes(step_2[name])
    if stale == [SOFTMAX_FILE]:
        with pytest.raises(WeightsError, match="interrupted.*--resume"):
            load_language_model(out)
    result = train(tiny(training__max_steps=4, logging__checkpoint_every=2), out, resume=True, show_progress=False)
    assert result.step == 4
    assert_export_is_the_checkpoints(out)


def test_a_full_disk_during_a_checkpoint_names_the_file_and_keeps_the_last_checkpoint(tmp_path, monkeypatch):
    out = tmp_path / "run"
    train(tiny(training__max_steps=2, logging__checkpoint_every=2), out, show_progress=False)

    def full_disk_for_checkpoints(path, mode="r", *args, **kwargs):
        file = builtins.open(path, mode, *args, **kwargs)
        return FullDiskFile(file) if Path(path).name.startswith(f".{CHECKPOINT_FILE}.") else file

    monkeypatch.setattr(io, "open", full_disk_for_checkpoints, raising=False)
    with pytest.raises(OutputFileError) as caught:
        train(tiny(training__max_steps=4, logging__checkpoint_every=2), out, resume=True, show_progress=False)
    message = str(caught.value)
    assert str(out / CHECKPOINT_FILE) in message and "no space left on the device" in message
    assert "unexpected pos" not in message
    assert load_checkpoint(out / CHECKPOINT_FILE)["step"] == 2
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_short_run_says_what_ends_it_and_prints_no_library_warning(tmp_path, caplog, recwarn):
    caplog.set_level(logging.INFO, logger="spacy_elmo")
    train(tiny(training__max_steps=5, logging__plot=True), tmp_path / "run", show_progress=False)
    assert "5 steps (max_steps; 80 epochs would take" in caplog.text
    warnings = [str(w.message) for w in recwarn] + [r.getMessage() for r in caplog.records if r.levelno >= 30]
    assert not [w for w in warnings if "artists" in w], warnings


@pytest.mark.slow
def test_a_second_run_in_a_live_runs_directory_is_refused(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", *pretrain_arguments(out, **{"paths.dev": None})]
    first = subprocess.Popen(
        [*command, "--training.n_epochs", "100000", "--logging.checkpoint_every", "5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(r["event"] == "checkpoint" for r in MetricsLog(out / "log.jsonl").records()):
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        with pytest.raises(InputError, match="another pretraining run is using"):
            train(tiny(training__n_epochs=100000, logging__checkpoint_every=5), out, resume=True, show_progress=False)
        assert first.poll() is None  # the first run goes on, its files untouched
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # The lock went with the killed process: resuming now works, from wherever the first run's last
    # checkpoint stands (it trains on while the second is refused; a quiet machine gets further).
    saved = load_checkpoint(out / CHECKPOINT_FILE)["step"]
    result = train(
        tiny(training__n_epochs=100000, training__max_steps=saved + 2, logging__checkpoint_every=5),
        out,
        resume=True,
        show_progress=False,
    )
    assert result.step == saved + 2


@pytest.mark.parametrize("made", [False, True])
def test_a_run_failing_before_its_first_checkpoint_leaves_nothing_that_blocks_the_next(tmp_path, made):
    out = tmp_path / "run"
    if made:
        out.mkdir()  # an empty folder the user made: kept, and left empty
    with pytest.raises(MemoryError), run_lock(out):
        write_config(out, tiny_pretrain_config().config)
        raise MemoryError  # as the first step of a run too large for memory
    if made:
        assert [p.name for p in out.iterdir() if p.name != LOCK_FILE] == []
    else:
        assert not out.exists()
    check_run_dir(out, tiny_pretrain_config().config, resume=False)


def test_a_run_failing_after_a_checkpoint_keeps_its_files(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(MemoryError), run_lock(out):
        write_config(out, tiny_pretrain_config().config)
        (out / CHECKPOINT_FILE).write_bytes(b"checkpoint")
        raise MemoryError
    assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == [CHECKPOINT_FILE, "config.cfg"]
