"""A dump's input that looks untokenized (elmo/embed/tokenized.py): a word with punctuation glued on is
seen in the first lines and named with the command that tokenizes the file; tokenized text, abbreviations
included, is not; any bytes give an answer or a package error."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_elmo.elmo.embed import tokenized
from spacy_elmo.elmo.embed.tokenized import untokenized_token, untokenized_warning
from spacy_elmo.elmo.errors import ElmoError


@pytest.mark.parametrize(
    "text, found",
    [
        ("Who is Harry?\n", (1, "Harry?")),
        ("The bank .\nYes, she said .\n", (2, "Yes,")),
        ("She sat on the river bank.\n", (1, "bank.")),
        ("Mr. Smith went to the U.S. .\nThe end .\n", None),
        ("The bank .\n\nHi !\n", None),
    ],
)
def test_the_first_glued_token_is_found(tmp_path, text, found):
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf8")
    assert untokenized_token(path) == found


def test_only_the_first_lines_are_looked_at(tmp_path, monkeypatch):
    monkeypatch.setattr(tokenized, "LINES_LOOKED_AT", 2)
    path = tmp_path / "in.txt"
    path.write_text("The bank .\nHi !\nWho is Harry?\n", encoding="utf8")
    assert untokenized_token(path) is None


def test_the_warning_names_the_token_and_the_tokenize_command(tmp_path):
    path = tmp_path / "raw.txt"
    path.write_text("Who is Harry?\n", encoding="utf8")
    warning = untokenized_warning(path)
    assert warning is not None and "'Harry?'" in warning
    assert f"python -m spacy_elmo tokenize {path} --output-dir DIR" in warning and "DIR/train/raw.txt" in warning


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf8")))
def test_any_bytes_give_an_answer_or_a_package_error(tmp_path, data):
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    try:
        found = untokenized_token(path)
    except ElmoError:
        return
    assert found is None or (found[0] >= 1 and found[1])
