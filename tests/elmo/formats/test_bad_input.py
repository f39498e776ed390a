"""Files that would give a wrong model or a raw traceback: each is an InputFileError naming the file."""

import json
import shutil

import h5py
import numpy as np
import pytest

from spacy_elmo import ElmoOptions, load_bilm
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats import WeightsError, save_weights
from spacy_elmo.elmo.nn.options import OptionsError
from tests.support.cli import run_cli
from tests.support.paths import ALLENNLP_DIR, CONFIGS
from tests.support.pipelines import elmo_config

FIXTURE = ALLENNLP_DIR
OPTIONS, WEIGHTS = FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5"


@pytest.mark.parametrize(
    "change, unused",
    [
        (lambda o: o["lstm"].update(n_layers=1), "RNN_0/RNN/MultiRNNCell/Cell1"),
        (lambda o: o["char_cnn"].update(n_highway=0), "CNN_high_0"),
    ],
)
def test_weights_with_datasets_the_options_do_not_use_are_refused(tmp_path, change, unused):
    options = json.loads(OPTIONS.read_text())
    change(options)
    smaller = tmp_path / "options.json"
    smaller.write_text(json.dumps(options))
    with pytest.raises(WeightsError, match=f"do not use: .*{unused}") as caught:
        load_bilm(smaller, WEIGHTS)
    assert "lm_weights.hdf5" in str(caught.value) and isinstance(caught.value, InputFileError)


def test_a_file_with_one_extra_dataset_is_refused(tmp_path):
    extra = tmp_path / "weights.hdf5"
    shutil.copy(WEIGHTS, extra)
    with h5py.File(extra, "a") as f:
        f["softmax/W"] = [[0.0]]
    with pytest.raises(WeightsError, match="'softmax/W'"):
        load_bilm(OPTIONS, extra)


@pytest.mark.parametrize(
    "path, message",
    [
        ("", "empty"),
        (FIXTURE, "is a directory"),
        (WEIGHTS, "not UTF-8"),
    ],
)
def test_options_that_are_no_options_file(path, message):
    with pytest.raises(OptionsError, match=message) as caught:
        ElmoOptions.from_file(path)
    assert isinstance(caught.value, InputFileError)


def test_latin1_options(tmp_path):
    latin = tmp_path / "options.json"
    latin.write_bytes(b'{"lstm": "\xe9"}')
    with pytest.raises(InputFileError, match="options.json.*not UTF-8"):
        ElmoOptions.from_file(latin)


def test_unknown_model_name_fails_when_the_config_is_built():
    import spacy

    nlp = spacy.blank("en")
    with pytest.raises(Exception, match="no ELMo model 'nope'.*not a bundled model.*spacy_elmo models"):
        nlp.add_pipe("elmo", config=elmo_config(name="nope"))


def test_wrong_number_of_pooling_weights_fails_spacy_debug_config(tmp_path):
    config = CONFIGS / "tagger_elmo.cfg"
    result = run_cli(
        "debug",
        "config",
        config,
        "--paths.train",
        "x",
        "--paths.dev",
        "x",
        "--components.elmo.pooling",
        "[0.5, 0.5]",
        module="spacy",
    )
    assert result.returncode != 0
    assert "pooling has 2 weights but the biLM has 3 layers" in result.stdout + result.stderr


def _with_dataset(tmp_path, name, make):
    """A copy of the fixture's weights whose dataset `name` is replaced by `make(old values)`."""
    changed = tmp_path / "weights.hdf5"
    shutil.copy(WEIGHTS, changed)
    with h5py.File(changed, "a") as f:
        old = f[name][()]
        del f[name]
        f[name] = make(old)
    return changed


BIAS = "CNN/b_cnn_0"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda a: np.where(np.arange(a.size) == 1, np.nan, a), "1 NaN or infinite"),
        (lambda a: np.full_like(a, np.inf), "NaN or infinite"),
        (lambda a: np.full(a.shape, 1e300), "beyond float32's range"),
        (lambda a: a.astype(np.int32), "int32 values, not floating-point"),
        (lambda a: a > 0, "bool values, not floating-point"),
        (lambda a: a.astype(np.complex64), "complex64 values, not floating-point"),
        (lambda a: np.array([b"0.5"] * a.size), "values, not floating-point"),
    ],
    ids=["nan", "inf", "overflow", "int32", "bool", "complex", "string"],
)
def test_weights_that_are_not_finite_floats_are_refused(tmp_path, make, message):
    broken = _with_dataset(tmp_path, BIAS, make)
    with pytest.raises(WeightsError, match=message) as caught:
        load_bilm(OPTIONS, broken)
    assert str(broken) in str(caught.value) and f"'{BIAS}'" in str(caught.value)


def _datasets(path):
    """Every dataset of an HDF5 file: name -> values."""
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, item: found.update({name: item[()]}) if isinstance(item, h5py.Dataset) else None)
    return found


def _write(path, datasets):
    with h5py.File(path, "w") as f:
        for name, values in datasets.items():
            f[name] = values
    return path


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_float64_and_float16_weights_load_as_their_float32_values(tmp_path, dtype):
    """Every dataset stored as `dtype` loads as its value in float32, and the biLM gives exactly the outputs
    of a float32 file holding those values."""
    original = _datasets(WEIGHTS)
    # Values float32 cannot hold (float64 digits beyond its precision, float16 roundings of the originals).
    stored = {name: (values.astype(np.float64) * (1 + 1e-6)).astype(dtype) for name, values in original.items()}
    as_float32 = {name: values.astype(np.float32) for name, values in stored.items()}
    assert all(not np.array_equal(as_float32[name], values) for name, values in original.items() if values.any())
    bilm = load_bilm(OPTIONS, _write(tmp_path / "stored.hdf5", stored))
    save_weights(bilm, tmp_path / "loaded.hdf5")
    loaded = _datasets(tmp_path / "loaded.hdf5")
    assert loaded.keys() == as_float32.keys()
    for name, values in as_float32.items():
        assert loaded[name].dtype == np.float32
        np.testing.assert_array_equal(loaded[name], values, err_msg=name)
    reference = load_bilm(OPTIONS, _write(tmp_path / "float32.hdf5", as_float32))
    sentences = [["The", "cat", "sat", "."], ["Weights", "in", "another", "precision"]]
    for got, expected in zip(bilm.embed(sentences), reference.embed(sentences)):
        np.testing.assert_array_equal(got, expected)


def _options(**changes):
    """The fixture's options with `changes` ({"lstm.n_layers": 10**6, ...}) applied."""
    options = json.loads(OPTIONS.read_text())
    for dotted, value in changes.items():
        *path, key = dotted.split(".")
        section = options
        for name in path:
            section = section[name]
        section[key] = value
    return options


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"lstm.n_layers": 10**6}, "'lstm.n_layers' is 1000000, above the limit of 64"),
        ({"char_cnn.n_highway": 10**6}, "'char_cnn.n_highway' is 1000000, above the limit of 64"),
        ({"lstm.dim": 10**9}, "'lstm.dim' is 1000000000, above the limit of 65536"),
        ({"lstm.projection_dim": 10**9}, "'lstm.projection_dim' is 1000000000, above the limit"),
        ({"char_cnn.embedding.dim": 10**9}, "'char_cnn.embedding.dim' is 1000000000, above the limit"),
        ({"char_cnn.filters": [[1, 10**9]]}, r"'char_cnn.filters\[0\]\[1\]' is 1000000000, above the limit"),
        ({"char_cnn.filters": [[1, 1]] * 1000}, "'char_cnn.filters' has 1000 entries, above the limit of 64"),
        ({"lstm.dim": 65536, "lstm.projection_dim": 65536}, "GiB as float32.*from 'lstm.dim'"),
        ({"char_cnn.filters": [[1, 65536]], "char_cnn.n_highway": 64}, "most of them come from 'char_cnn.n_highway'"),
        ({"lstm.cell_clip": float("nan")}, "'lstm.cell_clip' must be a positive finite number or null"),
        ({"lstm.proj_clip": float("inf")}, "'lstm.proj_clip' must be a positive finite number or null"),
        ({"learning_rate": float("nan")}, "'learning_rate' must be a positive finite number"),
    ],
    ids=[
        "layers",
        "highway",
        "dim",
        "projection",
        "embedding",
        "filter",
        "n_filters",
        "lstm-size",
        "cnn-size",
        "cell-clip-nan",
        "proj-clip-inf",
        "learning-rate-nan",
    ],
)
def test_options_beyond_their_bounds_fail_before_any_allocation(tmp_path, changes, message):
    path = tmp_path / "options.json"
    path.write_text(json.dumps(_options(**changes)))  # NaN and Infinity as Python's json writes them
    with pytest.raises(OptionsError, match=message) as caught:
        load_bilm(path, WEIGHTS)
    assert str(path) in str(caught.value)


def test_a_saved_pipeline_with_such_options_fails_at_load(tmp_path, monkeypatch):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.initialize()
    to_dict = ElmoOptions.to_dict
    monkeypatch.setattr(
        ElmoOptions, "to_dict", lambda self: {**to_dict(self), "lstm": {**to_dict(self)["lstm"], "n_layers": 10**6}}
    )
    nlp.to_disk(tmp_path)
    monkeypatch.undo()
    with pytest.raises(OptionsError, match="'lstm.n_layers' is 1000000, above the limit of 64") as caught:
        spacy.load(tmp_path)
    assert str(tmp_path / "elmo") in str(caught.value)
