"""Every kind of spaCy head on ELMo, the way a spaCy user makes one: `spacy init config` with the head ->
`fill_elmo_config` (per head, or `shared`) -> `spacy debug config` -> `spacy train` a few steps on a
handful of examples made here -> `spacy.load` -> run, with the head's tok2vec answering to the biLM."""

from typing import Any, Callable, List

import numpy as np
import pytest
import spacy
import torch
from spacy.cli.debug_config import debug_config
from spacy.cli.init_config import init_config
from spacy.cli.train import train
from spacy.kb import InMemoryLookupKB
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from spacy_elmo.pipeline.fill_config import fill_elmo_config
from spacy_elmo.pipeline.layers import get_bilm
from spacy_elmo.pipeline.layers.listener import ElmoListener
from tests.e2e.test_train_elmo import SENTENCES
from tests.support.paths import TINY_MODEL
from tests.support.pipelines import textcat_of

TEXT = "Alice went to the bank in Paris . Carol lives in London ."
# Each entity's knowledge-base id; the tiny KB below holds them.
KB_IDS = {"Alice": "Q1", "Bob": "Q2", "Carol": "Q3", "Paris": "Q4", "London": "Q5"}
KB_LOADER = "spacy-elmo-tests.tiny_kb.v1"
VECTOR_LENGTH = 64  # `spacy init config`'s entity_vector_length


@spacy.registry.misc(KB_LOADER)
def tiny_kb() -> Callable[[Vocab], InMemoryLookupKB]:
    def load(vocab: Vocab) -> InMemoryLookupKB:
        kb = InMemoryLookupKB(vocab, entity_vector_length=VECTOR_LENGTH)
        for i, (alias, entity) in enumerate(KB_IDS.items()):
            kb.add_entity(entity, freq=10, entity_vector=np.full(VECTOR_LENGTH, i / 5, dtype="f"))
            kb.add_alias(alias, [entity], [1.0])
        return kb

    return load


def gold_docs(vocab: Vocab) -> List[Doc]:
    """Each pair of the sentences as one doc with every head's annotation: sentence starts, lemmas (the
    lower-cased words), tags, whether a place is named (cats), entities with their KB ids and as spans."""
    docs = []
    for first, second in zip(SENTENCES, SENTENCES[1:] + SENTENCES[:1]):
        words, tags, ents = first[0].split(), first[1] + second[1], list(first[2])
        ents += [(start + len(words), end + len(words), label) for start, end, label in second[2]]
        starts = [i in (0, len(words)) for i in range(len(tags))]
        words += second[0].split()
        doc = Doc(vocab, words=words, tags=tags, sent_starts=starts, lemmas=[word.lower() for word in words])
        doc.ents = [Span(doc, start, end, label=label, kb_id=KB_IDS[words[start]]) for start, end, label in ents]
        doc.spans["sc"] = list(doc.ents)
        place = float(any(label == "LOC" for _, _, label in ents))
        doc.cats = {"PLACE": place, "NOPLACE": 1.0 - place}
        docs.append(doc)
    return docs


def spacy_config(pipeline: List[str], optimize: str) -> Any:
    """`spacy init config`'s config; for accuracy (where a textcat gets a tok2vec) without the static
    vectors of a pipeline to download."""
    config = init_config(lang="en", pipeline=pipeline, optimize=optimize, gpu=False, silent=True)
    config["paths"]["vectors"] = None
    if "tok2vec" in config["components"]:
        config["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] = False
    return config


def with_kb(config: Any) -> None:
    """A sentencizer for the entity linker's sentences, annotating in training, and the tiny KB."""
    config["components"]["sentencizer"] = {"factory": "sentencizer"}
    config["nlp"]["pipeline"].insert(0, "sentencizer")
    config["training"]["annotating_components"] = ["sentencizer"]
    config["initialize"].setdefault("components", {})["entity_linker"] = {"kb_loader": {"@misc": KB_LOADER}}


def unchanged(config: Any) -> None:
    """The config as `spacy init config` wrote it."""


# case -> (pipeline, optimize, change to the config, what the trained head writes on a doc)
HEADS = {
    "senter": (["senter"], "efficiency", unchanged, lambda doc: doc.has_annotation("SENT_START")),
    "textcat_ensemble": (["textcat"], "accuracy", unchanged, lambda doc: set(doc.cats) == {"PLACE", "NOPLACE"}),
    "textcat_cnn": (["textcat"], "accuracy", textcat_of("spacy.TextCatCNN.v2"), lambda doc: len(doc.cats) == 2),
    "textcat_reduce": (["textcat"], "accuracy", textcat_of("spacy.TextCatReduce.v1"), lambda doc: len(doc.cats) == 2),
    "textcat_multilabel": (["textcat_multilabel"], "accuracy", unchanged, lambda doc: len(doc.cats) == 2),
    "spancat": (["spancat"], "efficiency", unchanged, lambda doc: "sc" in doc.spans),
    "spancat_singlelabel": (["spancat_singlelabel"], "efficiency", unchanged, lambda doc: "sc" in doc.spans),
    "span_finder": (["span_finder"], "efficiency", unchanged, lambda doc: "sc" in doc.spans),
    "trainable_lemmatizer": (["trainable_lemmatizer"], "efficiency", unchanged, lambda doc: doc[0].lemma_ != ""),
    "entity_linker": (
        ["entity_linker"],
        "efficiency",
        with_kb,
        lambda doc: doc.ents[0].kb_id_ in (*KB_IDS.values(), "NIL"),
    ),
}


def trained(tmp_path, capsys, config: Any) -> spacy.Language:
    """`config` checked by `spacy debug config`, trained a few steps, saved and loaded."""
    path = tmp_path / "config.cfg"
    config.to_disk(path, interpolate=False)
    data = spacy.blank("en").vocab
    for name in ("train", "dev"):
        DocBin(docs=gold_docs(data)).to_disk(tmp_path / f"{name}.spacy")
    overrides = {"paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy")}
    debug_config(path, overrides=overrides)
    assert "Config is valid" in capsys.readouterr().out
    train(path, tmp_path / "out", overrides={**overrides, "training.max_steps": 3, "training.eval_frequency": 3})
    return spacy.load(tmp_path / "out" / "model-last")


def listener_output(nlp: spacy.Language, listener: ElmoListener) -> np.ndarray:
    doc = nlp.get_pipe("elmo")(nlp.make_doc(TEXT))
    return np.concatenate([np.asarray(rows) for rows in listener.predict([doc])])


def assert_hears_the_bilm(nlp: spacy.Language, component: str) -> None:
    """`component`'s model holds an ElmoListener whose output moves with the biLM's weights."""
    listeners = [node for node in nlp.get_pipe(component).model.walk() if isinstance(node, ElmoListener)]
    assert len(listeners) == 1, f"{component} has {len(listeners)} ELMo listeners"
    before = listener_output(nlp, listeners[0])
    with torch.no_grad():
        for parameter in get_bilm(nlp.get_pipe("elmo").model).parameters():
            parameter.mul_(1.5)
    assert not np.allclose(listener_output(nlp, listeners[0]), before), f"{component} does not hear the biLM"


@pytest.mark.slow
@pytest.mark.parametrize("case", HEADS)
def test_every_head_kind_trains_on_elmo(case, tmp_path, capsys):
    pipeline, optimize, change, writes = HEADS[case]
    base = spacy_config(pipeline, optimize)
    change(base)
    nlp = trained(tmp_path, capsys, fill_elmo_config(base, model=str(TINY_MODEL)))
    head = pipeline[0]
    assert nlp.pipe_names[0] == "elmo" and head in nlp.pipe_names and "tok2vec" not in nlp.pipe_names
    doc = nlp.make_doc(TEXT)
    doc.ents = [Span(doc, 0, 1, label="PER")]  # what an ner before the entity linker would find
    for _, component in nlp.pipeline:
        doc = component(doc)
    assert writes(doc)
    assert_hears_the_bilm(nlp, head)


@pytest.mark.slow
def test_shared_tok2vec_feeds_every_head_from_one_mix(tmp_path, capsys):
    base = spacy_config(["tagger", "ner", "textcat"], "accuracy")
    filled = fill_elmo_config(base, model=str(TINY_MODEL), shared=True)
    for head in ("tagger", "ner", "textcat"):
        assert filled["components"][head]["model"]["tok2vec"]["@architectures"] == "spacy.Tok2VecListener.v1"
    nlp = trained(tmp_path, capsys, filled)
    assert nlp.pipe_names == ["elmo", "tok2vec", "tagger", "ner", "textcat"]
    assert set(nlp.get_pipe("elmo").mix_weights()) == {"tok2vec"}
    doc = nlp(TEXT)
    assert all(token.tag_ for token in doc) and set(doc.cats) == {"PLACE", "NOPLACE"}
    assert_hears_the_bilm(nlp, "tok2vec")
