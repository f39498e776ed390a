"""ScalarMix: Eq. 1 of the paper, its gradients, layer norm over the rows given, fixed vs trainable mixes."""

import numpy as np
import pytest
from thinc.api import SGD, fix_random_seed, set_dropout_rate

from spacy_elmo.pipeline.architectures import build_scalar_mix_v2
from spacy_elmo.pipeline.layers import mix_summary
from spacy_elmo.pipeline.layers.scalar_mix import softmax


def _docs(rng, lengths=(3, 5), n_layers=3, width=4):
    return [rng.normal(size=(n_layers, n, width)).astype(np.float32) for n in lengths]


def test_mix_is_gamma_times_softmax_weighted_sum():
    rng = np.random.default_rng(0)
    Xs = _docs(rng)
    model = build_scalar_mix_v2(weights=[1.0, 0.0, -1.0], gamma=2.0)
    model.initialize(X=Xs)
    Ys = model.predict(Xs)
    s = softmax(np.array([1.0, 0.0, -1.0]))
    for X, Y in zip(Xs, Ys):
        np.testing.assert_allclose(Y, 2.0 * np.einsum("j,jnd->nd", s, X), rtol=1e-5)
    summary = mix_summary(model)
    np.testing.assert_allclose(summary["weights"], s, rtol=1e-6)
    assert summary["gamma"] == 2.0


def test_default_weights_give_the_mean_of_layers():
    rng = np.random.default_rng(1)
    Xs = _docs(rng)
    model = build_scalar_mix_v2()
    Ys = model.predict(Xs)
    np.testing.assert_allclose(Ys[1], Xs[1].mean(axis=0), rtol=1e-5, atol=1e-6)


def test_wrong_number_of_initial_weights_names_both_counts():
    model = build_scalar_mix_v2(weights=[0.0, 1.0])
    with pytest.raises(ValueError, match="2 initial weights but the biLM gives 3 layers"):
        model.initialize(X=_docs(np.random.default_rng(2)))


def _loss_and_grads(model, Xs, target):
    Ys, backprop = model.begin_update(Xs)
    dYs = [Y - T for Y, T in zip(Ys, target)]
    loss = sum(float((d**2).sum()) / 2 for d in dYs)
    dXs = backprop(dYs)
    return loss, dXs


@pytest.mark.parametrize("layer_norm", [False, True])
def test_gradients_match_finite_differences(layer_norm):
    rng = np.random.default_rng(3)
    Xs = [x.astype(np.float64) for x in _docs(rng)]
    Xs[0][:, 1] = 0.0  # a whitespace row: not a real position for the layer norm
    target = [rng.normal(size=x.shape[1:]) for x in Xs]
    model = build_scalar_mix_v2(weights=[0.3, -0.2, 0.1], gamma=1.5, layer_norm=layer_norm)
    model.initialize(X=Xs)
    _, dXs = _loss_and_grads(model, Xs, target)
    dw = np.array(model.get_grad("w"))
    dgamma = float(model.get_grad("gamma")[0])
    eps = 1e-3  # float32 outputs: a larger step keeps rounding noise below the tolerance

    def loss_at():
        return sum(float(((Y - T) ** 2).sum()) / 2 for Y, T in zip(model.predict(Xs), target))

    w = np.array(model.get_param("w"))
    for j in range(3):
        for sign in (1, -1):
            shifted = w.copy()
            shifted[j] += sign * eps
            model.set_param("w", shifted)
            if sign == 1:
                up = loss_at()
            else:
                down = loss_at()
        model.set_param("w", w)
        assert (up - down) / (2 * eps) == pytest.approx(dw[j], rel=2e-3, abs=1e-3)
    model.set_param("gamma", np.array([1.5 + eps]))
    up = loss_at()
    model.set_param("gamma", np.array([1.5 - eps]))
    down = loss_at()
    model.set_param("gamma", np.array([1.5]))
    assert (up - down) / (2 * eps) == pytest.approx(dgamma, rel=2e-3)
    for doc, layer, token, feature in [(0, 0, 0, 0), (1, 2, 4, 3), (0, 1, 2, 1)]:
        original = Xs[doc][layer, token, feature]
        Xs[doc][layer, token, feature] = original + eps
        up = loss_at()
        Xs[doc][layer, token, feature] = original - eps
        down = loss_at()
        Xs[doc][layer, token, feature] = original
        assert (up - down) / (2 * eps) == pytest.approx(dXs[doc][layer, token, feature], rel=2e-3, abs=1e-3)


def test_layer_norm_counts_every_row_it_is_given():
    """Which rows are tokens is the caller's to say (read_rows.py); a zero row here is a token."""
    rng = np.random.default_rng(4)
    Xs = _docs(rng, lengths=(4,))
    Xs[0][:, 2] = 0.0
    model = build_scalar_mix_v2(layer_norm=True)
    Y = model.predict(Xs)[0]
    X = Xs[0]
    normed = (X - X.mean(axis=(1, 2), keepdims=True)) / np.sqrt(X.var(axis=(1, 2), keepdims=True) + 1e-12)
    np.testing.assert_allclose(Y, normed.mean(axis=0), rtol=1e-4, atol=1e-5)
    assert Y[2].any()


def test_layer_norm_of_a_batch_without_rows_is_empty():
    model = build_scalar_mix_v2(layer_norm=True)
    Xs = [np.zeros((3, 0, 4), dtype=np.float32)]
    Ys, backprop = model.begin_update(Xs)
    assert Ys[0].shape == (0, 4)
    assert backprop(Ys)[0].shape == (3, 0, 4)


def test_fixed_mix_does_not_learn_but_passes_gradients():
    rng = np.random.default_rng(5)
    Xs = _docs(rng)
    model = build_scalar_mix_v2(weights=[0.0, 0.0, 5.0], trainable=False)
    model.initialize(X=Xs)
    Ys, backprop = model.begin_update(Xs)
    dXs = backprop([np.ones_like(Y) for Y in Ys])
    model.finish_update(SGD(1.0))
    np.testing.assert_array_equal(model.get_param("w"), [0.0, 0.0, 5.0])
    assert model.get_param("gamma")[0] == 1.0
    assert np.abs(dXs[0][2]).sum() > np.abs(dXs[0][0]).sum() > 0


def test_l2_on_raw_weights_adds_its_gradient():
    rng = np.random.default_rng(6)
    Xs = _docs(rng)
    plain, penalised = (
        build_scalar_mix_v2(weights=[1.0, 2.0, 3.0]),
        build_scalar_mix_v2(weights=[1.0, 2.0, 3.0], l2=0.5),
    )
    for model in (plain, penalised):
        model.initialize(X=Xs)
        Ys, backprop = model.begin_update(Xs)
        backprop([np.ones_like(Y) for Y in Ys])
    np.testing.assert_allclose(penalised.get_grad("w") - plain.get_grad("w"), [1.0, 2.0, 3.0], rtol=1e-5)


def test_own_dropout_survives_spacys_global_dropout_and_is_off_at_prediction():
    rng = np.random.default_rng(7)
    Xs = _docs(rng, lengths=(50,))
    model = build_scalar_mix_v2(dropout=0.5)
    model.initialize(X=Xs)
    set_dropout_rate(model, 0.0)
    Ys, _ = model.begin_update(Xs)
    assert 0.3 < float((Ys[0] == 0).mean()) < 0.7
    np.testing.assert_allclose(model.predict(Xs)[0], Xs[0].mean(axis=0), rtol=1e-5, atol=1e-6)


def test_dropout_keeps_the_expectation_and_backprop_uses_the_same_mask():
    rng = np.random.default_rng(8)
    Xs = _docs(rng, lengths=(2000,))
    model = build_scalar_mix_v2(dropout=0.25)
    model.initialize(X=Xs)
    fix_random_seed(0)  # the mask comes from the global generator, as spaCy seeds it
    Ys, backprop = model.begin_update(Xs)
    kept = Ys[0] != 0
    assert abs(float(kept.mean()) - 0.75) < 0.02
    np.testing.assert_allclose(Ys[0][kept], model.predict(Xs)[0][kept] / 0.75, rtol=1e-5)
    (dX,) = backprop([np.ones_like(Ys[0])])
    assert np.all(dX[:, ~kept] == 0) and np.all(dX[:, kept] != 0)


def test_a_start_from_that_cannot_be_read_is_one_message_under_spacys_commands(tmp_path):
    """spaCy's commands print a SpacyCommandMessage as one line; the error keeps its own type."""
    from spacy_elmo.elmo.errors import ElmoError
    from spacy_elmo.pipeline.errors import SpacyCommandMessage

    mix = build_scalar_mix_v2(start_from=str(tmp_path / "no-module"))
    with pytest.raises(ElmoError, match="no-module") as caught:
        mix.initialize()
    assert isinstance(caught.value, SpacyCommandMessage)
