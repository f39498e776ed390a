"""The one place the biLM's device is chosen (`--gpu-id`) and applied (the device of thinc's ops), shared
by the component and `dump --gpu-id`."""

import pytest
import torch
from thinc.api import NumpyOps, get_current_ops

from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline import device
from spacy_elmo.pipeline.device import place_bilm, use_gpu_id


def test_place_bilm_follows_the_device_of_thincs_ops(monkeypatch):
    monkeypatch.setattr(device, "get_torch_default_device", lambda: torch.device("meta"))
    bilm = BiLM(preset("tiny")).train()
    placed = place_bilm(bilm)
    assert not placed.training
    assert {parameter.device.type for parameter in placed.parameters()} == {"meta"}


def test_gpu_id_minus_one_is_the_cpu():
    use_gpu_id(-1)
    assert isinstance(get_current_ops(), NumpyOps)
    assert next(place_bilm(BiLM(preset("tiny"))).parameters()).device.type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without a GPU")
def test_a_gpu_id_without_a_gpu_names_the_option_and_the_way_back():
    with pytest.raises(ElmoError, match="--gpu-id 0: no GPU that spaCy can use .* leave --gpu-id out"):
        use_gpu_id(0)
    assert isinstance(get_current_ops(), NumpyOps)
