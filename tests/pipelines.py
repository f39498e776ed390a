"""Small pipelines the tests build again and again: the tiny bundled biLM with a listening tagger."""

import spacy
from spacy.language import Language

TAGGER_ON_ELMO = {
    "model": {
        "@architectures": "spacy.Tagger.v2",
        "tok2vec": {
            "@architectures": "spacy-elmo.ElmoListener.v1",
            "upstream": "elmo",
            "mix": {"@layers": "spacy-elmo.ScalarMix.v1"},
        },
    }
}


def tiny_tagger_pipeline(frozen: bool) -> Language:
    """`elmo` (fixture-tiny) and a tagger listening to it, not yet initialized."""
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v2", "name": "fixture-tiny"}, "frozen": frozen}
    )
    nlp.add_pipe("tagger", config=TAGGER_ON_ELMO)
    return nlp
