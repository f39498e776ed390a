"""The char-CNN cuts the padding columns that cannot change its output: values and gradients equal the
computation over all `max_characters_per_token` columns, whatever the mix of token lengths."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_elmo.elmo.nn.char_encoder import CharEncoder, token_lengths
from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.nn.options import CharCNNOptions

TOKENS = st.lists(
    st.one_of(
        st.text(min_size=1, max_size=8),
        st.text(min_size=40, max_size=60),  # 48 bytes and more fill every column
        st.sampled_from(["<S>", "</S>", "a", "é", "🙂"]),
    ),
    min_size=1,
    max_size=40,
)


def encoder(activation: str) -> CharEncoder:
    options = CharCNNOptions(
        embedding_dim=4,
        filters=[(1, 3), (2, 4), (5, 6)],
        n_highway=1,
        max_characters_per_token=50,
        activation=activation,
    )
    torch.manual_seed(0)
    model = CharEncoder(options, projection_dim=5)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.3 * torch.randn_like(parameter))  # non-zero biases and padding embedding
        model.char_embed.weight[0].zero_()
    return model.double()


def char_ids(tokens) -> torch.Tensor:
    mapper = CharacterMapper(50)
    rows = [mapper.token_ids(t) for t in tokens]
    # An all-zero row, as batch padding gives.
    return torch.from_numpy(np.stack(rows + [np.zeros_like(rows[0])]))


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@settings(max_examples=30, deadline=None, derandomize=True)
@given(tokens=TOKENS)
def test_cut_columns_change_neither_values_nor_gradients(activation, tokens):
    model = encoder(activation)
    model.chunk_size = 7  # several chunks of different lengths
    ids = char_ids(tokens)
    weights = torch.randn(
        ids.shape[0], model.output_dim, dtype=torch.float64, generator=torch.Generator().manual_seed(1)
    )

    def run(encode):
        model.zero_grad()
        out = encode()
        (out * weights).sum().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters()]

    cut, cut_grads = run(lambda: model.encode_rows(ids))
    full, full_grads = run(lambda: model._encode(ids, ids.shape[1]))
    torch.testing.assert_close(cut, full, rtol=0, atol=1e-12)
    for a, b in zip(cut_grads, full_grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_short_tokens_are_convolved_over_few_columns(monkeypatch):
    model = encoder("relu")
    seen = []
    conv = torch.nn.Conv1d.forward
    monkeypatch.setattr(torch.nn.Conv1d, "forward", lambda self, x: seen.append(x.shape[-1]) or conv(self, x))
    model.encode_rows(char_ids(["a", "to", "the"]))
    # "the" is BOW + 3 bytes + EOW = 5 ids, plus the widest filter (5).
    assert set(seen) == {10}


def test_rows_sorted_by_length_need_no_copy_and_others_one(monkeypatch):
    model = encoder("relu")
    model.chunk_size = 2
    ids = char_ids(["internationalization", "a", "the", "to", "bank", "x"])
    lengths = token_lengths(ids.numpy())
    order = np.argsort(lengths, kind="stable")
    expected = model._encode(ids, ids.shape[1])
    copies = []
    from_numpy = torch.from_numpy
    monkeypatch.setattr(torch, "from_numpy", lambda array: copies.append(array.shape) or from_numpy(array))
    torch.testing.assert_close(model.encode_rows(ids, lengths), expected, rtol=0, atol=1e-12)
    assert len(copies) == 1, "one host-to-device copy of the order, not one per chunk"
    copies.clear()
    torch.testing.assert_close(model.encode_rows(ids[order], lengths[order]), expected[order], rtol=0, atol=1e-12)
    assert copies == []
