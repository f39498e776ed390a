"""`export_model` (spacy_elmo/elmo/sources/export.py): the bundled model written as options.json,
model.safetensors, lm_weights.hdf5 and a model card loads back from each weight file bit for bit; the
folder loads by path and as a Hub reference; a folder holding files already and an ELMoForManyLangs
model, which the layout cannot hold, are refused."""

import json

import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.sources import DEFAULT_MODEL, reference_to
from spacy_elmo.elmo.sources.export import export_model
from tests.support.hub_cache import add_repo, offline_cache
from tests.support.paths import MANYLANGS_DIR

SENTENCES = [["The", "bank", "by", "the", "river", "."], ["Money", "."]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export") / "gutenberg"
    return export_model(reference_to(DEFAULT_MODEL), folder, "org/gutenberg"), folder


def test_each_weight_file_loads_back_bit_for_bit(exported):
    files, folder = exported
    assert sorted(path.name for path in folder.iterdir()) == [
        "README.md",
        "lm_weights.hdf5",
        "model.safetensors",
        "options.json",
    ]
    original = load_bilm(DEFAULT_MODEL)
    expected = original.forward_sentences(SENTENCES).layers
    for bilm in (load_bilm(folder), load_bilm(files["options"], files["hdf5"])):
        assert torch.equal(bilm.forward_sentences(SENTENCES).layers, expected)
        for (name, a), (_, b) in zip(bilm.state_dict().items(), original.state_dict().items()):
            assert torch.equal(a, b), name
    assert json.loads(files["options"].read_text(encoding="utf8")) == original.options.to_dict()


def test_the_card_says_what_it_is_where_from_and_how_to_load_it(exported):
    files, _ = exported
    card = files["card"].read_text(encoding="utf8")
    assert card.startswith("---\nlibrary_name: spacy-elmo\n")
    assert f"**Source**: {DEFAULT_MODEL}" in card and "2 LSTM layers of 512 cells" in card
    assert 'load_bilm("hf:org/gutenberg")' in card and '"name": "hf:org/gutenberg"' in card
    assert json.dumps(load_bilm(DEFAULT_MODEL).options.to_dict(), indent=2) in card


def test_the_folder_loads_as_a_hub_reference_once_uploaded(exported, tmp_path, monkeypatch):
    _, folder = exported
    add_repo(offline_cache(monkeypatch, tmp_path / "hub"), "org/gutenberg", sorted(folder.iterdir()))
    expected = load_bilm(DEFAULT_MODEL).forward_sentences(SENTENCES).layers
    assert torch.equal(load_bilm("hf:org/gutenberg").forward_sentences(SENTENCES).layers, expected)


def test_a_folder_with_files_and_a_manylangs_model_are_refused(exported, tmp_path):
    _, folder = exported
    with pytest.raises(InputError, match="not a new or empty folder"):
        export_model(reference_to(DEFAULT_MODEL), folder)
    with pytest.raises(InputError, match="ELMoForManyLangs.*share its folder"):
        export_model(reference_to(MANYLANGS_DIR / "words-1layer-tanh"), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_biLM_as_it_is_now_is_exported_with_its_source_in_the_card(tmp_path):
    from spacy_elmo.elmo.sources.export import export_bilm

    bilm = load_bilm("fixture-tiny")
    with torch.no_grad():
        next(bilm.parameters()).add_(0.5)
    files = export_bilm(bilm, tmp_path / "tuned", "the spaCy pipeline out/model-best")
    assert torch.equal(
        load_bilm(tmp_path / "tuned").forward_sentences(SENTENCES).layers, bilm.forward_sentences(SENTENCES).layers
    )
    assert "the spaCy pipeline out/model-best" in files["card"].read_text(encoding="utf8")
    with pytest.raises(InputError, match="not a new or empty folder"):
        export_bilm(bilm, tmp_path / "tuned", "again")
