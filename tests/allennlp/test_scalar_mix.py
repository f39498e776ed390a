"""AllenNLP's ScalarMix: softmax-weighted layers times gamma, optionally layer-normed under a mask."""

import pytest
import torch

from spacy_elmo.allennlp import ScalarMix
from spacy_elmo.elmo.errors import InputError


def test_weights_are_a_softmax_times_gamma():
    mix = ScalarMix(2, initial_scalar_parameters=[0.0, float(torch.log(torch.tensor(3.0)))])
    with torch.no_grad():
        mix.gamma.fill_(2.0)
    a, b = torch.ones(1, 2, 4), torch.full((1, 2, 4), 5.0)
    torch.testing.assert_close(mix([a, b]), 2.0 * (0.25 * a + 0.75 * b))


def test_default_is_the_trainable_mean():
    mix = ScalarMix(3)
    layers = [torch.randn(2, 3, 4) for _ in range(3)]
    torch.testing.assert_close(mix(layers), sum(layers) / 3)
    assert all(p.requires_grad for p in mix.parameters())
    assert not any(p.requires_grad for p in ScalarMix(3, trainable=False).parameters())
    assert [name for name, _ in mix.named_parameters()] == [
        "gamma",
        "scalar_parameters.0",
        "scalar_parameters.1",
        "scalar_parameters.2",
    ]


def test_layer_norm_uses_only_unmasked_positions():
    layer = torch.tensor([[[1.0, 3.0], [100.0, -100.0]]])
    mask = torch.tensor([[True, False]])
    out = ScalarMix(1, do_layer_norm=True)([layer], mask)
    torch.testing.assert_close(out[0, 0], torch.tensor([-1.0, 1.0]), atol=1e-6, rtol=0)


def test_bad_use_is_named():
    with pytest.raises(InputError, match="has 2 values but the biLM has 3 layers"):
        ScalarMix(3, initial_scalar_parameters=[0.0, 0.0])
    with pytest.raises(InputError, match="expects 3 layers, got 2"):
        ScalarMix(3)([torch.zeros(1, 2)] * 2)
    with pytest.raises(InputError, match="needs the mask"):
        ScalarMix(1, do_layer_norm=True)([torch.zeros(1, 2)])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1e39])
def test_non_finite_or_out_of_range_weights_are_refused(bad):
    with pytest.raises(InputError, match=r"scalar_mix_parameters\[0\] must be a finite number within float32"):
        ScalarMix(2, initial_scalar_parameters=[bad, 0.0])


def test_numpy_and_torch_weights_are_taken():
    mix = ScalarMix(2, initial_scalar_parameters=torch.tensor([0.0, 1.0]))
    assert torch.cat(list(mix.scalar_parameters)).tolist() == [0.0, 1.0]
