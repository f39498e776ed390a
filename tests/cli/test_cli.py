"""The command line's entry (cli/__init__.py): every command registered, and a user's mistake printed as
one line on stderr with exit status 1, never a traceback; other errors are not hidden."""

import os

import pytest

from spacy_elmo import cli
from spacy_elmo.elmo.errors import ElmoError
from tests.support.cli import run_cli

COMMANDS = {
    "demo",
    "download",
    "dump",
    "elmo",
    "evaluate",
    "export",
    "fill-elmo",
    "init-config",
    "models",
    "pack",
    "pretrain",
    "push",
    "tokenize",
    "vocab",
}


def test_every_command_is_registered():
    assert {command.name for command in cli.app.registered_commands} == COMMANDS


def test_a_users_mistake_is_one_line_and_exit_status_1(monkeypatch, capsys):
    def mistaken():
        raise ElmoError("options.json: 'lstm.dim' must be a positive integer; fix the file")

    monkeypatch.setattr(cli, "app", mistaken)
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.strip() == "error: options.json: 'lstm.dim' must be a positive integer; fix the file"


def test_a_bug_is_not_hidden_as_a_users_mistake(monkeypatch):
    def broken():
        raise KeyError("internal")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(KeyError):
        cli.main()


@pytest.mark.parametrize(
    "command, shown",
    [
        ("fill-elmo", ["`[system] gpu_allocator`", "hf:ORG/REPO[@REVISION]"]),
        ("evaluate", ["projects/bundled_model/models/gutenberg-web-2x512"]),
    ],
)
def test_help_shows_its_text_whole_on_an_80_column_terminal(command, shown):
    """Brackets are text, not markup; a long path is wrapped whole, not cut with an ellipsis."""
    result = run_cli(command, "--help", env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    for fragment in shown:
        assert fragment in text
