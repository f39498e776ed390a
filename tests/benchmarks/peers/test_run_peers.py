"""benchmarks/peers/run_peers.py compares implementations over each sentence's tokens only: bilm-tf fills
layer 0 past a sentence's end with its padding row's embedding, which a trained model makes nonzero
(the 0.29 once reported against the bundled model was that, not a token's activation)."""

import numpy as np

from benchmarks.peers.run_peers import token_differences


def test_token_differences_ignore_what_lies_past_each_sentence_end():
    reference = np.zeros((2, 3, 4, 2))  # two sentences of 4 and 2 tokens, three layers
    got = reference.copy()
    got[1, 0, 2:] = 0.29  # layer 0 past the second sentence's end, as bilm-tf pads it
    assert token_differences(got, reference, [4, 2]).tolist() == [0.0, 0.0, 0.0]


def test_token_differences_report_each_layer_largest_difference_on_tokens():
    reference = np.zeros((2, 3, 4, 2))
    got = reference.copy()
    got[0, 1, 3, 1] = 1e-6  # the last token of the longest sentence
    got[1, 2, 1, 0] = -2e-6  # the last token of the shorter one
    got[1, 0, 3] = 5.0  # past its end: not compared
    assert token_differences(got, reference, [4, 2]).tolist() == [0.0, 1e-6, 2e-6]


def test_an_empty_sentence_has_nothing_to_compare():
    reference = np.zeros((1, 2, 3, 2))
    assert token_differences(reference + 1.0, reference, [0]).tolist() == [0.0, 0.0]
