"""What every format shares (elmo/formats/base.py): weights checked for NaN and infinity with the dataset
named, and the defaults of a format whose models are plain BiLMs."""

import numpy as np
import pytest

from spacy_elmo.elmo.formats import FORMATS
from spacy_elmo.elmo.formats.base import FormatDefaults, check_finite
from spacy_elmo.elmo.formats.errors import WeightsError
from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.nn.options import preset


def test_finite_weights_pass():
    check_finite(np.array([0.0, -1e30, 3.4e38], dtype=np.float32), "w.hdf5", "char_embed")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_nan_or_infinite_value_names_the_file_the_dataset_and_the_count(bad):
    with pytest.raises(WeightsError, match=r"weights file w.hdf5: dataset 'CNN/W_cnn_0' has 2 NaN .* of 4"):
        check_finite(np.array([1.0, bad, bad, 0.0], dtype=np.float32), "w.hdf5", "CNN/W_cnn_0")


def test_a_plain_format_describes_nothing_and_rebuilds_a_plain_bilm():
    defaults = FormatDefaults()
    options = preset("tiny")
    assert defaults.description_key is None
    assert defaults.describe(BiLM(options)) is None
    rebuilt = defaults.rebuild(options, {})
    assert type(rebuilt) is BiLM and rebuilt.options == options


def test_every_format_has_a_distinct_name_and_says_what_it_expects():
    names = [fmt.name for fmt in FORMATS]
    assert len(set(names)) == len(names)
    assert all(fmt.expects for fmt in FORMATS)
