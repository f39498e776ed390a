"""One way to name a model everywhere: a published model's catalogue name works in `load_bilm`, the spaCy
config (`spacy-elmo.BiLM.v3` `model`) and `dump` once `download` has put it in the cache, and fails with
the download command before. The download comes from a `file://` mirror holding the tiny fixture model
under the catalogue's own URLs (no internet). A Hugging Face Hub reference (`hf:ORG/REPO`) works in the
same places, read from a Hub cache made in the test, offline. An empty path or name, which as a path is
the working directory, is refused everywhere a model is named."""

import shutil
from urllib.parse import urlsplit

import h5py
import numpy as np
import pytest
import spacy
from thinc.api import Config

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError, InputError
from spacy_elmo.elmo.sources.hub import ModelNotDownloadedError, download_model, load_catalogue
from spacy_elmo.elmo.sources.resolver import check_reference
from tests.support.cli import assert_clear_error, run_cli
from tests.support.hub_cache import add_repo, offline_cache
from tests.support.paths import TINY_MODEL
from tests.support.pipelines import EXACT_LAYERS, elmo_config

NAME = "allennlp-small"
HUB_NAME = "hf:org/tiny"
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
    nlp.add_pipe("elmo", config=elmo_config(model=NAME))
    with pytest.raises(ModelNotDownloadedError, match=f"python -m spacy_elmo download {NAME}"):
        nlp.initialize()


def test_an_unknown_name_lists_where_names_come_from(cache):
    with pytest.raises(ElmoError, match="spacy_elmo models"):
        load_bilm("no-such-elmo")
    with pytest.raises(ElmoError, match="spacy_elmo models"):  # BiLM.v2's `name` is a name: refused when built
        spacy.blank("en").add_pipe("elmo", config=elmo_config(name="no-such-elmo"))
    # BiLM.v3's `model` may name a folder that is not here (a saved pipeline's): refused when it is read.
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(model="no-such-elmo"))
    with pytest.raises(ElmoError, match="no ELMo model 'no-such-elmo': not an existing file .*spacy_elmo models"):
        nlp.initialize()


def assert_loads_everywhere(name, tmp_path):
    """`name` gives the tiny model's layers through `load_bilm`, a pipeline's config and `dump`."""
    expected = load_bilm(TINY_MODEL).embed(SENTENCES)
    for got, want in zip(load_bilm(name).embed(SENTENCES), expected):
        np.testing.assert_array_equal(got, want)

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**elmo_config(model=name), **EXACT_LAYERS})
    nlp.initialize()
    np.testing.assert_allclose(nlp(" ".join(SENTENCES[0]))._.elmo["layers"], expected[0], atol=1e-6)
    assert Config(nlp.config)["components"]["elmo"]["model"]["model"] == name

    text = tmp_path / "text.txt"
    text.write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n", encoding="utf8")
    result = run_cli("dump", str(text), str(tmp_path / "layers.hdf5"), "--model", name, "--no-progress")
    assert result.returncode == 0, result.stderr
    with h5py.File(tmp_path / "layers.hdf5", "r") as dumped:
        # Another process: its CPU kernels are chosen by timing, so the last bits may differ.
        np.testing.assert_allclose(dumped["1"][()], expected[1], atol=1e-6, rtol=0)


def test_a_downloaded_catalogue_name_loads_everywhere(cache, mirror, tmp_path):
    download_model(NAME, base_url=mirror, progress=False)
    assert_loads_everywhere(NAME, tmp_path)


def test_a_config_naming_a_downloaded_model_round_trips(cache, mirror, tmp_path):
    download_model(NAME, base_url=mirror, progress=False)
    nlp = spacy.blank("de")
    nlp.add_pipe("elmo", config={**elmo_config(model=NAME), **EXACT_LAYERS})
    nlp.initialize()
    assert Config(nlp.config)["components"]["elmo"]["model"]["model"] == NAME
    # The model named, not the default one: its layers are the tiny model's that the mirror served.
    expected = load_bilm(TINY_MODEL).embed([["Bank", "."]])[0]
    np.testing.assert_allclose(nlp("Bank .")._.elmo["layers"], expected, atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(cache)  # the saved pipeline carries the weights
    reloaded = spacy.load(tmp_path / "pipeline")
    np.testing.assert_array_equal(reloaded("Bank .")._.elmo["layers"], nlp("Bank .")._.elmo["layers"])


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face Hub cache (offline) holding the tiny model as `org/tiny` (tests/support/hub_cache.py)."""
    cache = offline_cache(monkeypatch, tmp_path / "hub")
    add_repo(cache, "org/tiny", [TINY_MODEL / "options.json", TINY_MODEL / "weights.hdf5"])
    return cache


def test_a_hub_reference_loads_everywhere_a_name_does(hub_cache, tmp_path):
    assert_loads_everywhere(HUB_NAME, tmp_path)


def test_a_hub_reference_not_cached_builds_and_fails_at_initialize(hub_cache):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(model="hf:org/missing"))
    with pytest.raises(ModelNotDownloadedError, match="hf download org/missing"):
        nlp.initialize()
    with pytest.raises(ElmoError, match="hf:ORG/REPO"):
        spacy.blank("en").add_pipe("elmo", config=elmo_config(model="hf:missing"))


@pytest.fixture
def in_a_model_folder(tmp_path, monkeypatch):
    """The working directory holds a model, which an empty path would name without a word."""
    folder = tmp_path / "here"
    shutil.copytree(TINY_MODEL, folder)
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize(
    "model, key",
    [({"path": ""}, "path"), ({"options": "", "weights": ""}, "options"), ({"name": " "}, "name")],
)
def test_an_empty_path_in_the_config_is_refused_when_it_is_built(in_a_model_folder, model, key):
    with pytest.raises(ElmoError, match=f"`{key}` is empty .* leave `{key}` out for the bundled default"):
        spacy.blank("en").add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v2", **model}})


def test_an_empty_path_at_initialize_or_to_load_bilm_is_refused(in_a_model_folder):
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=elmo_config())
    with pytest.raises(ElmoError, match="`options` is empty"):
        elmo.initialize(lambda: [], options="")  # what `--paths.elmo_options ""` gives the shipped configs
    with pytest.raises(ElmoError, match="`model` is empty"):
        load_bilm("")


@pytest.mark.slow
def test_dump_with_an_empty_model_fails_with_one_line(in_a_model_folder, tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("the bank .\n", encoding="utf8")
    result = run_cli("dump", text, tmp_path / "out.hdf5", "--model", "", "--no-progress", cwd=in_a_model_folder)
    assert_clear_error(result, "`model` is empty")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out.hdf5").exists()


@pytest.mark.parametrize("model", ["", " ", "hf:tiny", "hf:org/tiny@", "hf:org/a/b"])
def test_check_reference_refuses_what_no_file_could_make_right(model):
    with pytest.raises(InputError, match="is empty|hf:ORG/REPO"):
        check_reference(model)


@pytest.mark.parametrize("model", ["no-such-folder", "runs/elmo", "hf:org/tiny@v1", "fixture-tiny"])
def test_check_reference_leaves_paths_and_names_to_when_the_weights_are_read(model):
    check_reference(model)


@pytest.mark.parametrize(
    "model, message",
    [
        (None, "no model given"),
        (3, "`model` is 3 \\(a int\\), which names no model"),
        ("x" * 5000, "neither a model name nor a path this system can look up \\(File name too long\\)"),
    ],
)
def test_a_reference_that_names_nothing_is_refused_by_name(model, message):
    with pytest.raises(InputError, match=message):
        load_bilm(model)
