"""`doc._.elmo` data, fuzzed: a doc's stored dict with keys removed or replaced by arrays of any dtype
and shape (offsets of any values), or by no dict at all, read directly, through `token.vector` and
`restore_vectors`, and after a DocBin round trip. Each read gives one row per token or DocDataError."""

import numpy as np
import pytest
import spacy
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from spacy.tokens import DocBin

from spacy_elmo import restore_vectors
from spacy_elmo.pipeline.errors import DocDataError
from tests.support.fuzz import RUNS, fuzz_settings
from tests.support.pipelines import elmo_config

TEXT = "I will withdraw money in New York ."
ARRAYS = hnp.arrays(
    dtype=st.sampled_from(["f2", "f4", "f8", "i4", "i8", "u1", "?", "c8"]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9),
)
OFFSETS = hnp.arrays(dtype=st.sampled_from(["i8", "i4", "u4"]), shape=st.tuples(st.integers(0, 9), st.just(2)))
INT64 = st.integers(-(2**63), 2**63 - 1)  # what msgpack (DocBin) can write at all
VALUES = st.one_of(ARRAYS, OFFSETS, st.none(), INT64, st.text(max_size=3), st.lists(INT64, max_size=3))


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    return nlp


def _reads(doc) -> None:
    """Every way the data is read gives a row per token, or DocDataError naming the doc."""
    for read in (lambda: doc._.elmo["vectors"], lambda: [t.vector for t in doc], lambda: restore_vectors([doc])):
        try:
            result = read()
        except DocDataError as err:
            assert "run the elmo component on the doc again" in str(err), err
            continue
        if isinstance(result, np.ndarray):
            assert len(result) == len(doc)


@pytest.mark.parametrize("slow", RUNS)
def test_any_stored_data_reads_as_rows_or_the_doc_data_error(slow, nlp):
    computed = nlp(TEXT)
    (key,) = [key for key in computed.user_data if key[:2] == ("._.", "elmo")]
    valid = dict(computed.user_data[key])

    @fuzz_settings(slow)
    @given(
        changes=st.dictionaries(st.sampled_from(["vectors", "offsets", "layers", "other"]), VALUES, max_size=3),
        not_a_dict=st.sampled_from([None, [], "x", 3]) | st.just(False),
    )
    def check(changes, not_a_dict):
        doc = nlp.make_doc(TEXT)
        data = {**valid, **changes}
        doc.user_data[key] = not_a_dict if not_a_dict is not False else {k: v for k, v in data.items() if v is not None}
        _reads(doc)
        docs = DocBin(store_user_data=True, docs=[doc]).to_bytes()
        _reads(next(DocBin().from_bytes(docs).get_docs(nlp.vocab)))

    check()
