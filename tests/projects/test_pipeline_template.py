"""The pipeline template's whole workflow on tiny data (40 sentences a split, 2 steps, the tiny bundled
biLM), then its package step: the pipeline's wheel installs into a fresh virtualenv as its README says
(pip finding this package's wheel beside it, or this package first and the pipeline with --no-deps),
`spacy.load` works there, and its vectors are the trained pipeline's.

The fresh virtualenv gets spacy-elmo only from its wheel, and the third-party packages (spaCy, torch,
...) from the running virtualenv: a `.pth` file names a folder of links to the running site-packages'
entries, spacy-elmo's own (editable finder, metadata) left out. Installing torch anew would take
minutes and test torch's index, not this package. What the step is about stays whole: `pip install
--no-index` must meet the pipeline's `spacy-elmo` requirement with the wheel beside it, and spaCy finds
the `elmo` factory through that wheel's entry points."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
import spacy

from tests.support.cli import run_cli
from tests.support.paths import REPO

PROJECT = REPO / "projects" / "pipeline_template"
DATA = os.environ.get("SPACY_ELMO_DATA", "")
TEXT = "Alice went to the bank in Paris ."
PACKAGE = "en_tagger_ner_elmo"
LOAD_IN_FRESH_VENV = f"""
import sys, numpy, spacy, spacy_elmo
assert spacy_elmo.__file__.startswith(sys.prefix), spacy_elmo.__file__
nlp = spacy.load("{PACKAGE}")
numpy.save(sys.argv[1], numpy.stack([token.vector for token in nlp("{TEXT}")]))
"""


def fresh_venv(folder: Path) -> Path:
    """A virtualenv whose third-party packages are the running one's, without spacy-elmo; without pip or
    setuptools of its own, so that the running one's are the only ones (this pip installs into it)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder / "venv"], check=True)
    outer = Path(sysconfig.get_paths()["purelib"])
    shared = folder / "shared-site"
    shared.mkdir()
    for entry in outer.iterdir():
        if not entry.name.startswith(("spacy_elmo", "__editable__")):
            (shared / entry.name).symlink_to(entry)
    python = folder / "venv" / "bin" / "python"
    inner = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    )
    (Path(inner.stdout.strip()) / "outer-packages.pth").write_text(f"{shared}\n", encoding="utf8")
    return python


@pytest.mark.slow
@pytest.mark.timeout(900)  # a workflow of six spaCy commands and two pip installs: minutes on 2 cores
@pytest.mark.skipif(not DATA, reason="needs SPACY_ELMO_DATA, a local copy of the public data (labeled/)")
def test_template_trains_packages_and_the_wheel_loads_in_a_fresh_virtualenv(tmp_path):
    project = tmp_path / "template"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("assets", "corpus", "training", "packages"))
    labeled = Path(DATA) / "labeled"
    local = ["--vars.ud", labeled / "ud_english_ewt", "--vars.uner", labeled / "uner_english_ewt"]
    fetched = run_cli("project", "assets", project, *local, module="spacy", timeout=120)
    assert fetched.returncode == 0 and "Checksum doesn't match" not in fetched.stdout, fetched.stdout
    tiny = ["--vars.limit", 40, "--vars.max_steps", 2, "--vars.model", "fixture-tiny"]
    result = run_cli("project", "run", "all", project, *tiny, module="spacy", timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "push skipped" in result.stdout
    assert "scored" in result.stdout  # the last step was scored (2 steps, eval_frequency 200)
    metrics = json.loads((project / "training" / "metrics.json").read_text())
    assert "tag_acc" in metrics and "ents_f" in metrics
    pipeline_wheel = project / "packages" / f"{PACKAGE}-0.0.1" / "dist" / f"{PACKAGE}-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(pipeline_wheel) as wheel:
        metadata = wheel.read(f"{PACKAGE}-0.0.1.dist-info/METADATA").decode()
    assert "Requires-Dist: spacy-elmo" in metadata, metadata
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", REPO],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (package_wheel,) = (tmp_path / "dist").glob("spacy_elmo-*.whl")
    trained = spacy.load(project / "training" / "model-best")
    expected = np.stack([token.vector for token in trained(TEXT)])
    # The two ways the template's README installs it while spacy-elmo is on no package index: pip finding
    # spacy-elmo's wheel beside the pipeline's, or spacy-elmo first and the pipeline with --no-deps.
    forms = {
        "find-links": [["--find-links", package_wheel.parent, pipeline_wheel]],
        "no-deps": [[package_wheel], ["--no-deps", pipeline_wheel]],
    }
    # without a PYTHONPATH naming a checkout, whose build metadata pip would take for spacy-elmo installed
    outside_env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for form, installs in forms.items():
        folder = tmp_path / form
        folder.mkdir()
        python = fresh_venv(folder)
        for args in installs:
            installed = subprocess.run(
                [sys.executable, "-m", "pip", "--python", python, "install", "--no-index", *args],
                capture_output=True,
                text=True,
                env=outside_env,
            )
            assert installed.returncode == 0, form + installed.stdout[-2000:] + installed.stderr[-2000:]
        vectors = folder / "vectors.npy"
        # run outside the checkout: `python -c` puts the working folder first on sys.path
        loaded = subprocess.run(
            [python, "-c", LOAD_IN_FRESH_VENV, vectors], capture_output=True, text=True, cwd=folder, env=outside_env
        )
        assert loaded.returncode == 0, form + loaded.stderr[-3000:]
        np.testing.assert_allclose(np.load(vectors), expected, atol=1e-6, rtol=0)
