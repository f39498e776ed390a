"""One text file's layers into HDF5 (elmo/embed/hdf5.py): a dataset per line named by its index, equal to the
biLM's own output, written in blocks with progress, whole or not at all; a file without tokens refused;
each output choice and storage read back as `embed` gives it; a line out of device memory named."""

from types import SimpleNamespace

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.embed import hdf5
from spacy_elmo.elmo.embed.hdf5 import LayersWritten, check_has_tokens, write_layers
from spacy_elmo.elmo.embed.storage import Storage
from spacy_elmo.elmo.errors import DiskFullError, ElmoError
from spacy_elmo.elmo.nn.errors import DeviceMemoryError
from spacy_elmo.elmo.nn.layer_choice import OutputChoice
from spacy_elmo.elmo.nn.run_options import RunOptions
from spacy_elmo.elmo.nn.time_loops import wavefront
from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL
from spacy_elmo.elmo.util import io
from tests.support.paths import TINY_MODEL
from tests.support.tolerance import assert_matches_reference

LINES = ["The bank rose .", "Hi !", "She sat on the bank of the river ."]


@pytest.fixture(scope="module")
def bilm():
    return load_bilm(TINY_MODEL)


def test_each_line_is_a_dataset_of_its_layers(bilm, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    written = write_layers(bilm, source, tmp_path / "out.hdf5", batch_size=2)
    assert written == LayersWritten(sentences=3, tokens=15)
    expected = bilm.embed([line.split() for line in LINES])
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        assert sorted(f) == ["0", "1", "2"]
        for i, layers in enumerate(expected):
            assert f[str(i)].dtype == np.float32
            np.testing.assert_allclose(f[str(i)][()], layers, rtol=0, atol=1e-6)  # batches of 2 vs of 3


def test_blank_lines_are_empty_datasets_counted_in_the_summary(bilm, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("The bank rose .\n\nHi !\n   \n", encoding="utf8")
    written = write_layers(bilm, source, tmp_path / "out.hdf5")
    assert written == LayersWritten(sentences=4, tokens=6, blank_lines=2)
    assert written.summary() == "4 sentences (2 blank lines as empty datasets)"
    assert LayersWritten(2, 1, 1).summary() == "2 sentences (1 blank line as an empty dataset)"
    assert LayersWritten(3, 9).summary() == "3 sentences"
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        assert f["1"].shape == (bilm.n_layers, 0, bilm.output_dim)


def test_the_run_options_reach_every_batch(bilm, tmp_path, monkeypatch):
    monkeypatch.setattr(WAVE_CELL, "compiling", False)  # its logic, eagerly: compiling takes seconds
    calls = []
    run = wavefront.run
    monkeypatch.setattr(wavefront, "run", lambda *args, **kwargs: calls.append(1) or run(*args, **kwargs))
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    write_layers(bilm, source, tmp_path / "out.hdf5", batch_size=2, run=RunOptions(time_loop="wavefront"))
    assert len(calls) == 2
    expected = bilm.embed([line.split() for line in LINES], batch_size=2)
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        for i, layers in enumerate(expected):
            assert_matches_reference(f[str(i)][()], layers)


def test_progress_is_reported_per_block(bilm, tmp_path, monkeypatch):
    monkeypatch.setattr(hdf5, "BATCHES_PER_BLOCK", 1)
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES * 2) + "\n", encoding="utf8")
    blocks = []
    write_layers(bilm, source, tmp_path / "out.hdf5", batch_size=4, on_block=blocks.append)
    assert blocks == [4, 2]


def test_a_failure_midway_leaves_no_output(bilm, tmp_path, monkeypatch):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")

    def interrupted(n_lines):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_layers(bilm, source, tmp_path / "out.hdf5", batch_size=1, on_block=interrupted)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


def test_a_file_without_tokens_is_refused_naming_it(tmp_path):
    empty = tmp_path / "blank.txt"
    empty.write_text("\n  \n\t\n", encoding="utf8")
    with pytest.raises(ElmoError, match="input file .*blank.txt has no tokens"):
        check_has_tokens(empty)
    (tmp_path / "ok.txt").write_text("\n\nword\n", encoding="utf8")
    check_has_tokens(tmp_path / "ok.txt")


def test_a_disk_without_room_for_the_layers_is_refused_before_embedding(bilm, tmp_path, monkeypatch):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    needed = 15 * bilm.n_layers * bilm.output_dim * 4
    free = {"free": needed - 1}
    monkeypatch.setattr(io.shutil, "disk_usage", lambda folder: SimpleNamespace(free=free["free"]))
    monkeypatch.setattr(bilm, "embed", lambda *args, **kwargs: pytest.fail("embedded on a disk without room"))
    with pytest.raises(DiskFullError, match=rf"cannot write {tmp_path / 'out.hdf5'}: it needs .* MiB free"):
        write_layers(bilm, source, tmp_path / "out.hdf5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]


@pytest.mark.slow
def test_a_disk_filling_up_midway_is_one_disk_full_error_and_no_file(bilm, full_disk, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("bank\n" * 2000, encoding="utf8")  # the layers fit; with each dataset's header they do not
    disk = full_disk(1 << 20)
    with pytest.raises(DiskFullError, match=rf"cannot write {disk / 'out.hdf5'}: no space left on the device"):
        write_layers(bilm, source, disk / "out.hdf5")
    assert list(disk.iterdir()) == []


@pytest.mark.parametrize(
    "output,storage",
    [
        (OutputChoice("top"), Storage("float16", "gzip", 9)),
        (OutputChoice([0.2, 0.3, 0.5], "mean"), Storage(compression="lzf")),
        (OutputChoice("average", "mean"), Storage("float16")),
        (OutputChoice("all", "mean"), Storage()),
    ],
)
def test_each_output_choice_round_trips_through_the_file(bilm, tmp_path, output, storage):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf8")
    write_layers(bilm, source, tmp_path / "out.hdf5", output=output, storage=storage, max_batch_tokens=8)
    expected = bilm.embed([line.split() for line in LINES], layers=output.layers, pool=output.pool)
    with h5py.File(tmp_path / "out.hdf5", "r") as f:
        assert sorted(f) == ["0", "1", "2"]
        for i, vectors in enumerate(expected):
            dataset = f[str(i)]
            assert dataset.shape == output.shape(bilm.n_layers, len(LINES[i].split()), bilm.output_dim)
            assert dataset.dtype == np.dtype(storage.dtype) and dataset.compression == storage.compression
            # float16: within half its last bit (11 bits a value), beside float32's 1e-6 between batchings
            rtol = 2**-11 if storage.dtype == "float16" else 0
            np.testing.assert_allclose(dataset[()], vectors, rtol=rtol, atol=1e-6)


def test_a_line_out_of_memory_alone_is_named_by_its_line(bilm, tmp_path, monkeypatch):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(LINES * 2) + "\n", encoding="utf8")
    real = bilm.forward_sentences

    def forward_sentences(sentences, **kwargs):
        if any(len(s) > 8 for s in sentences):
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(sentences, **kwargs)

    monkeypatch.setattr(hdf5, "BATCHES_PER_BLOCK", 1)
    monkeypatch.setattr(bilm, "forward_sentences", forward_sentences)
    with pytest.raises(DeviceMemoryError, match=r"line 3 of .*in.txt \(9 tokens\) does not fit in GPU memory"):
        write_layers(bilm, source, tmp_path / "out.hdf5", batch_size=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]
