"""Each floor loads only what it uses: the modules a fresh interpreter holds after importing a part of
the package (or running `--help`), beside the circle check of test_import_graph.py. spaCy costs seconds
to import and Ray more; a Ray worker, a pretraining job and `--help` must not pay for them."""

import importlib
import json
import subprocess
import sys

import pytest

# Prints the top-level modules loaded by `code`: a fresh process, so nothing the tests loaded counts.
PROBE = "import json, sys\n{code}\nprint(json.dumps(sorted({{name.split('.')[0] for name in sys.modules}})))"
COMMAND = (
    "import runpy\nsys.argv = ['spacy_elmo', {args}]\n"
    "try:\n    runpy.run_module('spacy_elmo', run_name='__main__')\nexcept SystemExit:\n    pass"
)
HELP = COMMAND.format(args="'--help'")
LIGHT = {"torch", "spacy", "thinc", "ray", "h5py"}


def loaded_after(code: str) -> set:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code, not_loaded",
    [
        ("import spacy_elmo", LIGHT),
        ("import spacy_elmo.elmo.pretrain", {"spacy", "thinc", "ray"}),
        ("import spacy_elmo.elmo.embed", {"spacy", "thinc", "ray"}),
        ("from spacy_elmo.elmo.embed import ElmoBatchMapper", {"spacy", "thinc", "ray"}),
        ("from spacy_elmo.allennlp import Elmo, ElmoEmbedder, batch_to_ids", {"spacy", "thinc", "ray"}),
        (HELP, LIGHT),
        ("import spacy_elmo.elmo.formats", LIGHT),
        ("import spacy_elmo.elmo.sources.hub", LIGHT),
        (COMMAND.format(args="'models'"), LIGHT),
        (COMMAND.format(args="'download', '--help'"), LIGHT),
        (COMMAND.format(args="'push', '--help'"), LIGHT | {"huggingface_hub"}),
        # A reference is checked for its form without the Hub's client; other sources never load it.
        (
            "from spacy_elmo.elmo.sources import model_reference; model_reference(name='hf:org/repo')",
            {"huggingface_hub"},
        ),
        ("from spacy_elmo import load_bilm; load_bilm('fixture-tiny')", {"huggingface_hub", "safetensors"}),
    ],
    ids=[
        "package",
        "pretrain",
        "embed",
        "ray-data",
        "allennlp",
        "cli-help",
        "formats",
        "hub",
        "models",
        "download-help",
        "push-help",
        "hf-reference",
        "bundled-model",
    ],
)
def test_a_part_loads_only_what_it_uses(code, not_loaded):
    assert not loaded_after(code) & not_loaded


def test_the_probe_sees_what_an_import_loads():
    assert "spacy" in loaded_after("import spacy_elmo.pipeline.component")


@pytest.mark.parametrize(
    "package",
    [
        "spacy_elmo",
        "spacy_elmo.elmo.sources",
        "spacy_elmo.elmo.formats",
        "spacy_elmo.elmo.sources.hub",
        "spacy_elmo.allennlp",
    ],
)
def test_every_public_name_of_a_lazy_package_is_there(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name
