"""The library's device choice (elmo/nn/device.py): torch alone picks the GPU `dump --gpu-id` names."""

import pytest
import torch

from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.nn import device


def test_a_negative_gpu_id_is_the_cpu():
    assert device.torch_device(-1) == torch.device("cpu")


def test_a_gpu_torch_does_not_see_is_named_with_the_fix(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match=r"--gpu-id 0: torch sees no GPU.*leave --gpu-id out"):
        device.torch_device(0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(InputError, match=r"--gpu-id 2: torch sees GPUs 0-1"):
        device.torch_device(2)


def test_a_gpu_torch_sees_becomes_the_current_one(monkeypatch):
    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    assert device.torch_device(1) == torch.device("cuda", 1) and chosen == [1]


def test_the_default_is_a_gpu_only_where_torch_sees_one(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.default_device() == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.default_device() == torch.device("cuda")
