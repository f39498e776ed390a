"""The hypothesis settings of the property tests: a fixed set of examples (derandomized, so a run in CI
is the run on a laptop), no deadline (a loaded CI machine is slow), model fixtures shared across
examples."""

from hypothesis import HealthCheck, settings

PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
