"""ELMo rows follow the tokens through spaCy's retokenizer and `Span.as_doc`: a merged token gets the mean
of its parts' rows, split pieces their parent's, a span's doc its own tokens' rows (doc_data.py). Data
that does not fit its doc is refused by name; layers are float16 unless float32 is asked for."""

import numpy as np
import pytest
import spacy
from spacy.pipeline.functions import merge_entities, merge_noun_chunks
from spacy.tokens import Doc, DocBin, Span

from spacy_elmo import restore_vectors
from spacy_elmo.pipeline.doc_data import as_layer_dtype
from spacy_elmo.pipeline.errors import DocDataError
from tests.support.pipelines import EXACT_LAYERS, elmo_config

WORDS = ["I", "will", "withdraw", "money", "in", "New", "York", "City", "tomorrow", "."]
CITY = slice(5, 8)


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    return nlp


@pytest.fixture
def doc(nlp):
    """The sentence with a parse (for noun chunks) and "New York City" as an entity, through `elmo`."""
    doc = Doc(
        nlp.vocab,
        words=WORDS,
        heads=[2, 2, 2, 2, 2, 7, 7, 4, 2, 2],
        deps=["nsubj", "aux", "ROOT", "dobj", "prep", "compound", "compound", "pobj", "npadvmod", "punct"],
        pos=["PRON", "AUX", "VERB", "NOUN", "ADP", "PROPN", "PROPN", "PROPN", "NOUN", "PUNCT"],
    )
    doc.ents = [Span(doc, CITY.start, CITY.stop, "GPE")]
    return nlp(doc)


def _copies(doc):
    return doc._.elmo["vectors"].copy(), doc._.elmo["layers"].copy()


def _check_merged(doc, vectors, layers, before):
    """`doc` is the original with tokens `before` merged into one."""
    assert len(doc) == len(WORDS) - (before.stop - before.start) + 1
    expected = np.concatenate([vectors[: before.start], vectors[before].mean(0, keepdims=True), vectors[before.stop :]])
    for token, row in zip(doc, expected):
        np.testing.assert_allclose(token.vector, row, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(doc._.elmo["vectors"], expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(doc._.elmo["layers"][:, before.start], layers[:, before].mean(1), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(doc._.elmo["layers"][:, -1], layers[:, -1])


def test_merge_entities(doc):
    vectors, layers = _copies(doc)
    merged = merge_entities(doc)
    assert merged[CITY.start].text == "New York City"
    np.testing.assert_array_equal(merged[CITY.start + 1].vector, vectors[CITY.stop])  # "tomorrow"
    _check_merged(merged, vectors, layers, CITY)


def test_merge_noun_chunks(doc):
    vectors, layers = _copies(doc)
    merged = merge_noun_chunks(doc)
    assert [t.text for t in merged] == ["I", "will", "withdraw", "money", "in", "New York City", "tomorrow", "."]
    _check_merged(merged, vectors, layers, CITY)
    np.testing.assert_allclose(merged[4:7].vector, np.stack([t.vector for t in merged[4:7]]).mean(0), rtol=1e-6)
    np.testing.assert_allclose(merged.vector, np.stack([t.vector for t in merged]).mean(0), rtol=1e-6, atol=1e-7)


def test_a_split_gives_each_piece_its_parents_row(doc):
    vectors, layers = _copies(doc)
    with doc.retokenize() as retokenizer:
        retokenizer.split(doc[2], ["with", "draw"], heads=[(doc[2], 1), doc[1]])
    assert [t.text for t in doc[2:5]] == ["with", "draw", "money"]
    np.testing.assert_array_equal(doc[2].vector, vectors[2])
    np.testing.assert_array_equal(doc[3].vector, vectors[2])
    np.testing.assert_array_equal(doc[4].vector, vectors[3])
    np.testing.assert_array_equal(doc[-1].vector, vectors[-1])  # no IndexError past the old length
    assert doc._.elmo["layers"].shape[1] == len(doc)
    np.testing.assert_array_equal(doc._.elmo["layers"][:, 3], layers[:, 2])


def test_as_doc_gets_the_spans_rows(doc):
    vectors, layers = _copies(doc)
    span = doc[CITY.start : CITY.stop + 1]
    part = span.as_doc(copy_user_data=True)
    assert restore_vectors([part]) == 1
    for token, row in zip(part, vectors[CITY.start : CITY.stop + 1]):
        np.testing.assert_array_equal(token.vector, row)
    np.testing.assert_array_equal(part._.elmo["layers"], layers[:, CITY.start : CITY.stop + 1])
    np.testing.assert_allclose(part.vector, span.vector, rtol=1e-6)


def test_a_token_that_cuts_through_a_computed_one_is_refused(doc):
    with doc.retokenize() as retokenizer:
        retokenizer.split(doc[5], ["Ne", "w"], heads=[(doc[5], 1), doc[6]])
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[6:8])  # "w York": part of "New" and all of "York"
    assert doc[6].text == "w York"
    with pytest.raises(DocDataError, match="'w York'"):
        _ = doc[6].vector


def test_data_without_offsets_is_refused_with_the_fix(doc):
    del doc._.elmo["offsets"]
    with pytest.raises(DocDataError, match="a dict with 'vectors' and 'offsets'; got \\['layers', 'vectors'\\]"):
        _ = doc[3].vector


def _with_data(nlp, **changes):
    """A doc through `elmo` whose stored data then has `changes` (None deletes a key)."""
    doc = nlp("I will withdraw money .")
    data = doc._.elmo  # the stored dict itself
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data[key] = value(data)
    return doc


MISMATCHES = {
    "no vectors key": ({"vectors": None}, "a dict with 'vectors'"),
    "integer vectors": ({"vectors": lambda d: d["vectors"].astype(np.int32)}, "'vectors' is a int32 array"),
    "vectors of another doc": ({"vectors": lambda d: d["vectors"][:3]}, "'offsets' is"),
    "float offsets": ({"offsets": lambda d: d["offsets"].astype(np.float32)}, "'offsets' is a float32 array"),
    "layers of another width": ({"layers": lambda d: d["layers"][..., :4]}, "'layers' is"),
    "layers of another doc": ({"layers": lambda d: d["layers"][:, :2]}, "'layers' is"),
    "offsets out of order": ({"offsets": lambda d: d["offsets"][::-1].copy()}, "out of order"),
}


@pytest.mark.parametrize("kind", MISMATCHES)
def test_data_that_does_not_match_its_doc_is_refused_by_name(nlp, kind):
    changes, message = MISMATCHES[kind]
    doc = _with_data(nlp, **changes)
    for read in (lambda: restore_vectors([doc]), lambda: doc[1].vector, lambda: doc._.elmo):
        with pytest.raises(DocDataError, match=message) as error:
            read()
        assert "'I will withdraw money .' (5 tokens)" in str(error.value)
        assert "run the elmo component on the doc again" in str(error.value)


def test_a_value_that_is_not_a_dict_is_refused(nlp):
    doc = nlp("Money .")
    (key,) = [key for key in doc.user_data if key[:2] == ("._.", "elmo")]
    doc.user_data[key] = [1, 2]
    with pytest.raises(DocDataError, match="got list"):
        restore_vectors([doc])


def test_parts_of_different_widths_are_refused(nlp):
    first, second = nlp("Money ."), nlp("Banks .")
    data = second._.elmo
    data.update(vectors=data["vectors"][:, :8], layers=data["layers"][..., :8])
    merged = Doc.from_docs([first, second])
    with pytest.raises(DocDataError, match=r"widths \[8, 32\]"):
        restore_vectors([merged])


def test_layers_are_float16_by_default_and_float32_when_asked(nlp, doc):
    assert doc._.elmo["layers"].dtype == np.float16 and doc._.elmo["vectors"].dtype == np.float32
    exact = spacy.blank("en")
    exact.add_pipe("elmo", config={**elmo_config(), **EXACT_LAYERS})
    full = exact(Doc(exact.vocab, words=WORDS))
    assert full._.elmo["layers"].dtype == np.float32
    # float16 rounds each value to 11 significant bits; the vectors come from the float32 layers
    np.testing.assert_allclose(doc._.elmo["layers"], full._.elmo["layers"], rtol=2**-11, atol=2**-24)
    np.testing.assert_array_equal(doc._.elmo["vectors"], full._.elmo["vectors"])


def test_a_bad_store_layers_is_refused_when_the_pipeline_is_built():
    with pytest.raises(ValueError, match='store_layers is .float8.: it is "float16"'):
        spacy.blank("en").add_pipe("elmo", config={**elmo_config(), "store_layers": "float8"})


def test_float32_layers_saved_before_float16_still_load(nlp):
    """Docs written with float32 layers (the old default) are read as they are by today's pipeline."""
    exact = spacy.blank("en")
    exact.add_pipe("elmo", config={**elmo_config(), **EXACT_LAYERS})
    saved = DocBin(store_user_data=True, docs=[exact("Money in the bank .")]).to_bytes()
    (doc,) = DocBin().from_bytes(saved).get_docs(nlp.vocab)
    assert restore_vectors([doc]) == 1 and doc._.elmo["layers"].dtype == np.float32
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[2:4])
    assert doc._.elmo["layers"].dtype == np.float32 and doc._.elmo["layers"].shape[1] == len(doc)


def _float32_edges() -> np.ndarray:
    """float32 values where a float16 rounding can go wrong (ties to even, subnormals, overflow, NaN),
    and values of every magnitude."""
    tiny, big = 2**-24, 65504.0
    edges = [0.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-20, tiny, tiny / 2, tiny * 1.5, tiny / 3, 1 / 3]
    edges += [2**-14 * (1 - 2**-11), big, big + 15.99, big + 16, 1e30, np.inf, np.nan]
    rng = np.random.default_rng(0)
    spread = rng.standard_normal(4096) * 2.0 ** rng.uniform(-30, 18, 4096)
    return np.concatenate([edges, np.negative(edges), spread]).astype(np.float32)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all((a.view(np.uint16) == b.view(np.uint16)) | (np.isnan(a) & np.isnan(b))))


def test_layers_go_to_float16_as_numpy_rounds_them_bit_for_bit():
    layers = _float32_edges().reshape(1, -1, 1)
    read_only, reversed_rows = np.broadcast_to(layers, layers.shape), layers[:, ::-1]
    for given in (layers, read_only, reversed_rows):
        stored = as_layer_dtype(given, np.float16)
        assert stored.dtype == np.float16 and _same_bits(stored, given.astype(np.float16))
    assert as_layer_dtype(layers, np.float32) is layers
