import numpy as np

from spacy_elmo.elmo.nn.chars import BOS_CHAR, BOW_CHAR, EOS_CHAR, EOW_CHAR, PAD_CHAR, CharacterMapper

# Prediction ids are the original's plus one, so that 0 can mark padding rows.
BOW, EOW, PAD, BOS, EOS = (c + 1 for c in (BOW_CHAR, EOW_CHAR, PAD_CHAR, BOS_CHAR, EOS_CHAR))


def test_ascii_token():
    ids = CharacterMapper().token_ids("bank")
    assert ids.shape == (50,)
    assert ids[:6].tolist() == [BOW, ord("b") + 1, ord("a") + 1, ord("n") + 1, ord("k") + 1, EOW]
    assert (ids[6:] == PAD).all() and PAD == 261


def test_multibyte_utf8_is_bytes_and_cut_at_the_byte_limit():
    mapper = CharacterMapper()
    ids = mapper.token_ids("é")
    assert ids[:4].tolist() == [BOW, 0xC3 + 1, 0xA9 + 1, EOW]
    # 25 two-byte characters are 50 bytes; only 48 fit, so the cut falls on a character boundary.
    long = "é" * 25
    ids = mapper.token_ids(long)
    assert ids[1:49].tolist() == [b + 1 for b in long.encode("utf-8")[:48]]
    assert ids[49] == EOW
    # 'a' + 24 x 'é' is 49 bytes: the cut at 48 splits the last character in half, as in the original.
    odd = "a" + "é" * 24
    assert mapper.token_ids(odd)[48] == 0xC3 + 1


def test_emoji_is_four_bytes():
    ids = CharacterMapper().token_ids("😀")
    assert ids[:6].tolist() == [BOW] + [b + 1 for b in "😀".encode("utf-8")] + [EOW]


def test_long_token_is_truncated_to_max_minus_two():
    ids = CharacterMapper().token_ids("x" * 200)
    assert (ids[1:49] == ord("x") + 1).all() and ids[49] == EOW


def test_empty_string_is_bow_eow():
    ids = CharacterMapper().token_ids("")
    assert ids[:2].tolist() == [BOW, EOW] and (ids[2:] == PAD).all()


def test_boundaries_and_batch_padding():
    mapper = CharacterMapper()
    batch = mapper.batch_ids([["a", "b", "c"], ["d"], []])
    assert batch.shape == (3, 5, 50)
    assert batch[0, 0, :3].tolist() == [BOW, BOS, EOW]
    assert batch[0, 4, :3].tolist() == [BOW, EOS, EOW]
    # </S> comes right after the last token, before the padding rows, which are all zero.
    assert batch[1, 2, :3].tolist() == [BOW, EOS, EOW]
    assert (batch[1, 3:] == 0).all()
    assert batch[2, 1, 1] == EOS and (batch[2, 2:] == 0).all()
    assert mapper.token_ids("<S>")[1] == BOS and mapper.token_ids("</S>")[1] == EOS


def test_cache_returns_same_row_and_is_bounded():
    mapper = CharacterMapper(cache_size=3)
    first = mapper.token_ids("word")
    assert mapper.token_ids("word") is first
    for w in ["a", "b", "c", "d"]:
        mapper.token_ids(w)
    assert len(mapper._cache) <= 3
    assert np.array_equal(mapper.token_ids("word"), first)


def test_non_string_token_is_a_clear_error():
    import pytest

    with pytest.raises(TypeError, match="tokens must be str"):
        CharacterMapper().token_ids(3)  # type: ignore[arg-type]


def test_the_id_cache_keeps_as_many_strings_as_the_token_cache_so_both_level_off_together():
    """At inference only the strings the token cache lacks are mapped: a larger id cache kept filling
    for thousands of documents after the token cache was full, which a service saw as growth."""
    from spacy_elmo.elmo.nn.token_cache import TokenEmbeddingCache

    mapper = CharacterMapper()
    assert mapper.cache_size == TokenEmbeddingCache().capacity
    for n in range(mapper.cache_size + 10):
        mapper.token_ids(f"new{n}")
    assert len(mapper._cache) <= mapper.cache_size


def test_strings_where_token_lists_go_are_refused_naming_the_caller():
    import pytest

    from spacy_elmo.elmo.errors import InputError
    from spacy_elmo.elmo.nn.chars import refuse_strings

    refuse_strings([["a", "b"], [], ("c",)], "embed")
    for sentences in ("a b", ["a b"], [["a"], "b"]):
        with pytest.raises(
            InputError, match=r"^caller takes sentences as lists of tokens.*\(`text.split\(\)`\), or so$"
        ):
            refuse_strings(sentences, "caller", fix=", or so")
