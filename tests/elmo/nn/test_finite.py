"""Weights that are each finite but overflow float32 in the activations: every face refuses to hand out
the NaN vectors, naming the weight to blame; a weight that training turned to NaN is named with the fix."""

import shutil

import h5py
import numpy as np
import pytest
import spacy
import torch

from spacy_elmo import load_bilm
from spacy_elmo.allennlp import Elmo, batch_to_ids
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.nn.finite import check_finite
from spacy_elmo.elmo.sources import MODELS_DIR
from tests.support.cli import assert_clear_error, run_cli
from tests.support.pipelines import elmo_config

TINY = MODELS_DIR / "fixture-tiny"
OVERFLOW = "overflow float32"


@pytest.fixture
def rescaled(tmp_path):
    """fixture-tiny with every weight times 1e10: each one finite, the char-CNN's products not."""
    folder = tmp_path / "rescaled"
    shutil.copytree(TINY, folder)
    with h5py.File(folder / "weights.hdf5", "a") as f:
        names: list = []
        f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
        for name in names:
            f[name][...] = f[name][...] * np.float32(1e10)
    return folder


def test_embed_and_embed_tokens_refuse_overflowing_weights(rescaled):
    bilm = load_bilm(rescaled)
    with pytest.raises(InputFileError, match=OVERFLOW) as caught:
        bilm.embed([["Hello", "world"]])
    assert "the largest" in str(caught.value) and "original weights" in str(caught.value)
    with pytest.raises(InputFileError, match="token embeddings are not finite"):
        bilm.embed_tokens(["Hello"])


def test_a_pipeline_refuses_overflowing_weights(rescaled):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(model=str(rescaled)))
    nlp.initialize()
    with pytest.raises(InputFileError, match=OVERFLOW):
        nlp("Hello world")


def test_the_allennlp_face_refuses_overflowing_weights(rescaled):
    elmo = Elmo(rescaled / "options.json", rescaled / "weights.hdf5", 1, dropout=0.0)
    with pytest.raises(InputFileError, match=OVERFLOW):
        elmo(batch_to_ids([["Hello", "world"]]))


def test_dump_fails_with_a_message_and_no_output(rescaled, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Hello world\n", encoding="utf8")
    output = tmp_path / "out.hdf5"
    result = run_cli("dump", text, output, "--model", str(rescaled), "--no-progress", timeout=120)
    assert_clear_error(result, OVERFLOW)
    assert not output.exists()


def test_a_weight_gone_nan_is_named_with_the_fix():
    bilm = load_bilm(TINY)
    with torch.no_grad():
        bilm.lstm.layers[1].state_weight[0, 0, 0] = float("nan")
    with pytest.raises(InputFileError, match=r"'lstm\.layers\.1\.state_weight' holds NaN") as caught:
        bilm.embed([["Hello", "world"]])
    assert "lower learning rate" in str(caught.value)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_finite_values_pass_and_one_nan_or_infinity_among_them_is_caught(bad):
    bilm = load_bilm(TINY)
    values = torch.randn(3, 8, 16)
    check_finite(values, bilm, "activations")
    values[1, 2, 3] = bad
    with pytest.raises(InputFileError, match="activations are not finite"):
        check_finite(values, bilm, "activations")
