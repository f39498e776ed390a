"""ELMoForManyLangs' `char.dic` / `word.dic` lines (elmo/manylangs/chars.py), read as its reader reads them."""

import re

import pytest

from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.manylangs.chars import STRIPPED_ENTRY, parse_dic


def test_dic_lines_are_read_as_its_reader_reads_them():
    # Stripped, then split at the tab: the space before the tab stays part of the token.
    assert parse_dic("a\t0\n\u3000\t1\n b \t2\n", "x.dic") == {"a": 0, "\u3000": 1, "b ": 2}
    with pytest.raises(InputFileError, match="x.dic, line 2"):
        parse_dic("a\t0\nb\tc\n", "x.dic")


def test_a_line_left_with_only_an_id_is_the_ideographic_space():
    assert parse_dic("\u3000\t7\n", "char.dic") == {STRIPPED_ENTRY: 7}


def test_lines_split_at_unicode_line_separators_and_blank_lines_are_skipped():
    assert parse_dic("a\t0\u2028b\t1\n\n  \n", "word.dic") == {"a": 0, "b": 1}


@pytest.mark.parametrize("line", ["a\t-1", "a\tb\t2", "a\tone"])
def test_a_line_without_one_non_negative_id_is_named(line):
    with pytest.raises(InputFileError, match=re.escape(f"word.dic, line 1: expected 'token<TAB>id', got {line!r}")):
        parse_dic(line, "word.dic")
