"""The biLMs shipped inside the package load with no download and give sensible vectors."""

import json
from pathlib import Path

import numpy as np
import pytest

import spacy_elmo
from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.sources import (
    DEFAULT_MODEL,
    MODELS_DIR,
    bundled_model_paths,
    bundled_models,
    model_reference,
    reference_to,
    resolve,
)
from spacy_elmo.elmo.sources.hub import ModelNotDownloadedError
from tests.support.cli import run_cli
from tests.support.paths import REPO


def test_default_model_is_bundled():
    assert DEFAULT_MODEL in bundled_models()


@pytest.mark.parametrize("name", sorted(bundled_models()))
def test_bundled_model_loads_and_embeds(name):
    options, weights = bundled_model_paths(name)
    assert (options.parent / "README.md").exists(), "every bundled model says where it comes from"
    bilm = load_bilm(options, weights)
    money, river = bilm.embed(["went to the bank to withdraw money".split(), "sat on the bank of the river".split()])
    assert money.shape == (bilm.n_layers, 7, bilm.output_dim)
    assert np.isfinite(money).all()
    np.testing.assert_array_equal(money[0, 3], river[0, 3])
    assert np.abs(money[1:, 3] - river[1:, 3]).max() > 1e-3


def test_unknown_bundled_model_is_a_clear_error():
    with pytest.raises(ValueError, match="no bundled ELMo model named 'nope'"):
        bundled_model_paths("nope")


def test_a_bundled_name_means_the_packages_copy_even_in_a_checkout():
    """A wheel and an editable install resolve a bundled name alike: never to a checkout's models/."""
    assert all(path.parent == MODELS_DIR for path in bundled_models().values())


def test_default_model_ships_its_softmax_and_evaluate_takes_its_directory(tmp_path):
    """The README's perplexity is reproducible from a checkout:
    `evaluate projects/bundled_model/models/gutenberg-web-2x512 FILE`. A softmax that did not belong to
    the weights would score near the vocabulary size (50,000)."""
    sentences = [
        "It was the best of times , and the house was quiet .",
        "She said that she would come back in the morning .",
        "I do not know what you mean by that , sir .",
    ]
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join(sentences) + "\n", encoding="utf8")
    result = run_cli("evaluate", REPO / "projects" / "bundled_model" / "models" / DEFAULT_MODEL, heldout, "--json")
    assert result.returncode == 0, result.stderr
    reported = json.loads(result.stdout)
    assert reported["n_tokens"] == sum(len(s.split()) + 1 for s in sentences)
    assert 1 < reported["average"] < 1000


def test_package_is_the_default_weights_plus_at_most_2_mb():
    """Every install downloads the package: beside the default model's weights it carries only code,
    options and model cards (the softmax and vocabulary live in the repository's models/)."""
    package = Path(spacy_elmo.__file__).parent
    size = sum(p.stat().st_size for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    weights = bundled_model_paths()[1].stat().st_size
    assert size - weights <= 2_000_000, f"the package is {(size - weights) / 1e6:.1f} MB beside the weights"
    assert not list(package.rglob("softmax.hdf5"))


def test_one_resolver_says_which_files_and_where_they_came_from(tmp_path, monkeypatch):
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path / "cache"))
    options, weights = bundled_model_paths("fixture-tiny")
    by_name = resolve(reference_to("fixture-tiny"))
    assert (by_name.origin, by_name.path) == ("bundled", MODELS_DIR / "fixture-tiny")
    assert resolve(reference_to(by_name.path)).origin == "path"
    pair = resolve(reference_to(options, weights))
    assert (pair.origin, pair.options, pair.weights, pair.path) == ("options", options, weights, None)
    assert pair.reference.describe() == {"options": str(options), "weights": str(weights)}
    assert resolve(model_reference()).path == MODELS_DIR / DEFAULT_MODEL
    alone = resolve(reference_to(options))  # an options.json alone: an untrained biLM, refused for use
    assert (alone.origin, alone.trained) == ("options", False)
    with pytest.raises(ElmoError, match="has no weights"):
        alone.load()
    assert alone.load(untrained=True).n_layers == alone.read_options().n_output_layers
    with pytest.raises(ModelNotDownloadedError, match="python -m spacy_elmo download allennlp-small"):
        resolve(reference_to("allennlp-small"))
    with pytest.raises(ElmoError, match="weights .* given without options"):
        model_reference(weights=weights)
