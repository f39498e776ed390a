import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from tests.support.cli import assert_clear_error, run_cli
from tests.support.paths import TINY_MODEL
from tests.support.tolerance import assert_matches_reference


def test_dump_writes_one_dataset_per_line(fixture_bilm, fixture_paths, tmp_path):
    lines = ["The first sentence .", "", "Second one here", "x"]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    target = tmp_path / "out.hdf5"
    result = run_cli(
        "dump", "--options", fixture_paths[0], "--weights", fixture_paths[1], source, target, "--batch-size", 2
    )
    assert result.returncode == 0, result.stderr
    expected = fixture_bilm.embed([line.split() for line in lines])
    with h5py.File(target, "r") as f:
        assert sorted(f.keys()) == ["0", "1", "2", "3"]
        for i, layers in enumerate(expected):
            assert f[str(i)].shape == (3, len(lines[i].split()), 32)
            np.testing.assert_allclose(f[str(i)][()], layers, atol=1e-6, rtol=0)


def test_dump_warns_once_on_untokenized_input_and_counts_blank_lines(tmp_path):
    source = tmp_path / "raw.txt"
    source.write_text("Who is Harry?\nYes, I am.\n\nThe bank .\n", encoding="utf8")
    result = run_cli("dump", source, tmp_path / "out.hdf5", "--model", "fixture-tiny", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("looks untokenized") == 1, result.stderr
    assert "'Harry?'" in result.stderr and "python -m spacy_elmo tokenize" in result.stderr
    assert "wrote 4 sentences (1 blank line as an empty dataset)" in result.stdout
    tokenized = tmp_path / "tokens.txt"
    tokenized.write_text("Who is Harry ?\nThe bank .\n", encoding="utf8")
    result = run_cli("dump", tokenized, tmp_path / "tokens.hdf5", "--model", "fixture-tiny", "--no-progress")
    assert result.returncode == 0 and "untokenized" not in result.stderr, result.stderr
    assert "wrote 2 sentences to" in result.stdout


@pytest.mark.parametrize("flag", ["--all", "--top", "--average"])
def test_dump_with_allennlps_layer_flags_points_to_its_own_option_and_to_elmo(tmp_path, flag):
    source = tmp_path / "in.txt"
    source.write_text("The bank .\n", encoding="utf8")
    result = run_cli("dump", source, tmp_path / "out.hdf5", flag)
    assert_clear_error(result, f"--layers {flag[2:]}", f"python -m spacy_elmo elmo IN OUT {flag}")
    assert not (tmp_path / "out.hdf5").exists()


def test_dump_bad_weights_is_a_clear_error_and_writes_nothing(fixture_paths, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b\n")
    bad = tmp_path / "bad.hdf5"
    bad.write_text("nope")
    target = tmp_path / "out.hdf5"
    result = run_cli("dump", "--options", fixture_paths[0], "--weights", bad, source, target)
    assert_clear_error(result, "not a readable HDF5")
    assert not target.exists()


def test_dump_takes_a_bundled_models_name_or_a_model_directory(tmp_path):
    from spacy_elmo import load_bilm
    from spacy_elmo.elmo.sources import bundled_model_paths

    source = tmp_path / "in.txt"
    source.write_text("The bank .\nA river bank .\n", encoding="utf8")
    options, weights = bundled_model_paths("fixture-tiny")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "options.json").write_bytes(options.read_bytes())
    (folder / "weights.hdf5").write_bytes(weights.read_bytes())
    expected = load_bilm(options, weights).embed([["The", "bank", "."], ["A", "river", "bank", "."]])
    for model in ("fixture-tiny", str(folder)):
        target = tmp_path / f"{Path(model).name}.hdf5"
        result = run_cli("dump", source, target, "--model", model, "--no-progress")
        assert result.returncode == 0, result.stderr
        with h5py.File(target, "r") as f:
            for i, layers in enumerate(expected):
                np.testing.assert_allclose(f[str(i)][()], layers, atol=1e-6, rtol=0)
    assert_clear_error(run_cli("dump", source, tmp_path / "x.hdf5", "--model", "no-such-model"), "no-such-model")
    assert not (tmp_path / "x.hdf5").exists()


@pytest.mark.slow
def test_a_killed_dump_leaves_no_temporary_file_after_the_next_run(fixture_paths, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("the river bank is muddy .\n" * 20_000, encoding="utf8")
    target = tmp_path / "layers.hdf5"
    args = ["dump", str(source), str(target), "--no-progress", "--batch-size", "4"]
    args += ["--options", str(fixture_paths[0]), "--weights", str(fixture_paths[1])]
    # a real process, killed with SIGKILL mid-write: what run_cli (which waits for the end) cannot do
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_elmo", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob(".layers.hdf5.*")):
            assert process.poll() is None and time.monotonic() < deadline, "dump ended before it was killed"
            time.sleep(0.05)
        time.sleep(0.5)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert list(tmp_path.glob(".layers.hdf5.*")) and not target.exists()
    source.write_text("a short file .\n", encoding="utf8")
    assert run_cli(*args).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "layers.hdf5"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without a GPU")
def test_gpu_id_without_a_gpu_is_a_message_and_no_file(tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("the bank of the river .\n", encoding="utf8")
    out = tmp_path / "layers.hdf5"
    result = run_cli("dump", text, out, "--model", TINY_MODEL, "--gpu-id", 0, "--no-progress")
    assert_clear_error(result, "--gpu-id 0: torch sees no GPU", "leave --gpu-id out")
    assert not out.exists()


def test_gpu_id_is_for_the_local_engine(tmp_path):
    result = run_cli("dump", "*.txt", tmp_path / "out", "--engine", "ray", "--gpu-id", 0)
    assert_clear_error(result, "--gpu-id is for --engine local")


@pytest.mark.slow
def test_dump_onto_a_disk_filling_up_stops_with_one_error_line(tmp_path, full_disk):
    source = tmp_path / "in.txt"
    source.write_text("bank\n" * 2000, encoding="utf8")  # passes the room check; the datasets' headers do not fit
    disk = full_disk(1 << 20)
    result = run_cli("dump", source, disk / "out.hdf5", "--model", TINY_MODEL, "--no-progress")
    assert result.returncode == 1, result.stderr[-2000:]  # not a crash (-11 when h5py's finalisers failed)
    assert_clear_error(result, f"cannot write {disk / 'out.hdf5'}: no space left on the device")
    assert result.stderr.count("\n") == 1 and "Exception ignored" not in result.stderr
    assert list(disk.iterdir()) == []


def test_dump_onto_a_disk_too_small_for_the_layers_is_refused_before_embedding(tmp_path, full_disk):
    source = tmp_path / "in.txt"
    source.write_text("She sat on the bank of the river .\n" * 400, encoding="utf8")
    disk = full_disk(1 << 20)
    result = run_cli("dump", source, disk / "out.hdf5", "--model", TINY_MODEL, "--no-progress")
    assert_clear_error(
        result, f"cannot write {disk / 'out.hdf5'}: it needs 1.3 MiB, the disk holding {disk} has 1.0 MiB"
    )
    assert list(disk.iterdir()) == []


def test_dump_writes_the_layers_pool_dtype_and_compression_asked_for(tmp_path):
    from spacy_elmo import load_bilm

    lines = ["The bank rose .", "", "She sat on the bank of the river ."]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf8")
    target = tmp_path / "out.hdf5"
    args = ["--layers", "0.2,0.3,0.5", "--pool", "mean", "--dtype", "float16", "--compression", "gzip"]
    args += ["--compression-level", 6, "--max-batch-tokens", 8, "--no-progress"]
    result = run_cli("dump", source, target, "--model", TINY_MODEL, *args)
    assert result.returncode == 0, result.stderr
    expected = load_bilm(TINY_MODEL).embed([line.split() for line in lines], layers=[0.2, 0.3, 0.5], pool="mean")
    with h5py.File(target, "r") as f:
        assert sorted(f) == ["0", "1", "2"]
        for i, vector in enumerate(expected):
            assert f[str(i)].shape == vector.shape == (32,) and f[str(i)].dtype == np.float16
            assert (f[str(i)].compression, f[str(i)].compression_opts, f[str(i)].shuffle) == ("gzip", 6, True)
            np.testing.assert_allclose(f[str(i)][()], vector, rtol=2**-11, atol=1e-6)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--layers", "bottom"], "--layers 'bottom' is not one of all, top, average"),
        (["--layers", "0.5,0.5"], "2 weights but the biLM has 3 layers"),
        (["--pool", "max"], "pool 'max' is not one of mean"),
        (["--dtype", "int8"], "dtype 'int8' is not one of float32, float16"),
        (["--compression-level", 3], "give --compression gzip with it"),
        (["--stateful", "--max-batch-tokens", 100], "drop --max-batch-tokens"),
        (["--time-loop", "fast"], "unknown time_loop 'fast'; choose one of auto, step, wavefront, captured"),
    ],
)
def test_dump_names_a_bad_output_option_and_writes_nothing(tmp_path, args, message):
    source = tmp_path / "in.txt"
    source.write_text("a b\n", encoding="utf8")
    result = run_cli("dump", source, tmp_path / "out.hdf5", "--model", TINY_MODEL, "--no-progress", *args)
    assert_clear_error(result, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_a_wrong_count_of_layer_weights_is_refused_before_the_weights_load(tmp_path):
    """The model's options say its layers: weights that do not load are never reached."""
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(TINY_MODEL / "options.json", model)
    (model / "weights.hdf5").write_bytes(b"not HDF5")
    source = tmp_path / "in.txt"
    source.write_text("a b\n", encoding="utf8")
    result = run_cli("dump", source, tmp_path / "out.hdf5", "--model", model, "--layers", "0.5,0.5")
    assert_clear_error(result, "2 weights but the biLM has 3 layers")


def test_dump_runs_the_time_loop_asked_for_and_writes_what_the_step_loop_does(tmp_path, monkeypatch):
    """In this process (typer's runner), so that the loop can be watched; run eagerly: compiling takes seconds."""
    from typer.testing import CliRunner

    from spacy_elmo.cli import app
    from spacy_elmo.elmo.nn.time_loops import wavefront
    from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL

    monkeypatch.setattr(WAVE_CELL, "compiling", False)
    calls = []
    run = wavefront.run
    monkeypatch.setattr(wavefront, "run", lambda *args, **kwargs: calls.append(1) or run(*args, **kwargs))
    source = tmp_path / "in.txt"
    source.write_text("The bank rose .\n\nShe sat on the bank of the river .\n", encoding="utf8")
    written = {}
    for time_loop in ("step", "wavefront"):
        target = tmp_path / f"{time_loop}.hdf5"
        args = ["dump", source, target, "--model", TINY_MODEL, "--time-loop", time_loop, "--no-progress"]
        result = CliRunner().invoke(app, list(map(str, args)))
        assert result.exit_code == 0, result.output
        assert bool(calls) == (time_loop == "wavefront")
        with h5py.File(target, "r") as f:
            written[time_loop] = {key: f[key][()] for key in f}
    assert sorted(written["wavefront"]) == sorted(written["step"]) == ["0", "1", "2"]
    for key, layers in written["step"].items():
        assert_matches_reference(written["wavefront"][key], layers)
