"""The token-embedding cache (elmo/nn/token_cache.py): each distinct string encoded once while it stays in the
cache, rows returned in the order asked, kept rows copies of their batch's, and capacity 0 caching nothing."""

import torch

from spacy_elmo.elmo.nn.token_cache import TokenEmbeddingCache


class Encoder:
    """Embeds a token as [its length, its first character's code] and records what it was asked."""

    def __init__(self):
        self.calls = []

    def __call__(self, tokens):
        self.calls.append(list(tokens))
        return torch.tensor([[float(len(t)), float(ord(t[0]))] for t in tokens])


def test_only_missing_tokens_are_encoded_and_rows_follow_the_order_asked():
    cache, encode = TokenEmbeddingCache(capacity=10), Encoder()
    first = cache.lookup(["bank", "rates"], encode)
    second = cache.lookup(["rates", "rose", "bank"], encode)
    assert encode.calls == [["bank", "rates"], ["rose"]]
    assert second.tolist() == [[5.0, ord("r")], [4.0, ord("r")], [4.0, ord("b")]]
    assert torch.equal(second[2], first[0])


def test_the_least_recently_used_token_is_encoded_again():
    cache, encode = TokenEmbeddingCache(capacity=2), Encoder()
    cache.lookup(["a", "b"], encode)
    cache.lookup(["a"], encode)  # "b" is now the least recent
    cache.lookup(["c"], encode)
    cache.lookup(["a", "b"], encode)
    assert encode.calls == [["a", "b"], ["c"], ["b"]]


def test_kept_rows_are_copies_not_views_of_their_batch():
    cache = TokenEmbeddingCache(capacity=10)
    batch = torch.zeros(2, 3)
    cache.lookup(["x", "y"], lambda tokens: batch)
    batch.fill_(1.0)
    assert cache.lookup(["x", "y"], Encoder()).sum() == 0


def test_capacity_zero_encodes_every_call():
    cache, encode = TokenEmbeddingCache(capacity=0), Encoder()
    cache.lookup(["a"], encode)
    cache.lookup(["a"], encode)
    assert encode.calls == [["a"], ["a"]] and len(cache) == 0
