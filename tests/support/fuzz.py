"""The fuzz tests' hypothesis settings and damage to files: every reader of a user's file has a property
test over mutated, truncated and random bytes, whose property is a correct result or the package's
error, never another exception.

Each such test runs twice: a short run in the everyday suite and a long one under `@pytest.mark.slow`
(`--slow`, CI), both derandomized, so CI gates on the examples a laptop runs; SPACY_ELMO_FUZZ_EXPLORE=1
draws new ones for the long run. A damage a long run finds failing is kept as an `@example` of the
everyday test (a `Damage` reads as the code that makes it), so it runs every time. tests/fuzz/ holds the
readers' suites (`RUNS`, `mutated`, `json_swapped`).
"""

import json
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Tuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_elmo.elmo.errors import InputFileError

_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
# A generous bound per example: a reader that slows to this on a small file is a hang in the making.
_DEADLINE = timedelta(seconds=20)
settings.register_profile(
    "fuzz", max_examples=8, deadline=_DEADLINE, derandomize=True, database=None, suppress_health_check=_QUIET
)
settings.register_profile(
    "fuzz-slow",
    max_examples=400,
    deadline=_DEADLINE,
    derandomize=not os.environ.get("SPACY_ELMO_FUZZ_EXPLORE"),
    database=None,
    suppress_health_check=_QUIET,
)


def fuzz_settings(slow: bool) -> settings:
    """The everyday suite's short run, or with `slow` the long one (for a test marked slow)."""
    return settings.get_profile("fuzz-slow" if slow else "fuzz")


@dataclass(frozen=True)
class Damage:
    """What is done to a file: bytes xor-ed with masks (`changes`, positions taken modulo the part of the
    file fuzzed), then the file cut to `keep` bytes (modulo its length); or random bytes `instead`."""

    changes: Tuple[Tuple[int, int], ...] = ()
    keep: Optional[int] = None
    instead: Optional[bytes] = None

    def apply(self, original: bytes, start: int = 0, end: Optional[int] = None) -> bytes:
        """`original` damaged; changes fall in `original[start:end]`."""
        if self.instead is not None:
            return self.instead
        data = bytearray(original)
        span = (len(original) if end is None else end) - start
        for position, mask in self.changes:
            data[start + position % span] ^= mask
        return bytes(data if self.keep is None else data[: self.keep % len(data)])


def damages() -> st.SearchStrategy[Damage]:
    """One to four changed bytes, a cut, or random bytes up to 4 KiB."""
    change = st.tuples(st.integers(0, 2**32), st.integers(1, 255))
    return st.one_of(
        st.lists(change, min_size=1, max_size=4).map(lambda changes: Damage(changes=tuple(changes))),
        st.integers(0, 2**32).map(lambda keep: Damage(keep=keep)),
        st.binary(max_size=4096).map(lambda instead: Damage(instead=instead)),
    )


# `slow` for `@pytest.mark.parametrize("slow", RUNS)`: one definition, both runs, the long one marked slow.
RUNS = [pytest.param(False, id="short"), pytest.param(True, id="long", marks=pytest.mark.slow)]


def _flipped(raw: bytes, draw) -> bytes:
    data = bytearray(raw)
    for position, bit in draw(st.lists(st.tuples(st.integers(0, len(raw) - 1), st.integers(0, 7)), min_size=1)):
        data[position] ^= 1 << bit
    return bytes(data)


def mutated(raw: bytes) -> st.SearchStrategy[bytes]:
    """`raw` with bits flipped, cut short, with bytes spliced in, or replaced by random bytes."""

    @st.composite
    def mutation(draw) -> bytes:
        kind = draw(st.sampled_from(["flip", "truncate", "splice", "random"]))
        if kind == "flip" and raw:
            return _flipped(raw, draw)
        if kind == "truncate":
            return raw[: draw(st.integers(0, max(len(raw) - 1, 0)))]
        if kind == "splice":
            start = draw(st.integers(0, len(raw)))
            end = draw(st.integers(start, min(len(raw), start + 16)))
            return raw[:start] + draw(st.binary(max_size=16)) + raw[end:]
        return draw(st.binary(max_size=4096))

    return mutation()


# Values of every JSON type, and a few that readers mishandle: huge, negative, non-finite, nested.
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 2**63, 10**30, 1e308, float("nan"), float("inf"), "", [], {}, [[]]]),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers(-3, 300), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _slots(value: Any) -> Iterator[Tuple[Any, Any]]:
    """Every (container, key or index) inside a parsed JSON value."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, inner in items:
        yield value, key
        yield from _slots(inner)


def json_swapped(value: Any) -> st.SearchStrategy[Any]:
    """`value` (parsed JSON) with one value inside it replaced by one of `ODD_VALUES`, or one key removed."""

    @st.composite
    def swap(draw) -> Any:
        copy = json.loads(json.dumps(value))
        container, key = draw(st.sampled_from(list(_slots(copy))))
        if isinstance(container, dict) and draw(st.booleans()):
            del container[key]
        else:
            container[key] = draw(ODD_VALUES)
        return copy

    return swap()


def fuzz_file(slow: bool, path: Path, valid: bytes, read: Callable[[Path], Any]) -> None:
    """Run `read(path)` (which asserts its property) with `path` holding each of `valid`'s mutations."""

    @fuzz_settings(slow)
    @given(raw=mutated(valid))
    def check(raw: bytes) -> None:
        path.write_bytes(raw)
        read(path)

    check()


def embeds_finite_or_refuses(bilm: Any) -> None:
    """A loaded biLM gives finite vectors for a short sentence, or refuses with the package's error
    saying its values are not finite: a damaged file's weights can each be finite and still overflow."""
    try:
        layers = bilm.embed([["Hello", ",", "world"]])[0]
    except InputFileError as err:
        assert "not finite" in str(err), err
        return
    assert np.isfinite(layers).all()
