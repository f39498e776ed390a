"""AllenNLP's `Elmo` and `batch_to_ids`: its documented ids, shapes, masks and boundaries, its state
across calls, and the same numbers as `load_bilm` on the same weights; what it refuses, and its
threads' turns."""

import copy
import pickle
import threading

import numpy as np
import pytest
import torch

from spacy_elmo.allennlp import Elmo, batch_to_ids
from spacy_elmo.allennlp import elmo as elmo_module
from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.nn.chars import CharacterMapper
from tests.support.concurrency import Overlaps, in_threads

SENTENCES = [["The", "cat", "sat", "."], ["Dogs"], []]
VOCAB = ["@@PADDING@@", "The", "cat", "sat", ".", "Dogs"]
WORD_IDS = torch.tensor([[1, 2, 3, 4], [5, 0, 0, 0], [0, 0, 0, 0]])


@pytest.fixture
def make_elmo(fixture_paths):
    def make(num_output_representations=1, **kwargs):
        kwargs.setdefault("dropout", 0.0)
        return Elmo(*fixture_paths, num_output_representations, **kwargs).eval()

    return make


def test_batch_to_ids_has_allennlps_offsets_and_no_boundaries():
    ids = batch_to_ids([["a", "bc"], []])
    assert ids.dtype == torch.int64 and ids.shape == (2, 2, 50)
    # byte + 1; beginning-of-word 258 + 1, end-of-word 259 + 1, in-word padding 260 + 1; 0 = no token.
    assert ids[0, 0, :4].tolist() == [259, ord("a") + 1, 260, 261]
    assert ids[0, 1, :5].tolist() == [259, ord("b") + 1, ord("c") + 1, 260, 261]
    assert (ids[0, 0, 3:] == 261).all()
    assert (ids[1] == 0).all()


def test_batch_to_ids_pads_to_the_longest_sentence():
    assert batch_to_ids([["a"], ["a", "b", "c"]]).shape == (2, 3, 50)


def test_shapes_mask_and_one_list_entry_per_representation(make_elmo, fixture_bilm):
    out = make_elmo(3)(batch_to_ids(SENTENCES))
    assert len(out["elmo_representations"]) == 3
    for representation in out["elmo_representations"]:
        assert representation.shape == (3, 4, fixture_bilm.output_dim)
    assert out["mask"].tolist() == [[True] * 4, [True, False, False, False], [False] * 4]
    assert (out["elmo_representations"][0][~out["mask"]] == 0).all()


def test_extra_leading_dimensions_are_kept(make_elmo):
    ids = batch_to_ids([["a", "b"], ["c"], ["d", "e"], []]).view(2, 2, 2, 50)
    out = make_elmo(stateful=False)(ids)
    assert out["elmo_representations"][0].shape == (2, 2, 2, 32)
    assert out["mask"].shape == (2, 2, 2)
    flat = make_elmo(stateful=False)(ids.view(4, 2, 50))
    torch.testing.assert_close(out["elmo_representations"][0].view(4, 2, 32), flat["elmo_representations"][0])


def test_the_mean_mix_equals_load_bilms_layers(make_elmo, fixture_bilm):
    out = make_elmo(scalar_mix_parameters=[0.0, 0.0, 0.0], stateful=False)(batch_to_ids(SENTENCES))
    representation = out["elmo_representations"][0].detach().numpy()
    for i, layers in enumerate(fixture_bilm.embed(SENTENCES)):
        np.testing.assert_allclose(representation[i, : len(SENTENCES[i])], layers.mean(axis=0), atol=1e-6, rtol=1e-6)


def test_scalar_mix_parameters_pick_layers(make_elmo, fixture_bilm):
    """Weights of -1e4 vanish under the softmax: each mix is then one layer of load_bilm's output."""
    expected = fixture_bilm.embed(SENTENCES[:1])[0]
    for layer in range(3):
        weights = [-1e4] * 3
        weights[layer] = 0.0
        out = make_elmo(scalar_mix_parameters=weights, stateful=False)(batch_to_ids(SENTENCES[:1]))
        np.testing.assert_allclose(out["elmo_representations"][0][0].detach().numpy(), expected[layer], atol=1e-6)


def test_keep_sentence_boundaries_adds_both_positions(make_elmo):
    ids = batch_to_ids(SENTENCES)
    kept = make_elmo(keep_sentence_boundaries=True, stateful=False)(ids)
    removed = make_elmo(stateful=False)(ids)
    assert kept["elmo_representations"][0].shape == (3, 6, 32)
    # <S> first, </S> right after the last token; an empty sentence is <S> </S>.
    assert kept["mask"].sum(dim=1).tolist() == [6, 3, 2]
    torch.testing.assert_close(kept["elmo_representations"][0][0, 1:5], removed["elmo_representations"][0][0])
    torch.testing.assert_close(kept["elmo_representations"][0][1, 1:2], removed["elmo_representations"][0][1, :1])


def test_layer_norm_counts_the_boundaries(make_elmo):
    """With one layer picked, the normed output has mean 0 and variance 1 over the unmasked positions,
    `<S>`/`</S>` included, as AllenNLP's ScalarMix is given them."""
    elmo = make_elmo(do_layer_norm=True, keep_sentence_boundaries=True, scalar_mix_parameters=[-1e4, -1e4, 0.0])
    out = elmo(batch_to_ids(SENTENCES))
    values = out["elmo_representations"][0][out["mask"]]
    assert abs(float(values.mean())) < 1e-5
    assert abs(float(values.var(unbiased=False)) - 1) < 1e-4


def test_stateful_by_default_as_allennlp(make_elmo):
    ids = batch_to_ids(SENTENCES)
    elmo = make_elmo()
    first = elmo(ids)["elmo_representations"][0]
    second = elmo(ids)["elmo_representations"][0]
    assert (first - second).abs().max() > 1e-4
    elmo.reset_states()
    torch.testing.assert_close(elmo(ids)["elmo_representations"][0], first)
    stateless = make_elmo(stateful=False)
    torch.testing.assert_close(stateless(ids)["elmo_representations"][0], first)
    torch.testing.assert_close(stateless(ids)["elmo_representations"][0], first)


def test_requires_grad(make_elmo):
    frozen = make_elmo()
    assert not any(p.requires_grad for p in frozen.bilm.parameters())
    assert all(p.requires_grad for p in frozen.scalar_mix_0.parameters())
    trained = make_elmo(requires_grad=True)
    trained(batch_to_ids(SENTENCES))["elmo_representations"][0].sum().backward()
    assert trained.bilm.char_encoder.char_embed.weight.grad is not None
    assert not any(p.requires_grad for p in make_elmo(scalar_mix_parameters=[1.0, 0.0, 0.0]).parameters())


def test_dropout_is_on_in_training_mode(fixture_paths):
    elmo = Elmo(*fixture_paths, 1, stateful=False)
    assert elmo.training
    ids = batch_to_ids(SENTENCES[:1])
    dropped = elmo(ids)["elmo_representations"][0]
    assert (dropped == 0).float().mean() > 0.3
    assert (elmo.eval()(ids)["elmo_representations"][0] != 0).all()


def test_vocab_to_cache_gives_the_character_paths_numbers(make_elmo, monkeypatch):
    monkeypatch.setattr(elmo_module, "CACHE_CHUNK", 4)  # the vocabulary in two chunks
    ids = batch_to_ids(SENTENCES)
    cached = make_elmo(vocab_to_cache=VOCAB, stateful=False)(ids, WORD_IDS)
    from_chars = make_elmo(stateful=False)(ids)
    torch.testing.assert_close(cached["mask"], from_chars["mask"])
    torch.testing.assert_close(
        cached["elmo_representations"][0], from_chars["elmo_representations"][0], atol=1e-6, rtol=1e-6
    )


def test_the_character_ids_are_the_packages_own():
    """One scheme: AllenNLP's ids are the package's own ids without the boundary rows."""
    with_boundaries = CharacterMapper().batch_ids(SENTENCES)
    np.testing.assert_array_equal(batch_to_ids(SENTENCES).numpy()[0], with_boundaries[0, 1:5])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda elmo: elmo(batch_to_ids(SENTENCES), WORD_IDS), "vocab_to_cache"),
        (lambda elmo: elmo(torch.zeros(3, 4, dtype=torch.long)), r"\[batch, timesteps, 50\]"),
    ],
)
def test_bad_input_is_named(make_elmo, call, match):
    with pytest.raises(InputError, match=match):
        call(make_elmo())


def test_word_ids_outside_the_vocabulary_are_named(make_elmo):
    with pytest.raises(InputError, match="outside vocab_to_cache"):
        make_elmo(vocab_to_cache=VOCAB)(batch_to_ids(SENTENCES), WORD_IDS + 10)


def test_urls_and_bad_arguments_are_named(fixture_paths):
    with pytest.raises(InputError, match="spacy_elmo download allennlp-original"):
        Elmo("https://example.invalid/options.json", "https://example.invalid/weights.hdf5", 1)
    with pytest.raises(InputError, match="one pre-softmax weight per layer"):
        Elmo(*fixture_paths, 1, scalar_mix_parameters=[0.0, 1.0])
    with pytest.raises(InputError, match="at least 1"):
        Elmo(*fixture_paths, 0)


def test_an_options_file_without_weights_is_refused(fixture_paths):
    """It would be an untrained biLM: random vectors, without a word."""
    with pytest.raises(InputError, match=r"options.json is an options file without its weight file.*model folder"):
        Elmo(fixture_paths[0], None, 1)


def test_a_model_folder_stands_for_both_files(make_elmo, fixture_paths):
    ids = batch_to_ids(SENTENCES)
    from_folder = Elmo(fixture_paths[0].parent, None, 1, dropout=0.0, stateful=False).eval()(ids)
    from_files = make_elmo(stateful=False)(ids)
    torch.testing.assert_close(from_folder["elmo_representations"][0], from_files["elmo_representations"][0])


@pytest.mark.parametrize("batch", ["She went to the bank", ["She went to the bank"], [["a"], "b c"]])
def test_batch_to_ids_refuses_strings_for_token_lists(batch):
    with pytest.raises(InputError, match="batch_to_ids takes sentences as lists of tokens"):
        batch_to_ids(batch)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("batch, rows", [([], 0), ([[]], 1), ([[], []], 2)])
def test_empty_batches_give_empty_outputs_of_the_documented_shapes(make_elmo, batch, rows, keep):
    """`[batch, timesteps, dim]` and `[batch, timesteps]`, timesteps 0 (+2 with the boundaries)."""
    out = make_elmo(2, keep_sentence_boundaries=keep)(batch_to_ids(batch))
    time = 2 if keep else 0
    assert [r.shape for r in out["elmo_representations"]] == [(rows, time, 32)] * 2
    assert out["mask"].shape == (rows, time) and out["mask"].dtype == torch.bool
    assert out["mask"].all() if keep else True


def test_empty_leading_dimensions_keep_their_shape(make_elmo):
    out = make_elmo()(torch.zeros(2, 0, 3, 50, dtype=torch.long))
    assert out["elmo_representations"][0].shape == (2, 0, 3, 32) and out["mask"].shape == (2, 0, 3)


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint16])
def test_narrower_integer_ids_give_the_int64_results(make_elmo, dtype):
    """NumPy's int32 arrays give int32 tensors; AllenNLP takes them."""
    ids = batch_to_ids(SENTENCES)
    narrow = torch.from_numpy(ids.numpy().astype(dtype))
    got = make_elmo(stateful=False)(narrow)
    want = make_elmo(stateful=False)(ids)
    torch.testing.assert_close(got["elmo_representations"][0], want["elmo_representations"][0], atol=0, rtol=0)
    torch.testing.assert_close(got["mask"], want["mask"])


def test_int32_word_inputs_give_the_int64_results(make_elmo):
    cached = make_elmo(vocab_to_cache=VOCAB, stateful=False)
    ids = batch_to_ids(SENTENCES)
    got, want = cached(ids, WORD_IDS.int()), cached(ids, WORD_IDS)
    torch.testing.assert_close(got["elmo_representations"][0], want["elmo_representations"][0], atol=0, rtol=0)
    with pytest.raises(InputError, match=r"word_inputs must be \[batch, timesteps\], got shape \(\)"):
        cached(ids, torch.tensor(1))
    with pytest.raises(InputError, match=r"word_inputs as a torch tensor of integers \(indices into vocab_to_cache"):
        cached(ids, WORD_IDS.float())


@pytest.mark.parametrize(
    "ids, match",
    [
        (batch_to_ids(SENTENCES).numpy(), r"as a torch tensor of integers \(batch_to_ids makes them.*got ndarray"),
        (batch_to_ids(SENTENCES).float(), "as a torch tensor of integers.*got a torch.float32 tensor"),
        (batch_to_ids(SENTENCES) + 300, r"must lie in 0\.\.261"),
        (-batch_to_ids(SENTENCES), r"must lie in 0\.\.261"),
    ],
)
def test_ids_that_are_no_character_ids_are_named(make_elmo, ids, match):
    with pytest.raises(InputError, match=match):
        make_elmo()(ids)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e39, "0.5", None])
def test_scalar_mix_parameters_are_held_to_the_float32_rule(fixture_paths, bad):
    """As the spaCy side's ScalarMix.v2 weights: one of them made every output NaN."""
    with pytest.raises(InputError, match=r"scalar_mix_parameters\[1\] must be a finite number within float32"):
        Elmo(*fixture_paths, 1, scalar_mix_parameters=[0.0, bad, 0.0])


def test_stateful_calls_from_two_threads_take_turns(make_elmo):
    """Each call starts from the states a whole earlier call left: the two results are a serial run's
    first and second calls, whichever thread came first; the calls never overlap."""
    ids = batch_to_ids(SENTENCES)
    serial = make_elmo()
    expected = [serial(ids)["elmo_representations"][0] for _ in range(2)]
    elmo = make_elmo()
    elmo.bilm.forward = slowed = Overlaps(elmo.bilm.forward)
    results = in_threads(lambda: elmo(ids)["elmo_representations"][0])
    assert slowed.most == 1
    first = 0 if torch.allclose(results[0], expected[0]) else 1
    torch.testing.assert_close(results[first], expected[0])
    torch.testing.assert_close(results[1 - first], expected[1])


def test_a_copy_or_pickle_has_its_own_lock(make_elmo):
    elmo = make_elmo()
    for twin in (copy.deepcopy(elmo), pickle.loads(pickle.dumps(elmo))):
        assert twin._state_lock is not elmo._state_lock
        twin(batch_to_ids(SENTENCES))


def test_reset_states_waits_for_a_running_call(make_elmo):
    """A reset during another thread's call would come before that call stores its states: forgotten."""
    ids = batch_to_ids(SENTENCES)
    first = make_elmo()(ids)["elmo_representations"][0]
    elmo = make_elmo()
    elmo.bilm.forward = slowed = Overlaps(elmo.bilm.forward)
    running = threading.Thread(target=lambda: elmo(ids))
    running.start()
    slowed.entered.wait()
    elmo.reset_states()
    running.join()
    torch.testing.assert_close(elmo(ids)["elmo_representations"][0], first)
