"""`dump` as one library call (elmo/embed/dump.py): every setting checked before a model loads, the
engine chosen, and one process's file the same as `BiLM.embed`."""

import h5py
import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.embed import dump as dump_module
from spacy_elmo.elmo.embed.dump import DumpSettings, dump
from spacy_elmo.elmo.errors import InputError
from tests.support.paths import TINY_MODEL
from tests.support.tiny_corpus import write_lines

LINES = ["The bank of the river .", "", "Money in the bank"]


@pytest.fixture
def text(tmp_path):
    return write_lines(tmp_path / "in.txt", LINES)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"options": "options.json"}, "give both --options and --weights"),
        ({"stateful": True, "max_batch_tokens": 100}, "drop --max-batch-tokens"),
        ({"engine": "spark"}, "--engine 'spark' is not one of local, ray"),
        ({"engine": "ray", "gpu_id": 0}, "--gpu-id is for --engine local"),
        ({"workers": 2}, "are for --engine ray"),
        ({"layers": "middle"}, "--layers .middle. is not one of"),
        ({"dtype": "int8"}, "int8"),
        ({"time_loop": "sideways"}, "unknown time_loop"),
    ],
)
def test_settings_that_do_not_go_together_are_refused_when_made(settings, message):
    with pytest.raises(InputError, match=message):
        DumpSettings(**settings)


def test_one_process_writes_what_embed_gives(text, tmp_path):
    out = tmp_path / "out.hdf5"
    summary = dump(text, out, DumpSettings(model=str(TINY_MODEL), progress=False, batch_size=2))
    assert summary.sentences == 3 and summary.shards is None
    assert summary.describe(out) == f"wrote 3 sentences (1 blank line as an empty dataset) to {out}"
    expected = load_bilm(TINY_MODEL).embed([line.split() for line in LINES])
    with h5py.File(out, "r") as f:
        for i, layers in enumerate(expected):
            np.testing.assert_allclose(f[str(i)][()], layers, atol=1e-6, rtol=0)


def test_an_output_in_the_way_is_refused_before_the_model_loads(text, tmp_path, monkeypatch):
    def no_model(self):
        raise AssertionError("the model loaded")

    monkeypatch.setattr(DumpSettings, "resolved_model", no_model)
    taken = tmp_path / "taken.hdf5"
    taken.write_bytes(b"mine")
    with pytest.raises(InputError, match="exists; pass --overwrite"):
        dump(text, taken, DumpSettings(progress=False))
    with pytest.raises(InputError, match="is a folder"):
        dump(text, tmp_path, DumpSettings(progress=False))
    with pytest.raises(InputError, match="with --engine ray give the folder"):
        dump(text, taken, DumpSettings(engine="ray", progress=False))
    assert taken.read_bytes() == b"mine"


def test_the_ray_engine_goes_to_the_ray_writer(text, tmp_path, monkeypatch):
    calls = []

    class Shard:
        sentences = 3

    class Manifest:
        shards = [Shard(), Shard()]

    def fake_dump_on_ray(inputs, out_dir, model, **kwargs):
        calls.append((inputs, out_dir, kwargs["workers"], kwargs["batch_size"]))
        return Manifest()

    import spacy_elmo.elmo.embed.ray_dump as ray_dump

    monkeypatch.setattr(ray_dump, "dump_on_ray", fake_dump_on_ray)
    out = tmp_path / "shards"
    settings = DumpSettings(model=str(TINY_MODEL), engine="ray", workers=2, batch_size=7, progress=False)
    summary = dump(text, out, settings)
    assert calls == [(text, out, 2, 7)]
    assert summary.describe(out) == f"wrote 2 shards, 6 sentences, to {out} (manifest.json)"
    assert dump_module.RAY == "ray"


def test_an_untokenized_input_is_told_once_and_dumped(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("Harry? Are you there, Ron?\nYes.\n", encoding="utf8")
    told = []
    summary = dump(raw, tmp_path / "out.hdf5", DumpSettings(model=str(TINY_MODEL), progress=False), told.append)
    assert len(told) == 1 and "tokenize" in told[0] and summary.sentences == 2
