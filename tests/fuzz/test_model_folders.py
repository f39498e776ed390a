"""Model folders and archives, fuzzed: one file of an ELMoForManyLangs folder or a TF-Hub module
mutated (its JSON configs also with a value swapped), zip and tar archives mutated or random. Each
loads with finite weights, giving finite vectors or refusing to, or fails with the package's error
naming the folder or archive."""

import json
import shutil
import tarfile
import zipfile

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.formats import load_model, model_options
from tests.support.fuzz import RUNS, embeds_finite_or_refuses, fuzz_file, fuzz_settings, json_swapped, mutated
from tests.support.paths import ALLENNLP_DIR, FIXTURES, MANYLANGS_DIR

FOLDERS = {"elmoformanylangs": MANYLANGS_DIR / "words-2layers-relu", "tfhub": FIXTURES / "elmo-tfhub" / "dp-1shard"}


def _model_files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.suffix != ".npz")


def _loads_or_names(path) -> None:
    """The model at `path` and its options read with finite weights, or an ElmoError naming `path`."""
    try:
        model_options(path)
        bilm = load_model(path)
    except ElmoError as err:
        assert str(path) in str(err), err
        return
    assert all(torch.isfinite(p).all() for p in bilm.parameters())
    embeds_finite_or_refuses(bilm)


@st.composite
def _damaged_file(draw, folder):
    """(a file of `folder`, its new bytes): mutated bytes, or for a JSON file a value swapped."""
    name = draw(st.sampled_from(_model_files(folder)))
    raw = (folder / name).read_bytes()
    if name.endswith(".json") and draw(st.booleans()):
        return name, json.dumps(draw(json_swapped(json.loads(raw)))).encode()
    return name, draw(mutated(raw))


@pytest.mark.parametrize("slow", RUNS)
@pytest.mark.parametrize("model_format", sorted(FOLDERS))
def test_a_model_folder_with_a_damaged_file_loads_or_fails_naming_it(slow, model_format, tmp_path):
    source = FOLDERS[model_format]
    folder = tmp_path / "model"

    @fuzz_settings(slow)
    @given(damage=_damaged_file(source))
    def check(damage):
        name, raw = damage
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, folder)
        (folder / name).write_bytes(raw)
        _loads_or_names(folder)

    check()


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """The fixture model as a zip and as a gzipped tar, each in a folder of its name."""
    folder = tmp_path_factory.mktemp("archives")
    files = [ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"]
    with zipfile.ZipFile(folder / "model.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, f"model/{path.name}")
    with tarfile.open(folder / "model.tar.gz", "w:gz") as archive:
        for path in files:
            archive.add(path, f"model/{path.name}")
    return {name: (folder / name).read_bytes() for name in ("model.zip", "model.tar.gz")}


@pytest.mark.parametrize("slow", RUNS)
@pytest.mark.parametrize("name", ["model.zip", "model.tar.gz"])
def test_a_mutated_archive_loads_or_fails_naming_it(slow, name, archives, tmp_path):
    fuzz_file(slow, tmp_path / name, archives[name], _loads_or_names)
