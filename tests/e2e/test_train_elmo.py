"""End to end: `python -m spacy train` on the shipped configs, on a tiny corpus written here."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo import load_bilm
from spacy_elmo.pipeline.layers import get_bilm
from tests.support.cli import run_cli
from tests.support.paths import CONFIGS

CONFIG = CONFIGS / "tagger_ner_elmo.cfg"
SENTENCES = [
    (
        "Alice went to the bank in Paris .",
        ["NNP", "VBD", "TO", "DT", "NN", "IN", "NNP", "."],
        [(0, 1, "PER"), (6, 7, "LOC")],
    ),
    ("Bob sat on the bank of the river .", ["NNP", "VBD", "IN", "DT", "NN", "IN", "DT", "NN", "."], [(0, 1, "PER")]),
    ("Carol lives in London .", ["NNP", "VBZ", "IN", "NNP", "."], [(0, 1, "PER"), (3, 4, "LOC")]),
    ("The money is in the bank .", ["DT", "NN", "VBZ", "IN", "DT", "NN", "."], []),
]


def _corpus(path, copies, entities=True):
    vocab = spacy.blank("en").vocab
    docbin = DocBin()
    for words, tags, ents in [(s.split(), t, e) for s, t, e in SENTENCES] * copies:
        doc = Doc(vocab, words=words, tags=tags)
        if entities:
            doc.ents = [
                doc[start:end].char_span(0, len(doc[start:end].text), label=label) for start, end, label in ents
            ]
        docbin.add(doc)
    docbin.to_disk(path)
    return path


def _spacy_train(config, train, dev, out, fixture_paths, *overrides):
    """The fixture model given as the shipped configs take one: its folder (options.json and weights)."""
    model = fixture_paths[0].parent
    return run_cli(
        "train",
        config,
        "--output",
        out,
        "--paths.train",
        train,
        "--paths.dev",
        dev,
        "--paths.elmo_model",
        model,
        "--training.eval_frequency",
        4,
        *overrides,
        module="spacy",
    )


def _train(tmp_path, fixture_paths, *overrides):
    train, dev = _corpus(tmp_path / "train.spacy", 4), _corpus(tmp_path / "dev.spacy", 1)
    out = tmp_path / "out"
    result = _spacy_train(CONFIG, train, dev, out, fixture_paths, *overrides)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    return out / "model-last", result.stdout


def _max_change(nlp, fixture_paths):
    reference = load_bilm(*fixture_paths)
    trained = get_bilm(nlp.get_pipe("elmo").model)
    return max(
        float((a.detach() - b.detach()).abs().max()) for a, b in zip(trained.parameters(), reference.parameters())
    )


@pytest.mark.slow
def test_frozen_training_learns_one_mix_per_head(tmp_path, fixture_paths):
    model_dir, stdout = _train(tmp_path, fixture_paths, "--training.max_steps", "12")
    assert "elmo mix tagger: s = [" in stdout and "elmo mix ner: s = [" in stdout
    nlp = spacy.load(model_dir)
    mixes = nlp.get_pipe("elmo").mix_weights()
    (tagger,), (ner,) = mixes["tagger"], mixes["ner"]
    for mix in (tagger, ner):
        assert not np.allclose(mix["weights"], 1 / 3, atol=1e-4) and mix["gamma"] != pytest.approx(1.0, abs=1e-4)
    assert not np.allclose(tagger["weights"], ner["weights"], atol=1e-4)
    assert _max_change(nlp, fixture_paths) == 0.0
    doc = nlp("Alice went to the bank in Paris .")
    assert all(token.tag_ for token in doc) and doc[4].has_vector


@pytest.mark.slow
def test_fine_tuning_changes_the_bilm(tmp_path, fixture_paths):
    model_dir, _ = _train(tmp_path, fixture_paths, "--training.max_steps", "4", "--components.elmo.frozen", "false")
    nlp = spacy.load(model_dir)
    assert _max_change(nlp, fixture_paths) > 0.0
    assert all(token.tag_ for token in nlp("Bob sat on the bank ."))


@pytest.mark.slow
def test_ner_on_a_corpus_without_entities_stops_before_training(tmp_path, fixture_paths):
    train = _corpus(tmp_path / "train.spacy", 1, entities=False)
    dev = _corpus(tmp_path / "dev.spacy", 1, entities=False)
    out = tmp_path / "out"
    result = _spacy_train(CONFIG.parent / "ner_elmo.cfg", train, dev, out, fixture_paths, "--training.max_steps", "2")
    assert result.returncode != 0 and "Traceback" not in result.stdout + result.stderr
    message = " ".join(result.stdout.split())  # spaCy's one "✘" line, unwrapped
    assert (
        f"'ner' learns named entities (doc.ents) on the ELMo layers, but no example in the training corpus {train}"
        in message
    )
    assert "python -m spacy project run <command> projects/downstream" in message
    assert not (out / "model-last").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tagger_elmo.cfg", "ner_elmo.cfg", "tagger_ner_elmo.cfg"])
def test_shipped_configs_pass_spacy_debug_config(name, tmp_path):
    train, dev = _corpus(tmp_path / "train.spacy", 1), _corpus(tmp_path / "dev.spacy", 1)
    result = run_cli(
        "debug", "config", CONFIG.parent / name, "--paths.train", train, "--paths.dev", dev, module="spacy"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Config is valid" in result.stdout
