"""A pretraining step's inputs built for the device: the token -> char-id table (`TokenRows`), the host
batch that names its tokens by table row (`HostBatch`) and gives, on any device, exactly the
TensorBatch the step defines (`_reference_step`); the step's negatives; and device placement of the
whole step on torch's `meta` device."""

from collections import Counter

import numpy as np
import pytest
import torch

from spacy_elmo.elmo.nn.char_encoder import token_lengths
from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.nn.softmax import LogUniformSampler
from spacy_elmo.elmo.pretrain.batching import PAD_TARGET, StreamBatcher, TokenRows
from spacy_elmo.elmo.pretrain.model import LanguageModel, TensorBatch
from spacy_elmo.elmo.pretrain.steps import HostBatch, step_inputs
from spacy_elmo.elmo.pretrain.vocab import Vocabulary, build_vocabulary
from tests.device.test_device import META, DeviceChecker, tiny_options
from tests.support.paths import TRAIN_VOCAB
from tests.support.pretraining import TRAIN_SENTENCES

TEXT = [
    "the bank raised its rates .",
    "rivers have banks and the banks have trees .",
    "an unseen-word and a supercalifragilisticexpialidocious-token-longer-than-fifty-characters-by-far here",
    "hi",
    "the the the end",
    "mixed CASE Words ünïcödé and digits 1234 .",
]
SENTENCES = [s.split() for s in TEXT]


def _vocab():
    # Not every word: out-of-vocabulary inputs still need their own char ids.
    return Vocabulary(["<S>", "</S>", "<UNK>", "the", "bank", "banks", "have", "and", "."])


def _pairs(n_copies=4, batch_size=3, unroll=5):
    vocab = _vocab()
    forward = StreamBatcher(iter(SENTENCES * n_copies), vocab, batch_size, unroll)
    backward = StreamBatcher(iter(SENTENCES[::-1] * n_copies), vocab, batch_size, unroll, reverse=True)
    return list(zip(forward, backward))


def _reference_step(forward, backward, mapper) -> TensorBatch:
    """The step by its definition, position by position: the distinct tokens in first-seen order (forward
    rows, then backward rows), stably sorted by char length; padding indexes the first token."""
    first_seen = {}
    for batch in (forward, backward):
        for row in batch.tokens:
            for token in row:
                first_seen.setdefault(token, len(first_seen))
    tokens = list(first_seen)
    char_ids = np.stack([mapper.token_ids(t) for t in tokens])
    lengths = token_lengths(char_ids)
    order = sorted(range(len(tokens)), key=lambda i: lengths[i])
    rank = {tokens[i]: r for r, i in enumerate(order)}
    indices, positions, targets = [], [], []
    for batch in (forward, backward):
        index = np.full(batch.targets.shape, rank[tokens[0]], dtype=np.int64)
        for i, row in enumerate(batch.tokens):
            index[i, : len(row)] = [rank[t] for t in row]
        flat = batch.targets.reshape(-1)
        kept = [p for p, target in enumerate(flat) if target != PAD_TARGET]
        indices.append(torch.tensor(index))
        positions.append(torch.tensor(kept, dtype=torch.int64))
        targets.append(torch.tensor(flat[kept], dtype=torch.int64))
    return TensorBatch(
        char_ids=torch.from_numpy(char_ids[order]).long(),
        index=(indices[0], indices[1]),
        positions=(positions[0], positions[1]),
        targets=(targets[0], targets[1]),
        lengths=(np.array(forward.lengths), np.array(backward.lengths)),
        char_lengths=lengths[order],
    )


def _assert_same(a: TensorBatch, b: TensorBatch):
    assert torch.equal(a.char_ids, b.char_ids)
    for d in range(2):
        assert torch.equal(a.index[d], b.index[d])
        assert torch.equal(a.positions[d], b.positions[d])
        assert torch.equal(a.targets[d], b.targets[d])
        np.testing.assert_array_equal(a.lengths[d], b.lengths[d])
    np.testing.assert_array_equal(a.char_lengths, b.char_lengths)
    assert a.char_ids.dtype == b.char_ids.dtype == torch.int64


def test_token_rows_are_first_seen_order_and_grow_past_their_capacity():
    mapper = CharacterMapper(50)
    table = TokenRows(mapper, capacity=2)
    assert table.rows(["a", "b", "a"]) == [0, 1, 0]
    assert table.rows(["c", "d", "c", "b"]) == [2, 3, 2, 1]
    assert len(table) == 4
    tokens = ["a", "b", "c", "d"]
    ids = np.stack([mapper.token_ids(t) for t in tokens])
    np.testing.assert_array_equal(table.lengths(np.arange(4)), token_lengths(ids))
    np.testing.assert_array_equal(table.on(torch.device("cpu")).long()[:4].numpy(), ids)


def test_device_copy_of_the_table_takes_only_new_rows_up_to_a_steps_size():
    mapper = CharacterMapper(50)
    table = TokenRows(mapper, capacity=4)
    cpu = torch.device("cpu")
    table.rows(["x", "y"])
    first = table.on(cpu, size=1)
    assert first[1].abs().sum() == 0  # row 1 not asked for yet
    table.rows([f"w{i}" for i in range(2000)])  # the host table is reallocated several times
    grown = table.on(cpu)
    assert grown.shape[0] >= len(table)
    np.testing.assert_array_equal(grown[:2].long().numpy(), np.stack([mapper.token_ids("x"), mapper.token_ids("y")]))
    np.testing.assert_array_equal(grown[2001].long().numpy(), mapper.token_ids("w1999"))


def test_host_batches_give_exactly_the_steps_tensor_batches():
    mapper = CharacterMapper(50)
    table = TokenRows(mapper)
    pairs = _pairs()
    assert len(pairs) > 3  # the table carries over from step to step
    for forward, backward in pairs:
        host = HostBatch.from_batches(forward, backward, table)
        _assert_same(host.to(torch.device("cpu")), _reference_step(forward, backward, mapper))


def test_step_inputs_draw_each_steps_negatives_from_its_own_seed_on_the_cpu():
    pairs = _pairs()
    sampler = LogUniformSampler(9, 4)

    def seed(step):
        return 1000 + step

    items = list(step_inputs(iter(pairs), CharacterMapper(50), sampler, seed, first_step=7, device=torch.device("cpu")))
    assert len(items) == len(pairs)
    for step, item in enumerate(items, start=8):
        negatives, n_tries = sampler.sample(torch.Generator().manual_seed(seed(step)))
        assert torch.equal(item.negatives, negatives) and item.n_tries == n_tries
        assert item.batch.ready is None
    full = list(step_inputs(iter(pairs), CharacterMapper(50), None, seed, first_step=0))
    assert all(item.negatives is None and item.n_tries == 0 for item in full)


@pytest.mark.parametrize("softmax", ["sampled", "full"])
def test_device_a_step_from_host_batches_runs_on_the_models_device_only(softmax):
    """Every op of the step, the table copy and the char-id gather included, on the model's device."""
    vocab = _vocab()
    torch.manual_seed(0)
    model = LanguageModel(tiny_options(), len(vocab))
    model.to(META)
    sampler = LogUniformSampler(len(vocab), 4) if softmax == "sampled" else None
    items = step_inputs(iter(_pairs()), CharacterMapper(50), sampler, lambda step: step, first_step=0)
    checker = DeviceChecker()
    with checker:
        for item in list(items)[:2]:
            batch = item.batch.to(META, non_blocking=True)
            negatives = item.negatives.to(META, non_blocking=True) if item.negatives is not None else None
            out = model(batch, model.zero_states(3), sampler, negatives, item.n_tries)
            (out.loss_sums.sum()).backward()
    assert batch.char_ids.device == META and batch.index[0].device == META
    assert "meta" in checker.seen


def test_stream_packs_rows_with_boundaries_as_targets_only():
    vocab = build_vocabulary(Counter("a b c".split()))
    a, b, c = vocab.ids("abc")
    forward = list(StreamBatcher(iter([["a", "b"], ["c"]]), vocab, batch_size=1, unroll_steps=3))
    assert [x.tokens[0] for x in forward] == [["<S>", "a", "b"], ["<S>", "c"]]
    assert forward[0].targets.tolist() == [[a, b, 1]]
    assert forward[1].targets.tolist() == [[c, 1, PAD_TARGET]]
    backward = list(StreamBatcher(iter([["a", "b"], ["c"]]), vocab, batch_size=1, unroll_steps=3, reverse=True))
    assert [x.tokens[0] for x in backward] == [["</S>", "b", "a"], ["</S>", "c"]]
    assert backward[0].targets.tolist() == [[b, a, 0]]


def test_rows_continue_their_own_text_across_batches():
    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    batches = list(StreamBatcher(iter(TRAIN_SENTENCES), vocab, batch_size=3, unroll_steps=7))
    rows = [sum((batch.tokens[i] for batch in batches), []) for i in range(3)]
    assert sum(len(r) for r in rows) == sum(len(s) + 1 for s in TRAIN_SENTENCES)
    for row in rows:  # each row is whole sentences, each starting with <S>
        starts = [i for i, t in enumerate(row) if t == "<S>"]
        sentences = [row[s + 1 : e] for s, e in zip(starts, starts[1:] + [len(row)])]
        assert all(s in TRAIN_SENTENCES for s in sentences)
