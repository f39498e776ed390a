"""The fuzz tests' hypothesis settings and damage to files: every reader of a user's file has a property
test over mutated, truncated and random bytes, whose property is a correct result or the package's
error, never another exception.

Each such test runs twice: a short, derandomized run in the everyday suite and a long, random one under
`@pytest.mark.slow` (`--slow`, CI). A damage a long run finds failing is kept as an `@example` of the
everyday test (a `Damage` reads as the code that makes it), so it runs every time.
"""

from dataclasses import dataclass
from datetime import timedelta
from typing import Optional, Tuple

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
# A generous bound per example: a reader that slows to this on a small file is a hang in the making.
_DEADLINE = timedelta(seconds=20)
settings.register_profile(
    "fuzz", max_examples=8, deadline=_DEADLINE, derandomize=True, database=None, suppress_health_check=_QUIET
)
settings.register_profile(
    "fuzz-slow", max_examples=400, deadline=_DEADLINE, database=None, suppress_health_check=_QUIET
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
