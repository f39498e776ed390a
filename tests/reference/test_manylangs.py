"""ELMoForManyLangs models give what that project's own code gives: `bilm.embed` against its
`Embedder(dir).sents2elmo(sentences, output_layer=-2)` on one batch (tests/fixtures/elmo-manylangs,
made by make_manylangs_fixtures.py with its package)."""

import json

import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.formats import model_layout
from spacy_elmo.elmo.manylangs.model import ManyLangsBiLM
from tests.support.paths import MANYLANGS_DIR

MODELS = ["words-2layers-relu", "chars-1layer-tanh", "chars-2layers-noclip", "words-1layer-tanh"]
SENTENCES = json.loads((MANYLANGS_DIR / "sentences.json").read_text(encoding="utf8"))


def reference(name):
    with np.load(MANYLANGS_DIR / name / "sents2elmo.npz") as stored:
        return [stored[f"arr_{i}"] for i in range(len(SENTENCES))]


@pytest.mark.parametrize("name", MODELS)
def test_embed_matches_its_code(name):
    bilm = load_bilm(MANYLANGS_DIR / name)
    assert isinstance(bilm, ManyLangsBiLM)
    assert model_layout(MANYLANGS_DIR / name).format == "elmoformanylangs"
    ours = bilm.embed(SENTENCES)
    for sentence, mine, theirs in zip(SENTENCES, ours, reference(name)):
        assert mine.shape == theirs.shape == (bilm.n_layers, len(sentence), bilm.output_dim)
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-4, err_msg=" ".join(sentence))


@pytest.mark.parametrize("name", MODELS)
def test_forward_on_ids_matches_too(name):
    """The char-id path (`forward`, deduplicating rows) is the same model as the string path."""
    import torch

    bilm = load_bilm(MANYLANGS_DIR / name)
    kept = [s for s in SENTENCES if s]
    with torch.inference_mode():
        out = bilm(torch.from_numpy(bilm.char_mapper.batch_ids(kept))).layers.numpy()
    for row, (sentence, theirs) in enumerate(zip(kept, [r for s, r in zip(SENTENCES, reference(name)) if s])):
        np.testing.assert_allclose(out[:, row, : len(sentence)], theirs, rtol=0, atol=1e-4)


@pytest.mark.parametrize("clip", ["cell_clip", "proj_clip"])
@pytest.mark.parametrize("name", ["words-2layers-relu", "chars-1layer-tanh", "words-1layer-tanh"])
def test_the_clips_are_exercised(name, clip):
    """The fixtures' weights are large enough that removing either clip changes the outputs: the
    reference test above checks clipping, not a range where it does nothing."""
    bilm = load_bilm(MANYLANGS_DIR / name)
    for layer in bilm.lstm.layers:
        setattr(layer, clip, None)
    unclipped = bilm.embed(SENTENCES)
    assert max(np.abs(a - b).max() for a, b in zip(unclipped, reference(name)) if a.size) > 1e-3


def test_the_word_embedding_is_looked_up_case_sensitively():
    """'Paris' is in word.dic, 'paris' is not: same characters but for the case of one, different
    token vectors; two unknown words share the `<oov>` word vector."""
    bilm = load_bilm(MANYLANGS_DIR / "words-2layers-relu")
    rows = bilm.char_mapper.batch_ids([["Paris", "paris", "zzz"]], add_boundaries=False)[0]
    words = bilm.vocab.words
    assert rows[0, -1] == words["Paris"] + 1
    assert rows[1, -1] == rows[2, -1] == words["<oov>"] + 1


def test_characters_are_code_points_with_its_markers():
    bilm = load_bilm(MANYLANGS_DIR / "chars-1layer-tanh")
    mapper = bilm.char_mapper
    rows = bilm.vocab.char_rows()
    chars = bilm.vocab.chars
    row = mapper.token_ids("жa")  # "ж" is not in char.dic
    assert row[0] == rows[chars["<eow>"]], "its code puts <eow>'s id first"
    assert list(row[1:4]) == [rows[chars["<oov>"]], rows[chars["a"]], rows[chars["<bow>"]]]
    assert (row[4:] == rows[chars["<pad>"]]).all()
    long = mapper.token_ids("supercalifragilistic")
    assert list(long[1:9]) == [rows[chars[c]] for c in "supercal"], "cut to max_characters_per_token - 2"
    assert mapper.token_ids("x\u3000y")[2] == rows[chars["\u3000"]], "the id-only line of char.dic is U+3000"
