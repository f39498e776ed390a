"""The pretraining network (elmo/pretrain/model.py): both directions' summed losses over the step's targets,
starting near the uniform model's, falling with a step of SGD on the same batch; states per layer and
direction; a digest of the parameters that replicas agreeing to the last bit share."""

import math

import torch

from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.pretrain.batching import StreamBatcher, TokenRows
from spacy_elmo.elmo.pretrain.model import LanguageModel, parameters_digest
from spacy_elmo.elmo.pretrain.steps import HostBatch
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import TRAIN_VOCAB
from tests.support.pretraining import TRAIN_SENTENCES, tiny_pretrain_config


def model_and_batch():
    config = tiny_pretrain_config()
    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    torch.manual_seed(0)
    model = LanguageModel(config.options, len(vocab))
    fwd = next(StreamBatcher(iter(TRAIN_SENTENCES), vocab, 2, 5))
    bwd = next(StreamBatcher(iter(TRAIN_SENTENCES[::-1]), vocab, 2, 5, reverse=True))
    batch = HostBatch.from_batches(fwd, bwd, TokenRows(CharacterMapper(50))).to(torch.device("cpu"))
    return model, batch, len(vocab)


def test_the_losses_sum_over_each_directions_targets_and_start_near_uniform():
    model, batch, n_vocab = model_and_batch()
    out = model(batch, model.zero_states(2))
    assert out.counts == batch.counts and all(c > 0 for c in out.counts)
    per_target = out.loss_sums / torch.tensor(out.counts, dtype=out.loss_sums.dtype)
    assert torch.all((per_target - math.log(n_vocab)).abs() < 1.0), per_target


def test_a_step_of_sgd_on_the_batch_lowers_its_loss():
    model, batch, _ = model_and_batch()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    before = model(batch, model.zero_states(2)).loss_sums.sum()
    before.backward()
    optimizer.step()
    after = model(batch, model.zero_states(2)).loss_sums.sum()
    assert after < before


def test_states_are_carried_per_layer_and_direction_without_gradients():
    model, batch, _ = model_and_batch()
    out = model(batch, model.zero_states(2))
    assert len(out.states) == model.options.lstm.n_layers
    h, c = out.states[0]
    assert h.shape == (2, 2, model.options.projection_dim) and c.shape[:2] == (2, 2)
    assert not h.requires_grad and not c.requires_grad


def test_the_digest_tells_identical_parameters_from_changed_ones():
    model, _, _ = model_and_batch()
    copy, _, _ = model_and_batch()
    assert parameters_digest(model) == parameters_digest(copy)
    with torch.no_grad():
        next(copy.parameters()).view(-1)[0] += 1e-7
    assert parameters_digest(model) != parameters_digest(copy)
