"""The pretraining softmax: full loss, sampled loss and the log-uniform sampler."""

import pytest
import torch
import torch.nn.functional as F

from spacy_elmo.elmo.nn.softmax import LogUniformSampler, Softmax


def test_full_loss_in_chunks_is_cross_entropy():
    torch.manual_seed(0)
    softmax = Softmax(50, 8)
    hidden, targets = torch.randn(37, 8), torch.randint(0, 50, (37,))
    expected = F.cross_entropy(hidden @ softmax.weight.T + softmax.bias, targets, reduction="none")
    assert torch.allclose(softmax.full_loss(hidden, targets, chunk_size=5), expected, atol=1e-6)


def test_sampled_loss_over_every_word_with_certain_counts_is_the_full_loss():
    # With every id sampled and expected counts of 1 the correction vanishes; the target's own column
    # must be removed as an accidental hit, or the loss would count it twice.
    torch.manual_seed(0)
    softmax = Softmax(30, 6)
    sampler = LogUniformSampler(31, 30)
    hidden, targets = torch.randn(12, 6), torch.randint(0, 30, (12,))
    sampled = softmax.sampled_loss(hidden, targets, sampler, torch.arange(30), n_tries=10**9)
    assert torch.allclose(sampled, softmax.full_loss(hidden, targets), atol=1e-5)


def test_sampler_draws_distinct_ids_favouring_small_ones():
    sampler = LogUniformSampler(1000, 50)
    generator = torch.Generator().manual_seed(0)
    counts = torch.zeros(1000)
    for _ in range(200):
        ids, n_tries = sampler.sample(generator)
        assert len(ids) == 50 == len(set(ids.tolist())) and n_tries >= 50
        counts[ids] += 1
    assert counts[:10].mean() > 5 * counts[500:].mean()
    expected = sampler.expected_count(torch.tensor([0, 999]), n_tries=60)
    assert 0 < expected[1] < expected[0] <= 1


def test_sampler_rejects_too_many_negatives():
    with pytest.raises(ValueError, match="full softmax"):
        LogUniformSampler(100, 100)
