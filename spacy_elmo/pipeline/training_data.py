"""Before training, check that the heads listening to `elmo` find what they learn in the training data.

spaCy reads a missing annotation as unknown, not as wrong: an `ner` trained on a corpus without entities
(a UD treebank) runs to the end with a loss of 0 and an F1 of 0 and saves the pipeline without a
warning. `check_annotations` stops such a run in `initialize`, before the biLM embeds anything, and
says which corpus lacks what and which command makes one that has it. Examples with no gold annotation
of any kind are no training corpus and are not checked: spaCy's placeholder example when
`nlp.initialize()` is given none (labels then come from `add_label`, the data from the user's loop).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .errors import MissingAnnotationError


class Annotation(NamedTuple):
    """What a head learns, and whether a gold doc has any of it."""

    what: str
    found: Callable[[Doc], bool]


# The built-in factories a listening head may have -> what it learns.
LEARNS_FROM: Dict[str, Annotation] = {
    "tagger": Annotation("part-of-speech tags (token.tag_)", lambda doc: doc.has_annotation("TAG")),
    "morphologizer": Annotation(
        "morphology or coarse POS (token.morph, token.pos_)",
        lambda doc: doc.has_annotation("MORPH") or doc.has_annotation("POS"),
    ),
    "parser": Annotation("dependency arcs (token.dep_)", lambda doc: doc.has_annotation("DEP")),
    "ner": Annotation("named entities (doc.ents)", lambda doc: len(doc.ents) > 0),
    "senter": Annotation("sentence starts (token.is_sent_start)", lambda doc: doc.has_annotation("SENT_START")),
    "trainable_lemmatizer": Annotation("lemmas (token.lemma_)", lambda doc: doc.has_annotation("LEMMA")),
    "textcat": Annotation("categories (doc.cats)", lambda doc: bool(doc.cats)),
    "textcat_multilabel": Annotation("categories (doc.cats)", lambda doc: bool(doc.cats)),
    "entity_linker": Annotation(
        "knowledge-base links (entities' kb_id_)", lambda doc: any(ent.kb_id_ for ent in doc.ents)
    ),
}
# The factories that learn the spans under their own `spans_key`.
LEARNS_SPANS = ("spancat", "spancat_singlelabel", "span_finder")
# Gold annotations any training corpus would have one of (spaCy's placeholder example has none).
ANY_ANNOTATION = ("TAG", "POS", "MORPH", "LEMMA", "DEP", "ENT_IOB", "SENT_START")
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


def annotation_of(factory: str, settings: Mapping[str, Any]) -> Optional[Annotation]:
    """What a head of `factory` with component settings `settings` learns; None: a kind not known here."""
    if factory in LEARNS_SPANS:
        key = settings.get("spans_key", "sc")
        return Annotation(f"spans (doc.spans[{key!r}])", lambda doc: len(doc.spans.get(key, ())) > 0)
    return LEARNS_FROM.get(factory)


def listening_heads(nlp: Language, listening: Iterable[str]) -> Dict[str, Annotation]:
    """The enabled heads among `listening` (the components listening to `elmo`) and, for a `tok2vec`
    component among them, the heads listening to it, each with what it learns. A head of a kind not
    known here is left unchecked, with a warning saying so.

    nlp (Language): the pipeline.
    listening (Iterable[str]): the names of the components with an ElmoListener.
    """
    names: List[str] = []
    for name in listening:
        if name in nlp.pipe_names:
            names.extend(getattr(nlp.get_pipe(name), "listening_components", None) or [name])
    heads: Dict[str, Annotation] = {}
    for name in dict.fromkeys(names):
        if name not in nlp.pipe_names:
            continue
        factory = nlp.get_pipe_meta(name).factory
        annotation = annotation_of(factory, getattr(nlp.get_pipe(name), "cfg", {}))
        if annotation is None:
            warnings.warn(
                f"{name!r} (factory {factory!r}) learns from ELMo, but spacy-elmo does not know which annotation "
                "it learns, so its training data is not checked for it",
                stacklevel=2,
            )
        else:
            heads[name] = annotation
    return heads


def check_annotations(heads: Mapping[str, Annotation], examples: Iterable[Example], corpus: str) -> None:
    """Raise unless each head finds its annotation in at least one example's gold doc. Stops reading at
    the first example where all have been found: on a corpus that has them, one or a few docs.

    heads (Mapping[str, Annotation]): component name -> what it learns (`listening_heads`).
    examples (Iterable[Example]): the training examples, read once.
    corpus (str): how the message names them (`training_corpus`).
    """
    missing = dict(heads)
    annotated = False
    remaining = iter(examples)
    while missing:
        example = next(remaining, None)
        if example is None:
            break
        gold = example.reference
        annotated = annotated or any(gold.has_annotation(attr) for attr in ANY_ANNOTATION) or bool(gold.cats)
        annotated = annotated or any(len(group) for group in gold.spans.values())
        missing = {name: annotation for name, annotation in missing.items() if not annotation.found(gold)}
    if missing and annotated:
        name, annotation = next(iter(missing.items()))
        raise MissingAnnotationError(
            f"{name!r} learns {annotation.what} on the ELMo layers, but no example in {corpus} has "
            f"any: it would train to a loss of 0 and a score of 0. Train it on a corpus that has them, or "
            f"leave {name!r} out of the pipeline. {MAKE_CORPORA}"
        )
