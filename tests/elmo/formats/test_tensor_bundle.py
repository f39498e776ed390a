"""The tensor-bundle reader against checkpoints TensorFlow wrote (tests/fixtures/elmo-tfhub, see its
script): every dtype, several shards, and damaged or incomplete checkpoints failing with the file's name."""

import shutil

import numpy as np
import pytest

from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats.tensor_bundle import TensorBundle, crc32c
from tests.support.paths import FIXTURES

TFHUB = FIXTURES / "elmo-tfhub"
DTYPES = TFHUB / "dtypes" / "variables.index"


def test_every_dtype_reads_as_tensorflow_saved_it():
    bundle = TensorBundle(DTYPES)
    expected = np.load(TFHUB / "dtypes.npz")
    assert bundle.n_shards == 2
    assert {entry.shard for entry in bundle.entries.values()} == {0, 1}
    for name in expected.files:
        value = bundle.read(name)
        assert value.dtype == expected[name].dtype, name
        np.testing.assert_array_equal(value, expected[name], err_msg=name)


def test_a_string_variable_is_refused_by_name():
    with pytest.raises(InputFileError, match=r"variables\.index: variable 'string' has TensorFlow dtype number 7"):
        TensorBundle(DTYPES).read("string")


def test_crc32c_is_castagnoli():
    assert crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C


def test_a_missing_shard_names_the_file(tmp_path):
    copy = shutil.copytree(TFHUB / "google-2shards" / "variables", tmp_path / "variables")
    (copy / "variables.data-00000-of-00002").unlink()
    bundle = TensorBundle(copy / "variables.index")
    bundle.read("bilm/CNN/W_cnn_0")  # in the other shard
    with pytest.raises(InputFileError, match=r"variables\.data-00000-of-00002 does not exist"):
        bundle.read("bilm/char_embed")


def test_a_truncated_shard_names_the_file(tmp_path):
    copy = shutil.copytree(TFHUB / "dp-1shard" / "variables", tmp_path / "variables")
    data = copy / "variables.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(InputFileError, match=r"variables\.data-00000-of-00001 ends before variable"):
        TensorBundle(copy / "variables.index").read("bilm/RNN_1/RNN/MultiRNNCell/Cell1/rnn/lstm_cell/kernel")


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda raw: raw[:-1], "magic number"),
        (lambda raw: raw[:20], "shorter than a table's footer"),
        (lambda raw: raw[:10] + bytes([raw[10] ^ 0xFF]) + raw[11:], "fails its checksum"),
    ],
)
def test_a_damaged_index_names_the_file(tmp_path, damage, message):
    index = tmp_path / "variables.index"
    index.write_bytes(damage((TFHUB / "dp-1shard" / "variables" / "variables.index").read_bytes()))
    with pytest.raises(InputFileError, match=message) as caught:
        TensorBundle(index)
    assert str(index) in str(caught.value)
    assert isinstance(caught.value, InputFileError)


def test_a_missing_index_names_the_file(tmp_path):
    with pytest.raises(InputFileError, match=r"checkpoint index .*variables\.index does not exist"):
        TensorBundle(tmp_path / "variables.index")
