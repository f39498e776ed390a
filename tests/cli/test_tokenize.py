"""`tokenize`: the corpus layout `pretrain` and `evaluate` read, written without ever destroying data."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_elmo.cli import app
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.pretrain import load_config
from spacy_elmo.elmo.pretrain.presets import preset_config


def tokenize(*args):
    return CliRunner().invoke(app, ["tokenize", *map(str, args)])


@pytest.fixture
def raw(tmp_path):
    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "a.txt").write_text("".join(f"Line {i} of a, with words.\n" for i in range(10)), encoding="utf8")
    (folder / "b.txt").write_text("\ufeffThe b file's first line.\n\nIts second!\n", encoding="utf8")
    return folder


def test_writes_the_layout_pretrain_reads(raw, tmp_path):
    corpus = tmp_path / "corpus"
    result = tokenize(f"{raw}/*.txt", "--output-dir", corpus, "--holdout-every", "4")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (corpus / "train").iterdir()) == ["a.txt", "b.txt"]
    assert (corpus / "dev.txt").read_text() == "Line 3 of a , with words .\n"
    assert (corpus / "test.txt").read_text() == "Line 7 of a , with words .\n"
    assert (corpus / "train" / "b.txt").read_text() == "The b file 's first line .\nIts second !\n"
    # The shipped configs read this layout by default (paths relative to the working directory).
    config = load_config(preset_config("small"), from_string=True)
    assert config.train == ["corpus/train/*.txt"] and config.dev == Path("corpus/dev.txt")


def test_never_writes_over_its_input(raw, tmp_path):
    before = {p.name: p.read_bytes() for p in raw.iterdir()}
    result = tokenize(f"{raw}/*.txt", "-o", raw, "--overwrite")
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in raw.iterdir() if p.is_file()} == before
    # Tokenizing a corpus into itself would replace the input by its own output: refused.
    result = tokenize(tmp_path / "raw" / "train" / "a.txt", "-o", raw, "--overwrite")
    assert isinstance(result.exception, ElmoError) and "overwritten" in str(result.exception)
    # Run twice: the first run's raw/dev.txt is an input of the second, which would overwrite it.
    assert tokenize(f"{raw}/*.txt", "-o", raw, "--holdout-every", "2", "--overwrite").exit_code == 0
    dev = (raw / "dev.txt").read_text()
    result = tokenize(f"{raw}/*.txt", "-o", raw, "--holdout-every", "2", "--overwrite")
    assert isinstance(result.exception, ElmoError) and "dev.txt" in str(result.exception)
    assert (raw / "dev.txt").read_text() == dev


def test_an_error_midway_leaves_no_partial_corpus(raw, tmp_path):
    (raw / "c.txt").write_bytes(b"fine line\n\xff not utf-8\n")
    corpus = tmp_path / "corpus"
    result = tokenize(raw, "-o", corpus, "--holdout-every", "3")
    assert isinstance(result.exception, ElmoError) and "c.txt" in str(result.exception)
    assert not [p for p in corpus.rglob("*") if p.is_file()]
    (raw / "c.txt").write_text("fixed line\n", encoding="utf8")
    result = tokenize(raw, "-o", corpus, "--holdout-every", "3")  # no --overwrite needed: nothing was written
    assert result.exit_code == 0, result.output


def test_replaces_no_file_without_overwrite(raw, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "dev.txt").write_text("precious held-out text\n")
    result = tokenize(raw / "a.txt", "-o", corpus, "--holdout-every", "2")
    assert isinstance(result.exception, ElmoError) and "--overwrite" in str(result.exception)
    assert (corpus / "dev.txt").read_text() == "precious held-out text\n"
    assert not (corpus / "train").exists()
    result = tokenize(raw / "a.txt", "-o", corpus, "--holdout-every", "2", "--overwrite")
    assert result.exit_code == 0 and (corpus / "dev.txt").read_text().startswith("Line 1 ")


@pytest.mark.slow
def test_the_recipe_connects_with_the_shipped_defaults(raw, tmp_path, monkeypatch):
    """tokenize -> vocab -> pretrain -> evaluate -> dump, each reading what the one before wrote, with no
    path given to pretrain (docs/pretraining.md, "The recipe")."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def run(*args):
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result

    run("tokenize", "raw/*.txt", "--output-dir", "corpus", "--holdout-every", "3")
    run("vocab", "corpus/train/*.txt", "--output", "corpus/vocab.txt")
    run("init-config", "tiny", "pretrain.cfg")
    run(
        "pretrain",
        "pretrain.cfg",
        "--output",
        "model",
        "--training.max_steps",
        "3",
        "--no-progress",
        "--logging.plot",
        "false",
    )
    for heldout in ("corpus/test.txt", "corpus/train", "corpus/*.txt"):
        assert '"average"' in run("evaluate", "model", heldout, "--json", "--no-progress").output
    run("dump", "corpus/test.txt", "layers.hdf5", "--model", "model", "--no-progress")
    assert Path("layers.hdf5").is_file()
