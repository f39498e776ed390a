"""Files that would give a wrong model or a raw traceback: each is an InputFileError naming the file."""
import json
import shutil
from pathlib import Path

import h5py
import pytest

from spacy_elmo import ElmoOptions, load_bilm
from spacy_elmo.errors import InputFileError
from spacy_elmo.options import OptionsError
from spacy_elmo.weights import WeightsError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "elmo-allennlp"
OPTIONS, WEIGHTS = FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5"


@pytest.mark.parametrize("change, unused", [
    (lambda o: o["lstm"].update(n_layers=1), "RNN_0/RNN/MultiRNNCell/Cell1"),
    (lambda o: o["char_cnn"].update(n_highway=0), "CNN_high_0"),
])
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


@pytest.mark.parametrize("path, message", [
    ("", "empty"),
    (FIXTURE, "is a directory"),
    (WEIGHTS, "not UTF-8"),
])
def test_options_that_are_no_options_file(path, message):
    with pytest.raises(OptionsError, match=message) as caught:
        ElmoOptions.from_file(path)
    assert isinstance(caught.value, InputFileError)


def test_latin1_options(tmp_path):
    latin = tmp_path / "options.json"
    latin.write_bytes(b'{"lstm": "\xe9"}')
    with pytest.raises(InputFileError, match="options.json.*not UTF-8"):
        ElmoOptions.from_file(latin)
