"""The downstream experiment's spaCy project runs end to end (on 50 sentences, 4 steps, the tiny biLM),
every task and system of the grid, so the commands behind the README's tables do not rot."""

import json
import os
import shutil
from pathlib import Path

import pytest

from projects.downstream.scripts.run_grid import SCORES, SYSTEMS
from tests.support.cli import run_cli
from tests.support.paths import REPO

PROJECT = REPO / "projects" / "downstream"
DATA = os.environ.get("SPACY_ELMO_DATA", "")


@pytest.mark.slow
@pytest.mark.timeout(1200)  # eleven 4-step runs of five tasks, and a tuning run: minutes on 2 busy cores
@pytest.mark.skipif(not DATA, reason="needs SPACY_ELMO_DATA, a local copy of the public data (labeled/)")
def test_smoke_workflow_trains_tests_and_reports():
    shutil.rmtree(PROJECT / "runs-smoke", ignore_errors=True)  # finished runs are skipped: start clean
    labeled = Path(DATA) / "labeled"
    mirror = {  # the local copy's folders, as `make corpora` names them
        "ud": labeled / "ud_english_ewt",
        "uner": labeled / "uner_english_ewt",
        "uner_train": labeled / "uner_english_ewt" / "raw_2022-12-02_commit0c7ce0d",
    }
    overrides = [arg for name, path in mirror.items() for arg in (f"--vars.{name}", str(path))]
    fetched = run_cli("project", "assets", PROJECT, *overrides, module="spacy", timeout=120, cwd=REPO)
    assert fetched.returncode == 0 and "Checksum doesn't match" not in fetched.stdout, fetched.stdout
    result = run_cli("project", "run", "smoke", PROJECT, module="spacy", timeout=1200, cwd=REPO)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    records = [json.loads(p.read_text()) for p in (PROJECT / "runs-smoke").glob("*/*/*/seed*/result.json")]
    assert {(r["task"], r["system"]) for r in records} == {(t, s) for t in SCORES for s in SYSTEMS[t]}
    assert all("error" not in r and r["train_seconds"] > 0 for r in records)
    for record in records:  # every score spaCy reports for the head, on test and on dev
        for split in ("test", "dev"):
            assert all(isinstance(record[split][k], float) for k in SCORES[record["task"]]), record
    assert all(r["test"]["tag_acc"] > 0 for r in records if r["task"] == "pos")
    assert all(r["test"]["dep_uas"] > 0 for r in records if r["task"] == "dep")
    table = (PROJECT / "runs-smoke" / "results.md").read_text()
    assert "ELMo + task encoder" in table and "PTB tag accuracy" in table
    for title in ("genre macro F1", "entity F1 as spans", "labeled attachment score"):
        assert f"### {title}" in table
    assert (PROJECT / "runs-smoke" / "learning_curve.png").stat().st_size > 0
    # scripts/tune.py: the base and one variant, dev scores only, the override in the variant's config.
    assert "base: dev ents_f" in result.stdout and "mixdrop01: dev ents_f" in result.stdout
    assert "test" not in result.stdout.split("mixdrop01: dev")[1].splitlines()[0]
    variant = (PROJECT / "runs-smoke" / "tune" / "configs" / "ner_mixdrop01.cfg").read_text()
    assert "dropout = 0.1" in variant.split("[components.ner.model.tok2vec.embed.mix]")[1].split("[")[0]
