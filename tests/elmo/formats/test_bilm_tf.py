import shutil

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import BiLM, ElmoOptions, WeightsError, load_bilm, load_weights, save_weights
from tests.support.paths import ALLENNLP_DIR


def _datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def test_save_load_is_an_exact_round_trip(fixture_bilm, fixture_paths, tmp_path):
    saved = tmp_path / "weights.hdf5"
    save_weights(fixture_bilm, saved)
    original = _datasets(fixture_paths[1])
    written = _datasets(saved)
    assert set(written) == set(original)
    for name in original:
        assert written[name].dtype == np.float32
        np.testing.assert_array_equal(written[name], original[name], err_msg=name)
    again = load_bilm(fixture_paths[0], saved)
    for (name, a), (_, b) in zip(fixture_bilm.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name


def test_random_model_round_trip(tmp_path):
    options = ElmoOptions.from_file(ALLENNLP_DIR / "options.json")
    bilm = BiLM(options)
    save_weights(bilm, tmp_path / "w.hdf5")
    again = load_bilm(options, tmp_path / "w.hdf5")
    ids = torch.from_numpy(bilm.char_mapper.batch_ids([["a", "round", "trip"]]))
    with torch.inference_mode():
        np.testing.assert_array_equal(bilm.eval()(ids).layers.numpy(), again(ids).layers.numpy())


def test_padding_row_of_char_embedding_is_zero(fixture_bilm):
    assert torch.count_nonzero(fixture_bilm.char_encoder.char_embed.weight[0]) == 0


def _copy(fixture_paths, tmp_path):
    target = tmp_path / "w.hdf5"
    shutil.copy(fixture_paths[1], target)
    target.chmod(0o644)
    return target


def test_wrong_shape_names_dataset_and_shapes(fixture_paths, tmp_path):
    target = _copy(fixture_paths, tmp_path)
    with h5py.File(target, "r+") as f:
        del f["CNN_proj/W_proj"]
        f.create_dataset("CNN_proj/W_proj", data=np.zeros((124, 32), dtype=np.float32))
    with pytest.raises(WeightsError, match=r"'CNN_proj/W_proj' has shape \(124, 32\).*require \(124, 16\)"):
        load_bilm(fixture_paths[0], target)


def test_missing_dataset_is_named(fixture_paths, tmp_path):
    target = _copy(fixture_paths, tmp_path)
    with h5py.File(target, "r+") as f:
        del f["RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0"]
    with pytest.raises(WeightsError, match="no dataset 'RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0'"):
        load_bilm(fixture_paths[0], target)


def test_truncated_file_names_the_file(fixture_paths, tmp_path):
    target = tmp_path / "cut.hdf5"
    target.write_bytes(fixture_paths[1].read_bytes()[:100_000])
    with pytest.raises(WeightsError, match="cut.hdf5"):
        load_bilm(fixture_paths[0], target)


def test_not_hdf5_and_missing_file(fixture_paths, tmp_path):
    target = tmp_path / "weights.txt"
    target.write_text("these are not weights")
    with pytest.raises(WeightsError, match="weights.txt.*not a readable HDF5"):
        load_bilm(fixture_paths[0], target)
    with pytest.raises(WeightsError, match="does not exist"):
        load_bilm(fixture_paths[0], tmp_path / "nothing.hdf5")


def test_failed_load_leaves_model_untouched(fixture_paths, tmp_path):
    options = ElmoOptions.from_file(fixture_paths[0])
    bilm = BiLM(options)
    before = {k: v.clone() for k, v in bilm.state_dict().items()}
    target = _copy(fixture_paths, tmp_path)
    with h5py.File(target, "r+") as f:
        del f["RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/B"]
    with pytest.raises(WeightsError):
        load_weights(bilm, target)
    for name, value in bilm.state_dict().items():
        assert torch.equal(value, before[name]), name


def test_options_of_another_model_are_rejected(fixture_paths):
    options = ElmoOptions.from_file(fixture_paths[0])
    options.lstm.dim = 128
    with pytest.raises(WeightsError, match="LSTMCell/W_0' has shape \\(32, 256\\).*\\(32, 512\\)"):
        load_bilm(options, fixture_paths[1])
