"""Before training, check that the heads listening to `elmo` find what they learn in the training data.

spaCy reads a missing annotation as unknown, not as wrong: an `ner` trained on a corpus without entities
(a UD treebank) runs to the end with a loss of 0 and an F1 of 0 and saves the pipeline without a
warning. `check_annotations` stops such a run in `initialize`, before the biLM embeds anything, and
says which corpus lacks what and which command makes one that has it. Examples with no gold annotation
of any kind are no training corpus and are not checked: spaCy's placeholder example when
`nlp.initialize()` is given none (labels then come from `add_label`, the data from the user's loop).
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .errors import MissingAnnotationError

# The built-in factories a listening head may have -> (what it learns, whether a gold doc has any).
LEARNS_FROM: Dict[str, Tuple[str, Callable[[Doc], bool]]] = {
    "tagger": ("part-of-speech tags (token.tag_)", lambda doc: doc.has_annotation("TAG")),
    "morphologizer": (
        "morphology or coarse POS (token.morph, token.pos_)",
        lambda doc: doc.has_annotation("MORPH") or doc.has_annotation("POS"),
    ),
    "parser": ("dependency arcs (token.dep_)", lambda doc: doc.has_annotation("DEP")),
    "ner": ("named entities (doc.ents)", lambda doc: len(doc.ents) > 0),
}
# Gold annotations any training corpus would have one of (spaCy's placeholder example has none).
ANY_ANNOTATION = ("TAG", "POS", "MORPH", "LEMMA", "DEP", "ENT_IOB")
MAKE_CORPORA = (
    "spacy-elmo's downstream spaCy project makes tags, entities and combined tags + entities corpora from "
    "UD English-EWT and Universal NER: python -m spacy project assets projects/downstream, then "
    "python -m spacy project run <command> projects/downstream (its project.yml lists the commands)."
)


def training_corpus(nlp: Optional[Language]) -> str:
    """How the error names the training data: the path `spacy train` reads, when the config has one."""
    if nlp is None:
        return "the training examples"
    config = nlp.config.interpolate()
    dot_name = config.get("training", {}).get("train_corpus")
    section: object = config
    for part in dot_name.split(".") if isinstance(dot_name, str) else ():
        section = section.get(part, {}) if isinstance(section, Mapping) else {}
    path = section.get("path") if isinstance(section, Mapping) else None
    if path is None:
        return "the training examples"
    return f"the training corpus {path} ([{dot_name}])"


def check_annotations(heads: Mapping[str, str], examples: Iterable[Example], corpus: str) -> None:
    """Raise unless each head finds its annotation in at least one example's gold doc. Stops reading at
    the first example where all have been found: on a corpus that has them, one or a few docs.

    heads (Mapping[str, str]): component name -> factory name; factories not in LEARNS_FROM are skipped.
    examples (Iterable[Example]): the training examples, read once.
    corpus (str): how the message names them (`training_corpus`).
    """
    missing = {name: factory for name, factory in heads.items() if factory in LEARNS_FROM}
    annotated = False
    remaining = iter(examples)
    while missing:
        example = next(remaining, None)
        if example is None:
            break
        gold = example.reference
        annotated = annotated or any(gold.has_annotation(attr) for attr in ANY_ANNOTATION) or bool(gold.cats)
        missing = {name: factory for name, factory in missing.items() if not LEARNS_FROM[factory][1](gold)}
    if missing and annotated:
        name, factory = next(iter(missing.items()))
        raise MissingAnnotationError(
            f"{name!r} learns {LEARNS_FROM[factory][0]} on the ELMo layers, but no example in {corpus} has "
            f"any: it would train to a loss of 0 and a score of 0. Train it on a corpus that has them, or "
            f"leave {name!r} out of the pipeline. {MAKE_CORPORA}"
        )
