"""Fuzzing a saved pipeline's `elmo/model` (saved_model.py, bilm_layer/bilm_holder.py): changed, cut and
random bytes of the file as saved, and of a safetensors header behind no digest (a pipeline saved before
it, or a crafted file), give the vectors the pipeline was saved with or a SavedWeightsError naming the
file, never another exception and never other vectors. Behind no digest, the whole file is held to the
package's error or a working biLM (a changed option or weight reads as it is there)."""

from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np
import pytest
import spacy
from hypothesis import example, given

from spacy_elmo.elmo.errors import OptionsError
from spacy_elmo.pipeline.errors import SavedWeightsError
from tests.support.fuzz import Damage, damages, fuzz_settings
from tests.support.pipelines import elmo_config
from tests.support.saved_pipelines import holder_of, thinc_bytes

TEXT = "She sat on the bank ."
ELMO = elmo_config()


class Saved(NamedTuple):
    model_file: bytes  # elmo/model as saved, with its digest
    legacy: bytes  # thinc's bytes alone, as saved before the digest
    header: slice  # the safetensors header's bytes (its length and JSON) in `legacy`
    vectors: np.ndarray
    folder: Path


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    folder = tmp_path_factory.mktemp("saved")
    nlp.to_disk(folder)
    model_file = (folder / "elmo" / "model").read_bytes()
    legacy = thinc_bytes(model_file)
    weights = holder_of(model_file)["safetensors"]
    start = legacy.index(weights)
    header = slice(start, start + 8 + int.from_bytes(weights[:8], "little"))
    return Saved(model_file, legacy, header, nlp(TEXT)._.elmo["vectors"], folder)


def _vectors(saved: Saved, data: bytes) -> Optional[np.ndarray]:
    """The vectors of TEXT from a pipeline whose `elmo/model` holds `data`, or None where that is refused
    with the package's error naming the file: SavedWeightsError, or OptionsError for options out of their
    bounds (only behind no digest)."""
    (saved.folder / "elmo" / "model").write_bytes(data)
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    try:
        elmo.from_disk(saved.folder / "elmo", exclude=["vocab"])
    except (SavedWeightsError, OptionsError) as err:
        assert str(saved.folder / "elmo" / "model") in str(err)
        return None
    return nlp(TEXT)._.elmo["vectors"]


def _loads_as_saved_or_refused(saved: Saved, data: bytes) -> None:
    """The property: the saved vectors, or the package's error naming the file."""
    vectors = _vectors(saved, data)
    if vectors is not None:
        np.testing.assert_array_equal(vectors, saved.vectors)


@fuzz_settings(slow=False)
@given(damage=damages())
@example(damage=Damage(keep=1000))
def test_a_damaged_model_file_loads_as_saved_or_is_refused(saved, damage):
    _loads_as_saved_or_refused(saved, damage.apply(saved.model_file))


@pytest.mark.slow
@fuzz_settings(slow=True)
@given(damage=damages())
def test_a_damaged_model_file_loads_as_saved_or_is_refused_long_run(saved, damage):
    _loads_as_saved_or_refused(saved, damage.apply(saved.model_file))


# The case: the first tensor's dtype "F32" made "I32" (F ^ I == 0x0F).
F32_TO_I32 = Damage(changes=((57, 0x0F),))


@fuzz_settings(slow=False)
@given(damage=damages())
@example(damage=F32_TO_I32)
def test_a_damaged_safetensors_header_behind_no_digest_loads_as_saved_or_is_refused(saved, damage):
    _loads_as_saved_or_refused(saved, damage.apply(saved.legacy, saved.header.start, saved.header.stop))


@pytest.mark.slow
@fuzz_settings(slow=True)
@given(damage=damages())
def test_a_damaged_safetensors_header_behind_no_digest_loads_as_saved_or_is_refused_long_run(saved, damage):
    _loads_as_saved_or_refused(saved, damage.apply(saved.legacy, saved.header.start, saved.header.stop))


@pytest.mark.slow
@fuzz_settings(slow=True)
@given(damage=damages())
def test_a_damaged_model_file_behind_no_digest_runs_or_is_refused_long_run(saved, damage):
    """Behind no digest a changed option or weight reads as it is: still never another exception, and
    a biLM of the width its tensors were checked for."""
    vectors = _vectors(saved, damage.apply(saved.legacy))
    assert vectors is None or vectors.shape == saved.vectors.shape
