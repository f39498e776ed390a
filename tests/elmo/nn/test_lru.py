"""The package's one LRU (elmo/nn/lru.py): bounded by count or by size, least recently used out first,
thread-safe (tests/pipeline/test_threads.py), and pickled with its entries but a lock of its own."""

import pickle

import numpy as np
import pytest

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.nn.lru import LRU


def _nbytes(value):
    return value.nbytes


def test_count_bounded_keeps_the_most_recently_used():
    cache = LRU(2)
    cache.put_many([("a", 1), ("b", 2)])
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put_many([("c", 3)])
    assert cache.get_many(["a", "b", "c"]) == {"a": 1, "c": 3}
    assert (cache.hits, cache.misses) == (3, 1) and len(cache) == cache.size == 2


def test_membership_is_neither_a_hit_nor_a_use():
    cache = LRU(2)
    cache.put_many([("a", 1), ("b", 2)])
    assert "a" in cache and "z" not in cache and (cache.hits, cache.misses) == (0, 0)
    cache.put_many([("c", 3)])  # "a" stays the least recently used
    assert "a" not in cache and "b" in cache


def test_size_bounded_counts_bytes_and_keeps_nothing_too_large():
    cache = LRU(1000, size_of=_nbytes)
    cache.put_many((key, np.zeros(100, dtype=np.float32)) for key in "abc")  # 400 bytes each
    assert len(cache) == 2 and cache.size == 800 and cache.get("a") is None
    cache.put_many([("huge", np.zeros(1000, dtype=np.float32))])
    assert cache.get("huge") is None and cache.size == 800


def test_a_key_already_present_keeps_its_value():
    cache = LRU(2)
    cache.put_many([("a", 1)])
    cache.put_many([("a", 2)])
    assert cache.get("a") == 1


def test_a_pickled_cache_keeps_its_entries_and_gets_a_lock_of_its_own():
    cache = LRU(1000, size_of=_nbytes)
    cache.put_many([("a", np.arange(4, dtype=np.float32))])
    copy = pickle.loads(pickle.dumps(cache))
    np.testing.assert_array_equal(copy.get("a"), np.arange(4, dtype=np.float32))
    assert copy._lock is not cache._lock and not copy._lock.locked()
    copy.put_many([("b", np.zeros(250, dtype=np.float32))])  # evicts "a" in the copy only
    assert copy.get("a") is None and cache.get("a") is not None


def test_a_negative_capacity_is_an_elmo_error_naming_it():
    with pytest.raises(ElmoError, match="token budget must not be negative, got -1"):
        LRU(-1, what="token budget")
