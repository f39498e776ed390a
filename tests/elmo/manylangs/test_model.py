"""ELMoForManyLangs' token input (elmo/manylangs/model.py): its dictionaries checked, code points laid out as
shifted id rows with `<pad>` on the row the char-CNN's column cut relies on, its boundary ids in its own
order, the word id in a last column, and the vocabularies carried through a description."""

import numpy as np
import pytest
import torch

from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.manylangs.model import PAD_ROW, CodePointMapper, ManyLangsBiLM, ManyLangsVocab
from spacy_elmo.elmo.nn.options import preset

CHARS = {"<bow>": 0, "<eow>": 1, "<oov>": 2, "<pad>": 3, "<bos>": 4, "<eos>": 5, "a": 6, "b": 7}
WORDS = {"<oov>": 0, "<pad>": 1, "ab": 2}


def vocab(words=WORDS):
    return ManyLangsVocab(chars=dict(CHARS), words=None if words is None else dict(words))


def test_pad_takes_the_char_cnns_pad_row_and_the_others_follow_in_order():
    rows = vocab().char_rows()
    assert rows[CHARS["<pad>"]] == PAD_ROW
    others = [int(rows[i]) for name, i in CHARS.items() if name != "<pad>"]
    assert others == [1, 2, 3, 5, 6, 7, 8] and 0 not in rows  # 0 stays batch padding
    assert vocab().n_char_rows == 262  # never fewer rows than the bilm-tf table


def test_a_token_row_is_bounded_by_its_codes_boundary_ids_and_ends_with_its_word_id():
    v = vocab()
    mapper = CodePointMapper(v, max_characters_per_token=6)
    row_of = dict(zip(CHARS, v.char_rows().tolist()))
    ab = mapper.token_ids("ab")
    assert ab.tolist() == [row_of["<eow>"], row_of["a"], row_of["b"], row_of["<bow>"], PAD_ROW, PAD_ROW, 3]
    unknown = mapper.token_ids("ax")
    assert unknown[2] == row_of["<oov>"] and unknown[-1] == WORDS["<oov>"] + 1


def test_sentence_boundaries_are_its_bos_and_eos_and_long_tokens_are_cut():
    v = vocab(words=None)
    mapper = CodePointMapper(v, max_characters_per_token=4)
    row_of = dict(zip(CHARS, v.char_rows().tolist()))
    assert mapper.token_ids("<S>")[1] == row_of["<bos>"] and mapper.token_ids("</S>")[1] == row_of["<eos>"]
    assert mapper.token_ids("abab").tolist() == [row_of["<eow>"], row_of["a"], row_of["b"], row_of["<bow>"]]


@pytest.mark.parametrize(
    "chars, words, message",
    [
        ({k: v for k, v in CHARS.items() if k != "<bos>"}, WORDS, "char.dic has no entry for <bos>"),
        (CHARS, {"<oov>": 0, "<pad>": 5}, "word.dic has ids up to 5 for 2 entries"),
    ],
)
def test_dictionaries_the_code_cannot_use_are_named(chars, words, message):
    with pytest.raises(InputFileError, match=message):
        ManyLangsVocab(chars=chars, words=words).check("char.dic", "word.dic")


def test_the_vocabularies_survive_a_description_round_trip():
    options = preset("tiny")
    torch.manual_seed(0)
    bilm = ManyLangsBiLM(options, vocab(), word_dim=4).eval()
    description = bilm.description()
    assert description["word_dim"] == 4
    rebuilt = ManyLangsBiLM(options, ManyLangsVocab.from_dict(description["vocab"]), description["word_dim"]).eval()
    rebuilt.load_state_dict(bilm.state_dict())
    sentences = [["ab", "ba", "a"]]
    np.testing.assert_array_equal(rebuilt.embed(sentences)[0], bilm.embed(sentences)[0])
