"""`evaluate`'s model folder, fuzzed: the softmax with a dataset of another dtype or shape, a group,
missing or non-finite, its bytes or the vocabulary's mutated. Each gives a finite perplexity or the
package's error; a softmax loads only while it holds the weights, as floats."""

import math
import shutil

import h5py
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from spacy_elmo.elmo.errors import ElmoError, InputFileError
from spacy_elmo.elmo.pretrain import TrainingError, load_language_model, perplexity
from tests.support.fuzz import RUNS, fuzz_settings, mutated
from tests.support.hdf5_changes import CHANGES, LOADABLE
from tests.support.paths import TRAIN_TEXT
from tests.support.pretraining import untrained_export

# Only softmax/W and softmax/b are read, each checked: another dataset beside them changes nothing.
SOFTMAX_LOADABLE = LOADABLE | {"an extra dataset"}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return untrained_export(tmp_path_factory.mktemp("evaluate") / "model")


def _perplexity_or_error(folder):
    """The folder's held-out perplexity (finite), or None after an error naming the folder or the weights."""
    try:
        model, vocab = load_language_model(folder)
    except InputFileError as err:
        assert str(folder) in str(err), err
        return None
    try:
        result = perplexity(model, vocab, TRAIN_TEXT, batch_size=4, unroll_steps=8, max_tokens=40)
    except TrainingError:
        return None
    assert all(math.isfinite(value) for value in (result.forward, result.backward, result.average))
    return result


@pytest.mark.parametrize("slow", RUNS)
def test_a_changed_softmax_dataset_loads_only_while_it_holds_the_weights(slow, model_dir, tmp_path):
    folder = tmp_path / "model"

    @fuzz_settings(slow)
    @given(name=st.sampled_from(["softmax/W", "softmax/b"]), change=st.sampled_from(sorted(CHANGES)))
    @example(name="softmax/W", change="a group")  # AttributeError
    @example(name="softmax/W", change="strings")  # parsed silently
    @example(name="softmax/W", change="near float32's limit")  # an infinite perplexity, exit code 0
    def check(name, change):
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(model_dir, folder)
        with h5py.File(folder / "softmax.hdf5", "a") as f:
            CHANGES[change](f, name)
        try:
            load_language_model(folder)
        except ElmoError as err:
            assert change not in SOFTMAX_LOADABLE and str(folder) in str(err), err
            return
        assert change in SOFTMAX_LOADABLE
        _perplexity_or_error(folder)

    check()


@pytest.mark.parametrize("slow", RUNS)
def test_a_mutated_softmax_or_vocabulary_gives_a_perplexity_or_the_error(slow, model_dir, tmp_path):
    folder = tmp_path / "model"

    @fuzz_settings(slow)
    @given(name=st.sampled_from(["softmax.hdf5", "vocab.txt"]), data=st.data())
    def check(name, data):
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(model_dir, folder)
        (folder / name).write_bytes(data.draw(mutated((model_dir / name).read_bytes())))
        _perplexity_or_error(folder)

    check()
