"""The registry contract: every `spacy-elmo.*` name is bound to its own versioned function, documented
argument by argument and registered in architectures.py, and setup.cfg's entry points name exactly those.
An older version, a wrapper of the newer, builds what it built: BiLM.v2's sources give BiLM.v3's layers."""

import configparser
import inspect
import re

import numpy as np
import pytest
import spacy
from spacy.training import Example
from spacy.util import load_config, load_model_from_config, registry

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputError
from spacy_elmo.pipeline import architectures
from spacy_elmo.pipeline.architectures import build_bilm_v2, build_bilm_v3, build_sentence_windows_v1
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import run_settings
from tests.support.paths import CONFIGS, FIXTURES, REPO, TINY_MODEL
from tests.support.pipelines import REGISTERED

SETUP_CFG = REPO / "setup.cfg"


@pytest.mark.parametrize("table,name", REGISTERED)
def test_each_name_has_its_own_versioned_function(table, name):
    func = getattr(registry, table).get(name)
    _, base, version = name.split(".")
    assert func.__name__.endswith(f"_{version}")
    assert func.__name__.replace("_", "") == f"build{base}{version}".replace("_", "").lower()
    assert getattr(architectures, func.__name__) is func  # every entry registered in one module


@pytest.mark.parametrize("table,name", REGISTERED)
def test_each_argument_is_documented_in_spacy_style(table, name):
    func = getattr(registry, table).get(name)
    doc = inspect.getdoc(func) or ""
    for parameter in inspect.signature(func).parameters:
        assert re.search(rf"^{parameter} \(.+\): \S", doc, re.MULTILINE), f"{name}: {parameter} undocumented"
    assert re.search(r"^RETURNS \(.+\): \S", doc, re.MULTILINE)


def test_entry_points_name_the_registered_functions():
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG)
    entry_points = parser["options.entry_points"]
    declared = {}
    for group in ("spacy_architectures", "thinc_layers", "spacy_misc", "spacy_loggers"):
        for line in filter(None, entry_points[group].splitlines()):
            name, target = (part.strip() for part in line.split("="))
            declared[name] = target
    for table, name in REGISTERED:
        func = getattr(registry, table).get(name)
        assert declared[name] == f"spacy_elmo.pipeline.architectures:{func.__name__}"
    assert all(target.startswith("spacy_elmo.pipeline.architectures:") for target in declared.values())
    assert sorted(declared) == sorted(name for _, name in REGISTERED)  # no entry point without its name


def test_no_module_but_architectures_registers_anything():
    package = REPO / "spacy_elmo"
    registering = {
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if re.search(r"registry\.\w+(\(|\.register\()", p.read_text())
    }
    assert registering == {"pipeline/architectures.py"}


@pytest.mark.parametrize(
    "v2",
    [
        {"name": "fixture-tiny"},
        {"path": str(TINY_MODEL)},
        {"options": str(TINY_MODEL)},
        {"options": str(TINY_MODEL / "options.json"), "weights": str(TINY_MODEL / "weights.hdf5")},
    ],
)
def test_each_v2_source_gives_the_layers_of_v3s_one_model(v2):
    docs = [spacy.blank("en")("The bank rose ."), spacy.blank("en")("Hi !")]
    expected = build_bilm_v3(str(TINY_MODEL)).predict(docs)
    for got, want in zip(build_bilm_v2(**v2).predict(docs), expected):
        np.testing.assert_array_equal(got, want)


def test_v2_refuses_what_it_refused_when_the_config_is_built():
    """v2's `name` is only a name (v3's `model` may be a folder not here yet), and its settings exclude
    each other."""
    with pytest.raises(InputError, match="no ELMo model 'no-such-elmo'"):
        build_bilm_v2(name="no-such-elmo")
    with pytest.raises(InputError, match="not both"):
        build_bilm_v2(path=str(TINY_MODEL), name="fixture-tiny")
    with pytest.raises(InputError, match="weights .* given without options"):
        build_bilm_v2(weights=str(TINY_MODEL / "weights.hdf5"))


def _tagged():
    return [Example.from_dict(spacy.blank("en")("The bank rose ."), {"tags": ["D", "N", "V", "P"]})]


def test_a_v2_config_that_exists_gives_the_vectors_of_the_shipped_v3_config(fixture_paths):
    """The shipped tagger config as it was (BiLM.v2, the files as --paths.elmo_options/elmo_weights)
    and as it is (BiLM.v3, the folder as --paths.elmo_model) run the same model."""
    options, weights = fixture_paths
    v2 = {"paths.elmo_options": str(options), "paths.elmo_weights": str(weights)}
    v3 = {"paths.elmo_model": str(options.parent)}
    layers = []
    for config, overrides in ((FIXTURES / "configs" / "tagger_elmo_v2.cfg", v2), (CONFIGS / "tagger_elmo.cfg", v3)):
        nlp = load_model_from_config(load_config(config, overrides=overrides), auto_fill=True)
        nlp.initialize(_tagged)
        layers.append(nlp("Alice went to the bank .")._.elmo["layers"])
    np.testing.assert_array_equal(*layers)
    np.testing.assert_allclose(
        layers[1], load_bilm(*fixture_paths).embed([["Alice", "went", "to", "the", "bank", "."]])[0], atol=1e-6
    )


@pytest.mark.parametrize(
    "settings",
    [
        {"stateful": True, "max_batch_tokens": 7, "warm_start": True, "tf32": True, "time_loop": "step"},
        {"fast_mode": "int8", "segmentation": build_sentence_windows_v1(max_length=5, overlap=1)},
    ],
)
def test_v2_hands_v3_each_run_setting(settings):
    v2, v3 = build_bilm_v2(name="fixture-tiny", **settings), build_bilm_v3("fixture-tiny", **settings)
    assert run_settings(v2) == run_settings(v3)
    assert v2._func.keywords["segmenter"] == v3._func.keywords["segmenter"]
