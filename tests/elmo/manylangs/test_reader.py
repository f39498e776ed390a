"""ELMoForManyLangs' files (elmo/manylangs/reader.py): weight files read only as plain tensor state dicts,
never running a pickle's code; sizes checked tensor by tensor; the config's path found as its code finds
it; pickles saved from a GPU loaded on the CPU."""

import io
import json
import pickle
import re
import shutil

import pytest
import spacy
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats import WeightsError
from tests.elmo.formats.test_formats import MANYLANGS, _same_outputs
from tests.support.pipelines import elmo_config


class NotATensor:
    pass


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"projection.weight": NotATensor()}, "not a plain torch state dict"),
        ([torch.zeros(2)], "holds a list"),
        ({"projection.weight": 3}, "not a state dict of tensors"),
    ],
)
def test_weight_files_that_are_not_tensor_state_dicts_are_refused(tmp_path, payload, message):
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    torch.save(payload, model / "encoder.pkl")
    with pytest.raises(WeightsError, match=f"encoder.pkl.*{message}|{message}.*encoder.pkl"):
        load_bilm(model)


def test_a_legacy_pickle_naming_a_storage_it_lacks_is_refused(tmp_path):
    """torch's legacy loader asserts that the storages listed after the pickle are in it: an
    AssertionError, not an unpickling error, from one changed digit."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    buffer = io.BytesIO()
    state = torch.load(model / "encoder.pkl", weights_only=True)
    torch.save(state, buffer, _use_new_zipfile_serialization=False)
    raw = buffer.getvalue()
    # The last storage key: a pickled string of digits (as many as the storage's address has).
    key = [m for m in re.finditer(rb"X([\x01-\x20])\x00\x00\x00", raw) if raw[m.end() : m.end() + m[1][0]].isdigit()][
        -1
    ]
    (model / "encoder.pkl").write_bytes(raw[: key.end()] + b"0" * key[1][0] + raw[key.end() + key[1][0] :])
    with pytest.raises(WeightsError, match="encoder.pkl is not a plain torch state dict, or is damaged"):
        load_bilm(model)


@pytest.mark.parametrize(
    "value, message",
    [
        (float("nan"), "has 1 NaN or infinite value"),
        (1e300, "has 1 NaN or infinite value"),  # beyond float32 when read
        (None, "holds torch.int64 values, not floating-point numbers"),
    ],
)
def test_weights_that_are_no_finite_floats_are_refused(tmp_path, value, message):
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    state = torch.load(model / "encoder.pkl", weights_only=True)
    name = next(iter(state))
    if value is None:
        state[name] = state[name].long()
    else:
        state[name] = state[name].double()
        state[name].view(-1)[0] = value
    torch.save(state, model / "encoder.pkl")
    with pytest.raises(WeightsError, match=f"encoder.pkl.*{message}"):
        load_bilm(model)


def test_a_pickle_with_code_is_never_run(tmp_path):
    class Boom:
        def __reduce__(self):
            return (shutil.rmtree, (str(tmp_path / "victim"),))

    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    (tmp_path / "victim").mkdir()
    (model / "token_embedder.pkl").write_bytes(pickle.dumps(Boom(), protocol=2))
    with pytest.raises(WeightsError, match="token_embedder.pkl"):
        load_bilm(model)
    assert (tmp_path / "victim").exists()


def test_weights_of_another_size_name_the_tensor(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    config = json.loads((model / "cnn_model_config.json").read_text(encoding="utf8"))
    config["encoder"]["dim"] = 32
    (model / "cnn_model_config.json").write_text(json.dumps(config), encoding="utf8")
    with pytest.raises(WeightsError, match="input_linearity.weight' has shape"):
        load_bilm(model)


def test_the_config_path_falls_back_as_its_code_does(tmp_path):
    """config.json names a path on its authors' machine; the file of that name in the directory is
    used, and a name that is not there either is an error naming both."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    (model / "config.json").write_text(
        json.dumps({"config_path": str(tmp_path / "authors-machine" / "other.json")}), encoding="utf8"
    )
    with pytest.raises(InputFileError, match="other.json"):
        load_bilm(model)


def test_old_pickles_saved_from_a_gpu_load_on_the_cpu(tmp_path):
    """The released .pkl files are the pre-zip pickle format, some saved from a GPU: the storages name
    `torch.cuda` and the location 'cuda:0'. Rewriting a CPU-saved fixture into that form makes one."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    for name in ("token_embedder.pkl", "encoder.pkl"):
        data = (model / name).read_bytes()
        assert b"ctorch\nFloatStorage\n" in data and b"X\x03\x00\x00\x00cpu" in data
        data = data.replace(b"ctorch\nFloatStorage\n", b"ctorch.cuda\nFloatStorage\n")
        (model / name).write_bytes(data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    _same_outputs(load_bilm(model), load_bilm(MANYLANGS))


def _model_with(tmp_path, n_words=None, **embedder):
    """The fixture model with its config's token_embedder keys changed, and word.dic of `n_words` words."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    config = json.loads((model / "cnn_model_config.json").read_text(encoding="utf8"))
    config["token_embedder"].update(embedder)
    (model / "cnn_model_config.json").write_text(json.dumps(config), encoding="utf8")
    if n_words is not None:
        special = (model / "word.dic").read_text(encoding="utf8").splitlines()[:4]
        words = [f"w{i}\t{i + len(special)}" for i in range(n_words)]
        (model / "word.dic").write_text("\n".join(special + words) + "\n", encoding="utf8")
    return model


@pytest.mark.parametrize(
    "n_words,embedder,error,message",
    [
        (
            None,
            {"word_dim": 1_000_000_000},
            InputFileError,
            "'token_embedder.word_dim' must be an integer from 0 to 65536",
        ),
        (None, {"char_dim": 60_000}, WeightsError, r"too few for the .* embedding weights .*char_dim 60000 x"),
        (300_000, {"word_dim": 2000}, WeightsError, r"word_dim 2000 x 300004 word.dic words"),
        (300_000, {"word_dim": 60_000}, InputFileError, r"above the limit of 1,073,741,824; most come from word_dim"),
    ],
)
def test_embeddings_too_large_for_memory_or_their_file_are_refused_before_allocating(
    tmp_path, n_words, embedder, error, message
):
    model = _model_with(tmp_path, n_words, **embedder)
    with pytest.raises(error, match=message):
        load_bilm(model)


def test_a_spacy_pipeline_on_such_a_model_names_it(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(path=str(_model_with(tmp_path, char_dim=60_000))))
    with pytest.raises(WeightsError, match="char_dim 60000"):
        nlp.initialize()
