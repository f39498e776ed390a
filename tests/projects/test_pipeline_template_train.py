"""The template's train step: the last step is scored on dev like a checkpoint and replaces `model-best`
when it scores at least as well (projects/pipeline_template/scripts/train.py). Tiny tagger pipelines
without ELMo: the rule is the training loop's, not the component's."""

import json
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from tests.support.paths import REPO

sys.path.insert(0, str(REPO / "projects" / "pipeline_template"))
from scripts.train import keep_the_better, weighted_score  # noqa: E402

WORDS = ["She", "went", "to", "the", "bank", "."]
TAGS = ["PRP", "VBD", "IN", "DT", "NN", "."]


def tagger_pipeline(dev: Path, steps: int):
    """A tagger from spaCy's own defaults, trained `steps` updates on one sentence, dev at `dev`."""
    config = spacy.util.load_config_from_str(
        '[paths]\ntrain = null\ndev = null\n[nlp]\nlang = "en"\npipeline = ["tagger"]\n'
        '[components]\n[components.tagger]\nfactory = "tagger"\n'
        "[corpora]\n[corpora.dev]\n@readers = spacy.Corpus.v1\npath = ${paths.dev}\n"
        "[corpora.train]\n@readers = spacy.Corpus.v1\npath = ${paths.train}\n"
        "[training]\nseed = 0\n"
    )
    config["paths"]["dev"] = config["paths"]["train"] = str(dev)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    example = Example(nlp.make_doc(" ".join(WORDS)), Doc(nlp.vocab, words=WORDS, tags=TAGS))
    optimizer = nlp.initialize(lambda: [example])
    for _ in range(steps):
        nlp.update([example], sgd=optimizer)
    return nlp


@pytest.fixture
def dev(tmp_path):
    path = tmp_path / "dev.spacy"
    nlp = spacy.blank("en")
    DocBin(docs=[Doc(nlp.vocab, words=WORDS, tags=TAGS)]).to_disk(path)
    return path


def save(nlp, folder: Path, tag_acc: float) -> None:
    nlp.meta["performance"] = {"tag_acc": tag_acc}
    nlp.to_disk(folder)


def test_the_last_step_replaces_an_untrained_model_best(tmp_path, dev):
    save(tagger_pipeline(dev, steps=0), tmp_path / "model-best", tag_acc=0.0)
    save(tagger_pipeline(dev, steps=30), tmp_path / "model-last", tag_acc=0.0)
    said = keep_the_better(tmp_path)
    assert said.startswith("model-best is the last step"), said
    performance = json.loads((tmp_path / "model-best" / "meta.json").read_text())["performance"]
    assert performance["tag_acc"] == 1.0  # the last step's own dev score, not the old checkpoint's
    tagged = spacy.load(tmp_path / "model-best")(" ".join(WORDS))
    assert [token.tag_ for token in tagged] == TAGS
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dev.spacy", "model-best", "model-last"]


def test_a_better_checkpoint_stays_model_best(tmp_path, dev):
    save(tagger_pipeline(dev, steps=30), tmp_path / "model-best", tag_acc=1.0)
    save(tagger_pipeline(dev, steps=0), tmp_path / "model-last", tag_acc=0.0)
    said = keep_the_better(tmp_path)
    assert said.startswith("model-best kept"), said
    tagged = spacy.load(tmp_path / "model-best")(" ".join(WORDS))
    assert [token.tag_ for token in tagged] == TAGS


def test_the_weighted_score_is_spacys_main_score():
    weights = {"tag_acc": 0.5, "ents_f": 0.5, "ents_p": 0.0, "speed": None}
    assert weighted_score({"tag_acc": 0.8, "ents_f": 0.4, "ents_p": 0.9}, weights) == pytest.approx(0.6)
    assert weighted_score({"tag_acc": None}, weights) == 0.0
