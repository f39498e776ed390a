"""A spaCy user's path, end to end through spaCy's own CLI: `spacy init config` -> `spacy init
fill-elmo` -> `spacy debug config` -> `spacy train` on a tiny corpus -> every head's tok2vec answers to
the biLM's layers (a head that still listened to tok2vec alone would not)."""

import shlex
from typing import List

import numpy as np
import pytest
import spacy
import torch
from confection import Config
from spacy.cli.init_config import init_config
from spacy.tokens import Doc, DocBin, Span
from typer.testing import CliRunner

from spacy_elmo.cli import app
from spacy_elmo.pipeline.layers import get_bilm
from tests.e2e.test_train_elmo import SENTENCES
from tests.support.cli import run_cli
from tests.support.paths import TINY_MODEL

HEADS = ("tagger", "morphologizer", "parser", "ner")
TEXT = "Alice went to the bank in Paris ."


UPOS = {"NNP": "PROPN", "VBD": "VERB", "VBZ": "VERB", "TO": "ADP", "IN": "ADP", "DT": "DET", "NN": "NOUN", ".": "PUNCT"}


def corpus(path, copies: int):
    """The sentences with all four heads' annotation: tags, POS and a noun's number, entities, and a flat
    parse (every word attached to the second); 8 copies make each arc frequent enough for spaCy's parser
    to keep its label (min_action_freq = 30)."""
    vocab = spacy.blank("en").vocab
    docs = []
    for text, tags, ents in SENTENCES * copies:
        words = text.split()
        doc = Doc(
            vocab,
            words=words,
            tags=tags,
            pos=[UPOS[tag] for tag in tags],
            morphs=["Number=Sing" if tag in ("NN", "NNP") else "" for tag in tags],
            heads=[1] * len(words),
            deps=["ROOT" if i == 1 else "attached" for i in range(len(words))],
        )
        doc.ents = [Span(doc, start, end, label=label) for start, end, label in ents]
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)
    return path


def hinted_train_command(stdout: str) -> List[str]:
    """The arguments after `python -m spacy` of the `train it:` line fill-elmo prints."""
    hint = next(line for line in stdout.splitlines() if "train it: " in line).split("train it: ", 1)[1]
    words = shlex.split(hint)
    assert words[:3] == ["python", "-m", "spacy"], hint
    return words[3:]


def head_vectors(nlp, head: str) -> np.ndarray:
    doc = nlp.get_pipe("elmo")(nlp.make_doc(TEXT))
    vectors = nlp.get_pipe(head).model.get_ref("tok2vec").predict([doc])
    return np.concatenate([np.asarray(v) for v in vectors]) if isinstance(vectors, list) else np.asarray(vectors)


@pytest.mark.slow
def test_spacy_init_config_filled_trains_every_head_on_elmo(tmp_path):
    base, filled = tmp_path / "base.cfg", tmp_path / "filled.cfg"
    made = run_cli("init", "config", base, "--pipeline", ",".join(HEADS), module="spacy")
    assert made.returncode == 0, made.stderr[-2000:]
    result = run_cli("init", "fill-elmo", base, filled, "--model", TINY_MODEL, module="spacy")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    train, dev = corpus(tmp_path / "train.spacy", 8), corpus(tmp_path / "dev.spacy", 1)
    paths = ("--paths.train", train, "--paths.dev", dev)
    checked = run_cli("debug", "config", filled, *paths, module="spacy")
    assert "Config is valid" in checked.stdout, checked.stdout[-2000:] + checked.stderr[-2000:]
    # The command fill-elmo prints, as typed, beside the corpora it names.
    trained = run_cli(*hinted_train_command(result.stdout), "--training.max_steps", 2, module="spacy", cwd=tmp_path)
    assert trained.returncode == 0, trained.stdout[-3000:] + trained.stderr[-3000:]
    nlp = spacy.load(tmp_path / "output" / "model-last")
    assert nlp.pipe_names == ["elmo", *HEADS]
    before = {head: head_vectors(nlp, head) for head in HEADS}
    with torch.no_grad():
        for parameter in get_bilm(nlp.get_pipe("elmo").model).parameters():
            parameter.mul_(1.5)
    for head in HEADS:
        assert not np.allclose(head_vectors(nlp, head), before[head]), f"{head} does not hear the biLM"


def test_a_component_left_as_it_is_is_named_apart_from_the_config_and_shared_fills_the_tok2vec(tmp_path):
    base = tmp_path / "base.cfg"
    init_config(lang="en", pipeline=["tagger", "textcat"], optimize="efficiency", gpu=False, silent=True).to_disk(base)
    result = CliRunner().invoke(app, ["fill-elmo", str(base), "-", "--shared", "--model", str(TINY_MODEL)])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == "textcat (spacy.TextCatBOW.v3) has no tok2vec for ELMo to feed: it stays as it is"
    filled = Config().from_str(result.stdout, interpolate=False)
    assert filled["nlp"]["pipeline"] == ["elmo", "tok2vec", "tagger", "textcat"]
    assert filled["components"]["tok2vec"]["model"]["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    assert filled["components"]["tagger"]["model"]["tok2vec"]["@architectures"] == "spacy.Tok2VecListener.v1"


def test_the_train_hint_names_the_corpora_spacy_train_needs(tmp_path):
    base, filled = tmp_path / "base.cfg", tmp_path / "filled.cfg"
    init_config(lang="en", pipeline=["tagger"], optimize="efficiency", gpu=False, silent=True).to_disk(base)
    result = CliRunner().invoke(app, ["fill-elmo", str(base), str(filled), "--model", str(TINY_MODEL)])
    assert result.exit_code == 0, result.output
    assert hinted_train_command(result.stdout) == [
        "train",
        str(filled),
        "--output",
        "./output",
        "--paths.train",
        "./train.spacy",
        "--paths.dev",
        "./dev.spacy",
    ]
