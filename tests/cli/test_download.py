"""`download` from the command line: the cache and mirror from the environment, overridden by
`--cache-dir` and `--base-url`; `models` then lists the model as downloaded. Against the local HTTP server
(tests/support/model_server.py)."""

from typer.testing import CliRunner

from spacy_elmo.cli import app
from tests.elmo.sources.hub import test_download

catalogue = test_download.catalogue  # the fixture: a catalogue of test models served by `server`


def test_cli_uses_the_environment_and_lists_what_is_downloaded(tmp_path, catalogue, server, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setenv("SPACY_ELMO_MIRROR", server.base())
    runner = CliRunner()
    result = runner.invoke(app, ["download", "tiny-unverified", "--catalogue", str(catalogue)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env-cache" / "tiny-unverified" / "weights.hdf5").exists()
    listing = runner.invoke(app, ["models", "--catalogue", str(catalogue)])
    assert listing.exit_code == 0, listing.output
    header = next(line.split() for line in listing.output.splitlines() if line.startswith("name"))
    column = header.index("downloaded")
    rows = {line.split()[0]: line.split()[column] for line in listing.output.splitlines() if line.startswith("tiny")}
    assert rows["tiny-unverified"] == "yes" and rows["tiny-zip"] == "no"


def test_cli_cache_dir_and_base_url_override_the_environment(tmp_path, catalogue, server, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setenv("SPACY_ELMO_MIRROR", "http://127.0.0.1:9")
    args = ["download", "tiny-zip", "--catalogue", str(catalogue), "--cache-dir", str(tmp_path / "mine")]
    result = CliRunner().invoke(app, [*args, "--base-url", server.base()])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "mine" / "tiny-zip" / "options.json").exists()
    assert not (tmp_path / "env-cache").exists()
