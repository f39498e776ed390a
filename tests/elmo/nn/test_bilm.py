"""The biLM's behaviour beyond the reference numbers: batch independence, edge cases, state handling."""

import numpy as np
import pytest
import torch

from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.nn.token_cache import TokenEmbeddingCache

SENTENCE = "The bank raised its rates again .".split()
OTHERS = [
    "A much longer sentence that makes the batch wider than the one we care about by many tokens .".split(),
    "Short one .".split(),
    ["x"],
    [],
]


def test_sentence_alone_equals_sentence_in_mixed_batches(fixture_bilm):
    alone = fixture_bilm.embed([SENTENCE])[0]
    for batch_size in (1, 2, 5):
        mixed = fixture_bilm.embed([OTHERS[0], SENTENCE, *OTHERS[1:]], batch_size=batch_size)[1]
        np.testing.assert_allclose(mixed, alone, atol=1e-6, rtol=0)


def test_shapes_empty_and_single_token(fixture_bilm):
    out = fixture_bilm.embed([[], ["word"], SENTENCE])
    assert out[0].shape == (3, 0, 32)
    assert out[1].shape == (3, 1, 32)
    assert out[2].shape == (3, len(SENTENCE), 32)
    assert all(o.dtype == np.float32 for o in out)
    assert np.isfinite(out[1]).all() and np.abs(out[1][2]).sum() > 0
    assert fixture_bilm.embed([]) == []
    assert fixture_bilm.embed_tokens([]).shape == (0, 16)


@pytest.mark.parametrize(
    "call, fix",
    [
        (lambda bilm: bilm.embed(["She went to the bank"]), "split each sentence into tokens"),
        (lambda bilm: bilm.embed("She went"), "split each sentence into tokens"),
        (lambda bilm: bilm.embed([SENTENCE, "She went"]), "nlp(text)"),
        (lambda bilm: bilm.embed_tokens("bank"), "['bank'] for one token"),
    ],
)
def test_a_string_where_tokens_are_expected_is_refused_not_read_as_characters(fixture_bilm, call, fix):
    with pytest.raises(InputError, match="lists? of tokens") as error:
        call(fixture_bilm)
    assert fix in str(error.value)


def test_context_changes_upper_layers_only(fixture_bilm):
    money, river = fixture_bilm.embed(
        ["went to the bank to withdraw money".split(), "sat on the bank of the river".split()]
    )
    np.testing.assert_array_equal(money[0, 3], river[0, 3])
    assert np.abs(money[1:, 3] - river[1:, 3]).max() > 1e-3


def test_forward_output_mask_and_padding(fixture_bilm):
    ids = fixture_bilm.char_mapper.batch_ids([SENTENCE, ["a", "b"]])
    with torch.inference_mode():
        out = fixture_bilm(torch.from_numpy(ids))
    assert out.layers.shape == (3, 2, len(SENTENCE), 32)
    assert out.mask[1].tolist() == [True, True] + [False] * (len(SENTENCE) - 2)
    assert (out.layers[:, 1, 2:] == 0).all()


def test_kept_boundaries_and_embedded_input_give_the_same_inner_rows(fixture_bilm):
    ids = torch.from_numpy(fixture_bilm.char_mapper.batch_ids([SENTENCE, ["a", "b"]]))
    with torch.inference_mode():
        inner = fixture_bilm(ids)
        kept = fixture_bilm(ids, keep_boundaries=True)
        embedded = fixture_bilm.forward_embedded(
            fixture_bilm.token_embeddings(ids), np.array([len(SENTENCE) + 2, 4]), keep_boundaries=True
        )
    assert kept.layers.shape == (3, 2, len(SENTENCE) + 2, 32)
    assert kept.mask.sum(dim=1).tolist() == [len(SENTENCE) + 2, 4]
    assert (kept.layers[:, 1, 4:] == 0).all()
    torch.testing.assert_close(kept.layers[:, 0, 1:-1], inner.layers[:, 0])
    torch.testing.assert_close(kept.layers[:, 1, 1:3], inner.layers[:, 1, :2])
    torch.testing.assert_close(embedded.layers, kept.layers, atol=1e-6, rtol=1e-6)


def test_stateful_carries_state_and_reset_restores(fresh_bilm):
    batch = [SENTENCE, OTHERS[1]]
    cold = fresh_bilm.embed(batch, stateful=True)
    warm = fresh_bilm.embed(batch, stateful=True)
    assert np.abs(cold[0][1:] - warm[0][1:]).max() > 1e-4
    fresh_bilm.reset_states()
    np.testing.assert_array_equal(fresh_bilm.embed(batch, stateful=True)[0], cold[0])


def test_rows_absent_from_a_smaller_batch_keep_their_state(fresh_bilm):
    a, b = SENTENCE, OTHERS[1]
    fresh_bilm.embed([a, b], stateful=True)
    fresh_bilm.embed([a], stateful=True, batch_size=1)  # row 1 absent
    kept = fresh_bilm.embed([a, b], stateful=True)[1]
    fresh_bilm.reset_states()
    fresh_bilm.embed([a, b], stateful=True)
    expected = fresh_bilm.embed([a, b], stateful=True)[1]
    fresh_bilm.reset_states()
    np.testing.assert_array_equal(kept, expected)


def test_stateful_states_are_detached(fresh_bilm):
    ids = torch.from_numpy(fresh_bilm.char_mapper.batch_ids([SENTENCE]))
    out = fresh_bilm(ids, stateful=True)
    assert out.layers.requires_grad
    h, c = fresh_bilm._states[0]
    assert not h.requires_grad and not c.requires_grad


def test_every_size_builds_from_options():
    options = preset("small")
    options.lstm.n_layers = 3
    options.lstm.use_skip_connections = False
    options.char_cnn.n_highway = 0
    options.char_cnn.activation = "tanh"
    bilm = BiLM(options).eval()
    out = bilm.embed([["hello", "world"]])[0]
    assert out.shape == (4, 2, 256)
    assert bilm.char_encoder.projection is not None


def test_projection_skipped_when_sizes_match():
    options = preset("small")
    options.lstm.projection_dim = options.char_cnn.n_filters
    assert BiLM(options).char_encoder.projection is None


@pytest.mark.parametrize("batch_size", [0, -1])
def test_bad_batch_size(fixture_bilm, batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        fixture_bilm.embed([SENTENCE], batch_size=batch_size)


def test_token_cache_gives_the_same_numbers_and_is_bounded(fixture_paths):
    from spacy_elmo import load_bilm

    bilm = load_bilm(*fixture_paths)
    bilm.token_cache = TokenEmbeddingCache(capacity=5)
    sentences = [SENTENCE, OTHERS[0]]
    cold = bilm.embed(sentences)
    assert len(bilm.token_cache) == 5
    warm = bilm.embed(sentences)
    ids = torch.from_numpy(bilm.char_mapper.batch_ids(sentences))
    with torch.inference_mode():
        direct = bilm(ids).layers.numpy()
    for i, s in enumerate(sentences):
        np.testing.assert_array_equal(cold[i], warm[i])
        np.testing.assert_allclose(cold[i], direct[:, i, : len(s)], atol=1e-6, rtol=0)


def test_token_cache_is_cleared_when_weights_change(fixture_paths):
    from spacy_elmo import load_bilm, load_weights

    bilm = load_bilm(*fixture_paths)
    bilm.embed([SENTENCE])
    assert len(bilm.token_cache) > 0
    load_weights(bilm, fixture_paths[1])
    assert len(bilm.token_cache) == 0


def test_token_cache_survives_mode_switches_and_notices_in_place_edits(fixture_paths):
    """thinc's shim calls eval() and train() around every prediction: that must not empty the cache;
    an in-place change of a char-CNN weight (an optimizer step, a manual edit) must."""
    from spacy_elmo import load_bilm

    bilm = load_bilm(*fixture_paths)
    bilm.embed([SENTENCE])
    bilm.train()
    bilm.eval()
    bilm.embed([SENTENCE])
    assert len(bilm.token_cache) > 0
    with torch.no_grad():
        for parameter in bilm.char_encoder.parameters():
            parameter.mul_(0.9)
    edited = bilm.embed([SENTENCE])
    reference = load_bilm(*fixture_paths)
    with torch.no_grad():
        for parameter in reference.char_encoder.parameters():
            parameter.mul_(0.9)
    np.testing.assert_allclose(edited, reference.embed([SENTENCE]), atol=1e-6)


def test_no_cache_when_gradients_are_wanted(fixture_paths):
    from spacy_elmo import load_bilm

    bilm = load_bilm(*fixture_paths)
    out = bilm.forward_sentences([SENTENCE])
    assert len(bilm.token_cache) == 0
    out.layers.sum().backward()
    assert bilm.char_encoder.char_embed.weight.grad is not None


def test_warm_start_is_deterministic_batch_independent_and_reversible(fixture_paths):
    from spacy_elmo import load_bilm

    bilm = load_bilm(*fixture_paths)
    zero = bilm.embed([SENTENCE])[0]
    bilm.set_warm_start()
    assert bilm.warm_start
    alone = bilm.embed([SENTENCE])[0]
    mixed = bilm.embed([OTHERS[0], SENTENCE, OTHERS[1]], batch_size=2)[1]
    np.testing.assert_allclose(mixed, alone, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(alone[0], zero[0])  # the token layer has no state
    assert np.abs(alone[1:] - zero[1:]).max() > 1e-3
    again = load_bilm(*fixture_paths, warm_start=True)
    np.testing.assert_array_equal(again.embed([SENTENCE])[0], alone)
    bilm.clear_warm_start()
    np.testing.assert_array_equal(bilm.embed([SENTENCE])[0], zero)


def test_warm_state_is_the_state_after_the_warm_up_text(fixture_paths):
    """Warm-starting from text T equals running the stateful model over T first, as one stream."""
    from spacy_elmo import load_bilm

    bilm = load_bilm(*fixture_paths)
    warm_text = [["a", "few", "words"], ["more", "words", "here"]]
    bilm.set_warm_start(warm_text)
    ids = torch.from_numpy(bilm.char_mapper.batch_ids([SENTENCE]))
    with torch.inference_mode():
        warm = bilm(ids).layers.numpy()
    stream = ["<S>", "a", "few", "words", "<S>", "more", "words", "here"]
    with torch.inference_mode():
        emb = bilm.char_encoder(torch.from_numpy(bilm.char_mapper.batch_ids([stream], add_boundaries=False)))
        _, finals = bilm.lstm(emb.unsqueeze(0).expand(2, -1, -1, -1).contiguous(), [len(stream)])
    for i, (h, _) in enumerate(finals):
        np.testing.assert_allclose(getattr(bilm, f"initial_h_{i}")[0].numpy(), h[0].numpy(), atol=1e-6)
    assert warm.shape == (3, 1, len(SENTENCE), 32)
