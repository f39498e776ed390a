"""The pieces of a pretraining step (elmo/pretrain/steps.py): a host batch encodes each distinct token once,
shortest first, and gives the char-CNN what encoding every position gives."""

import numpy as np
import torch

from spacy_elmo.elmo.nn.char_encoder import token_lengths
from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.pretrain.batching import StreamBatcher, TokenRows
from spacy_elmo.elmo.pretrain.model import LanguageModel
from spacy_elmo.elmo.pretrain.steps import HostBatch
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from tests.support.paths import TRAIN_VOCAB
from tests.support.pretraining import TRAIN_SENTENCES as SENTENCES
from tests.support.pretraining import tiny_pretrain_config as tiny_config


def test_char_encoding_per_distinct_token_matches_per_position():
    config = tiny_config()
    torch.manual_seed(0)
    model = LanguageModel(config.options, 32)
    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    mapper = CharacterMapper(50)
    fwd = next(StreamBatcher(iter(SENTENCES), vocab, 2, 6))
    bwd = next(StreamBatcher(iter(SENTENCES[::-1]), vocab, 2, 6, reverse=True))
    batch = HostBatch.from_batches(fwd, bwd, TokenRows(mapper)).to(torch.device("cpu"))
    assert batch.char_ids.shape[0] < sum(fwd.lengths) + sum(bwd.lengths)
    unique = model.bilm.char_encoder(batch.char_ids.unsqueeze(0))[0][batch.index[0]]
    direct = model.bilm.char_encoder(torch.from_numpy(mapper.batch_ids(fwd.tokens, add_boundaries=False)))
    assert torch.allclose(unique, direct, atol=1e-6)
    # The distinct tokens come shortest first, so the char-CNN never reorders them on the device.
    assert np.array_equal(batch.char_lengths, token_lengths(batch.char_ids.numpy()))
    assert np.all(np.diff(batch.char_lengths) >= 0)
