"""A TF-Hub module's biLM (elmo/nn/tfhub.py): bilm-tf's network carrying the module's trained mix, which its
description hands to a saved pipeline and a dict round trip gives back unchanged."""

import numpy as np
import torch

from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.nn.options import preset
from spacy_elmo.elmo.nn.tfhub import PublishedMix, TfHubBiLM

MIX = PublishedMix([0.5, -1.0, 2.0], 0.75)


def test_the_mix_survives_a_dict_round_trip_as_floats():
    assert PublishedMix.from_dict(MIX.to_dict()) == MIX
    assert PublishedMix.from_dict({"weights": [1, "2"], "gamma": "3"}) == PublishedMix([1.0, 2.0], 3.0)


def test_the_description_carries_the_mix_or_none():
    options = preset("tiny")
    with_mix = TfHubBiLM(options, MIX)
    assert with_mix.description() == {"published_mix": {"weights": [0.5, -1.0, 2.0], "gamma": 0.75}}
    assert TfHubBiLM(options, None).description() == {"published_mix": None}


def test_it_computes_what_the_plain_bilm_with_its_weights_computes():
    options = preset("tiny")
    torch.manual_seed(0)
    hub = TfHubBiLM(options, MIX).eval()
    plain = BiLM(options).eval()
    plain.load_state_dict(hub.state_dict())
    sentences = [["The", "bank", "rose", "."]]
    np.testing.assert_array_equal(hub.embed(sentences)[0], plain.embed(sentences)[0])
