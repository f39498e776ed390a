import subprocess
import sys

from spacy_elmo.models import DEFAULT_MODEL


def test_demo_runs_on_the_bundled_default_model():
    result = subprocess.run([sys.executable, "-m", "spacy_elmo", "demo"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"model {DEFAULT_MODEL}" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("  [") and "1.000" in line]
    assert len(rows) == 4


def test_demo_unknown_model_is_a_clear_error():
    result = subprocess.run(
        [sys.executable, "-m", "spacy_elmo", "demo", "--model", "nope"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0
    assert "no bundled ELMo model named 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
