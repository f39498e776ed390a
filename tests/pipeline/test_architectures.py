"""The registry contract: every `spacy-elmo.*` name is bound to its own versioned function, documented
argument by argument and registered in architectures.py, and the legacy version builds what the newer one
builds."""

import configparser
import inspect
import re

import pytest
from spacy.util import registry

from spacy_elmo.pipeline import architectures
from tests.support.paths import REPO

REGISTERED = [
    ("architectures", "spacy-elmo.BiLM.v1"),
    ("architectures", "spacy-elmo.BiLM.v2"),
    ("architectures", "spacy-elmo.ElmoListener.v1"),
    ("architectures", "spacy-elmo.ElmoTok2Vec.v1"),
    ("layers", "spacy-elmo.ScalarMix.v1"),
    ("layers", "spacy-elmo.ScalarMix.v2"),
    ("layers", "spacy-elmo.Pooling.v1"),
    ("layers", "spacy-elmo.AlignedPooling.v1"),
    ("misc", "spacy-elmo.sentence_windows.v1"),
    ("loggers", "spacy-elmo.MixLogger.v1"),
]
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


def test_no_module_but_architectures_registers_anything():
    package = REPO / "spacy_elmo"
    registering = {
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if re.search(r"registry\.\w+(\(|\.register\()", p.read_text())
    }
    assert registering == {"pipeline/architectures.py"}


def test_bilm_v1_builds_what_v2_builds_with_its_segmentation():
    old = architectures.build_bilm_v1(name="fixture-tiny", max_batch_tokens=100, max_length=64, overlap=8)
    new = architectures.build_bilm_v2(
        name="fixture-tiny",
        max_batch_tokens=100,
        segmentation=architectures.build_sentence_windows_v1(max_length=64, overlap=8),
    )
    assert old.attrs == new.attrs
    assert old._func.keywords["segmenter"] == new._func.keywords["segmenter"]


def test_scalar_mix_v1_builds_what_v2_builds_without_a_module():
    old = architectures.build_scalar_mix_v1(weights=[0.1, 0.2, 0.3], gamma=2.0, dropout=0.1)
    new = architectures.build_scalar_mix_v2(weights=[0.1, 0.2, 0.3], gamma=2.0, dropout=0.1)
    assert old.attrs == new.attrs and old.attrs["start_from"] is None
