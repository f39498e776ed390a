"""The command line's entry (cli/__init__.py): every command registered, and a user's mistake printed as
one line on stderr with exit status 1, never a traceback; other errors are not hidden."""

import pytest

from spacy_elmo import cli
from spacy_elmo.elmo.errors import ElmoError

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
