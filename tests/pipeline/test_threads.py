"""Threads sharing one pipeline get the vectors a single thread gets, also while the bounded caches evict
(the token-embedding LRU, the character-id cache and the activation cache)."""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import spacy
import torch

from spacy_elmo.elmo.nn.token_cache import TokenEmbeddingCache
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import get_bilm
from spacy_elmo.pipeline.frozen_cache import ActivationCache
from tests.support.pipelines import elmo_config

N_THREADS = 4


@pytest.fixture
def fast_switching():
    """Switch threads every microsecond, so that unguarded read-then-write sequences interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def _in_threads(work, items):
    """`work(item)` for every item, `N_THREADS` at a time; the first error is raised."""
    with ThreadPoolExecutor(N_THREADS) as pool:
        return list(pool.map(work, items))


def _types(n):
    """`n` distinct token strings."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i % 26] + letters[(i // 26) % 26] + str(i) for i in range(n)]


def _row(token):
    return torch.tensor([float(len(token)), float(sum(map(ord, token)))])


def test_token_cache_under_threads(fast_switching):
    cache = TokenEmbeddingCache(capacity=50)
    batches = [_types(3000)[i : i + 40] for i in range(0, 3000, 20)] * 4  # overlapping, so some rows hit

    def work(tokens):
        return cache.lookup(tokens, lambda missing: torch.stack([_row(t) for t in missing]))

    for tokens, table in zip(batches, _in_threads(work, batches)):
        torch.testing.assert_close(table, torch.stack([_row(t) for t in tokens]), rtol=0, atol=0)
    assert len(cache) <= 50


def test_activation_cache_under_threads(fast_switching):
    values = {key: np.full(25, key, dtype=np.float32) for key in range(32)}  # 100 bytes each
    cache = ActivationCache(max_bytes=100 * 30)
    rng = np.random.default_rng(0)
    streams = [rng.integers(0, 32, 50_000).tolist() for _ in range(N_THREADS)]  # mostly hits, some evictions

    def work(keys):
        got = []
        for key in keys:
            value = cache.get(key)
            if value is None:
                value = values[key].copy()
                cache.put(key, value)
            got.append(value)
        return got

    for keys, got in zip(streams, _in_threads(work, streams)):
        for key, value in zip(keys, got):
            np.testing.assert_array_equal(value, values[key])
    assert cache.size == sum(value.nbytes for value in cache._table.values()) <= 100 * 30


def _texts(n_types, capacity, new=20, old=10):
    """Docs of `new` types not seen before and `old` types seen about `capacity` types ago, as running
    text brings back a rare word: those are the least recently used rows, the next to be evicted, so the
    caches hit and evict the same rows at once."""
    types = _types(n_types)
    texts = []
    for start in range(0, n_types, new):
        back = max(start - capacity + old, 0)
        texts.append(" ".join(types[start : start + new] + types[back : min(back + old, start)]))
    return texts


def _pipeline(capacity):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.initialize()
    bilm = get_bilm(nlp.get_pipe("elmo").model)
    bilm.token_cache = TokenEmbeddingCache(capacity)
    bilm.char_mapper.cache_size = capacity
    return nlp


def _check_threads_match_serial(capacity, n_types, **mix):
    texts = _texts(n_types, capacity, **mix)
    serial = [doc._.elmo["vectors"] for doc in _pipeline(capacity).pipe(texts)]
    nlp = _pipeline(capacity)
    threaded = _in_threads(lambda text: nlp(text)._.elmo["vectors"], texts)
    for one, other in zip(serial, threaded):
        np.testing.assert_allclose(other, one, rtol=0, atol=1e-5)


def test_threads_over_a_pipeline_with_a_small_cache(fast_switching):
    _check_threads_match_serial(capacity=64, n_types=4000)


@pytest.mark.slow
def test_threads_over_more_types_than_the_default_cache_holds(fast_switching):
    assert TokenEmbeddingCache().capacity < 25_000
    _check_threads_match_serial(capacity=TokenEmbeddingCache().capacity, n_types=25_000, new=10, old=20)


def test_threads_share_one_cache():
    """The threads above do share the pipeline's caches (else the test could not fail)."""
    nlp = _pipeline(64)
    cache = get_bilm(nlp.get_pipe("elmo").model).token_cache
    _in_threads(lambda text: nlp(text), _texts(500, 64))
    assert 0 < len(cache) <= 64
    assert threading.active_count() >= 1
