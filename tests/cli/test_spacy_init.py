"""`spacy init fill-elmo`: the command is listed by spaCy's own CLI (registered by cli/spacy_init.py through
spaCy's `spacy_cli` entry points), the package's CLI runs the same command, and a user's mistake prints its
message in spaCy's CLI instead of a traceback."""

import pytest

from tests.support.cli import run_cli


@pytest.mark.slow
def test_spacy_lists_fill_elmo_and_the_package_cli_runs_it(tmp_path):
    listed = run_cli("init", "--help", module="spacy")
    assert "fill-elmo" in listed.stdout
    base = tmp_path / "base.cfg"
    run_cli("init", "config", base, "--pipeline", "tagger", module="spacy")
    result = run_cli("fill-elmo", base, "-", "--fine-tune")
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'pipeline = ["elmo", "tagger"]' in result.stdout and "frozen = false" in result.stdout
    assert 'gpu_allocator = "pytorch"' in result.stdout


@pytest.mark.slow
def test_a_bad_model_name_is_a_message_in_spacys_cli(tmp_path):
    base = tmp_path / "base.cfg"
    run_cli("init", "config", base, "--pipeline", "tagger", module="spacy")
    result = run_cli("init", "fill-elmo", base, tmp_path / "out.cfg", "--model", "no-such-model", module="spacy")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "no ELMo model 'no-such-model'" in result.stdout + result.stderr
    assert not (tmp_path / "out.cfg").exists()
