"""One way to name a model everywhere: a published model's catalogue name works in `load_bilm`, the spaCy
config (`spacy-elmo.BiLM.v2` `name`) and `dump` once `download` has put it in the cache, and fails with
the download command before. The download comes from a `file://` mirror holding the tiny fixture model
under the catalogue's own URLs (no internet)."""

import shutil
from urllib.parse import urlsplit

import h5py
import numpy as np
import pytest
import spacy
from thinc.api import Config

from spacy_elmo import load_bilm
from spacy_elmo.errors import ElmoError
from spacy_elmo.hub import ModelNotDownloadedError, download_model, load_catalogue
from tests.support.cli import run_cli
from tests.support.paths import TINY_MODEL
from tests.support.pipelines import EXACT_LAYERS, elmo_config

NAME = "allennlp-small"
SENTENCES = [["The", "bank", "by", "the", "river", "."], ["Money", "."]]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty model cache, the one every command and loader of this test reads."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(cache))
    return cache


@pytest.fixture
def mirror(tmp_path):
    """A mirror laid out as `<base>/<host>/<path>`, with the tiny model's files at NAME's URLs."""
    root = tmp_path / "mirror"
    sources = {"options.json": TINY_MODEL / "options.json", "weights.hdf5": TINY_MODEL / "weights.hdf5"}
    for entry in load_catalogue().get(NAME).files:
        parts = urlsplit(entry.url)
        target = root / parts.netloc / parts.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources[entry.save_as], target)
    return root.as_uri()


def test_a_catalogue_name_not_downloaded_fails_with_the_download_command(cache):
    with pytest.raises(ModelNotDownloadedError, match=f"python -m spacy_elmo download {NAME}"):
        load_bilm(NAME)
    # The config builds (a saved pipeline naming the model carries its weights and must load anywhere);
    # the weights' first use says what to run.
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(name=NAME))
    with pytest.raises(ModelNotDownloadedError, match=f"python -m spacy_elmo download {NAME}"):
        nlp.initialize()


def test_an_unknown_name_lists_where_names_come_from(cache):
    with pytest.raises(ElmoError, match="spacy_elmo models"):
        spacy.blank("en").add_pipe("elmo", config=elmo_config(name="no-such-elmo"))


def test_a_downloaded_catalogue_name_loads_everywhere(cache, mirror, tmp_path):
    download_model(NAME, base_url=mirror, progress=False)
    expected = load_bilm(TINY_MODEL).embed(SENTENCES)

    for got, want in zip(load_bilm(NAME).embed(SENTENCES), expected):
        np.testing.assert_array_equal(got, want)

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**elmo_config(name=NAME), **EXACT_LAYERS})
    nlp.initialize()
    doc = nlp(" ".join(SENTENCES[0]))
    np.testing.assert_allclose(doc._.elmo["layers"], expected[0], atol=1e-6)

    text = tmp_path / "text.txt"
    text.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n", encoding="utf8")
    run_cli("dump", str(text), str(tmp_path / "layers.hdf5"), "--model", NAME, "--no-progress")
    with h5py.File(tmp_path / "layers.hdf5", "r") as dumped:
        # Another process: its CPU kernels are chosen by timing, so the last bits may differ.
        np.testing.assert_allclose(dumped["1"][()], expected[1], atol=1e-6, rtol=0)


def test_a_config_naming_a_downloaded_model_round_trips(cache, mirror, tmp_path):
    download_model(NAME, base_url=mirror, progress=False)
    nlp = spacy.blank("de")
    nlp.add_pipe("elmo", config={**elmo_config(name=NAME), **EXACT_LAYERS})
    nlp.initialize()
    assert Config(nlp.config)["components"]["elmo"]["model"]["name"] == NAME
    # The model named, not the default one: its layers are the tiny model's that the mirror served.
    expected = load_bilm(TINY_MODEL).embed([["Bank", "."]])[0]
    np.testing.assert_allclose(nlp("Bank .")._.elmo["layers"], expected, atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(cache)  # the saved pipeline carries the weights
    reloaded = spacy.load(tmp_path / "pipeline")
    np.testing.assert_array_equal(reloaded("Bank .")._.elmo["layers"], nlp("Bank .")._.elmo["layers"])
