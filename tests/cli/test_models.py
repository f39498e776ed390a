"""`models`: the packaged catalogue, filtered by language, each model with where it comes from."""

from typer.testing import CliRunner

from spacy_elmo.cli import app


def test_models_filters_by_language():
    result = CliRunner().invoke(app, ["models", "--lang", "de"])
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.output.splitlines() if line[:1].isalpha() and " de " in line]
    assert "elmoformanylangs-de" in names and all(" en " not in line for line in result.output.splitlines())


def test_models_shows_where_each_model_comes_from():
    result = CliRunner().invoke(app, ["models", "--lang", "pt"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith(("allennlp-pt", "elmoformanylangs-pt"))]
    assert len(rows) == 3 and all("https://" in row for row in rows)
    assert "https://github.com/HIT-SCIR/ELMoForManyLangs" in result.output
