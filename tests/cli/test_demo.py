from spacy_elmo.models import DEFAULT_MODEL
from tests.support.cli import assert_clear_error, run_cli


def test_demo_runs_on_the_bundled_default_model():
    result = run_cli("demo")
    assert result.returncode == 0, result.stderr
    assert f"model {DEFAULT_MODEL}" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("  [") and "1.000" in line]
    assert len(rows) == 4


def test_demo_unknown_model_is_a_clear_error():
    assert_clear_error(run_cli("demo", "--model", "nope"), "no ELMo model 'nope'", "not a bundled model")
