"""The registry contract: every `spacy-elmo.*` name is bound to its own versioned function, documented
argument by argument and registered in architectures.py, and setup.cfg's entry points name exactly those."""

import configparser
import inspect
import re

import pytest
from spacy.util import registry

from spacy_elmo.pipeline import architectures
from tests.support.paths import REPO

REGISTERED = [
    ("architectures", "spacy-elmo.BiLM.v2"),
    ("architectures", "spacy-elmo.BiLM.v3"),
    ("architectures", "spacy-elmo.ElmoListener.v1"),
    ("architectures", "spacy-elmo.ElmoTok2Vec.v1"),
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
    assert sorted(declared) == sorted(name for _, name in REGISTERED)  # no entry point without its name


def test_no_module_but_architectures_registers_anything():
    package = REPO / "spacy_elmo"
    registering = {
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if re.search(r"registry\.\w+(\(|\.register\()", p.read_text())
    }
    assert registering == {"pipeline/architectures.py"}
