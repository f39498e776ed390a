"""Unit tests of the downstream project's scripts: its configs (fill-elmo's, and the committed ones are
what the script writes; the further heads' pass `spacy debug config`), which runs the grid makes and the
scores it keeps, the report's error reduction and its bootstrap
interval over seeds, and the timing script's pieces (round order, summary, thread settings, stamped
logs)."""

import argparse
import contextlib
import io
import sys
import time

import pytest
import spacy
from confection import Config
from spacy.tokens import Doc, DocBin, Span

from projects.downstream.scripts import make_configs
from projects.downstream.scripts.report import error_reduction, intervals, table
from projects.downstream.scripts.run_grid import (
    SCHEDULE,
    SCORES,
    SYSTEMS,
    THREAD_VARIABLES,
    Run,
    add_elmo_arguments,
    config_file,
    elmo_settings,
    grid,
    thread_env,
    train_command,
)
from projects.downstream.scripts.time_runs import round_order, stamp_lines, summarise, threads_label
from spacy_elmo.pipeline.fill_config import fill_elmo_config
from tests.support.cli import run_cli
from tests.support.paths import REPO

CONFIGS = REPO / "projects" / "downstream" / "configs"
HEAD_TASKS = ("genre", "spans", "dep")


def test_committed_configs_are_what_make_configs_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["make_configs", str(tmp_path)])
    make_configs.main()
    written = sorted(path.name for path in tmp_path.glob("*.cfg"))
    assert written == sorted(path.name for path in CONFIGS.glob("*.cfg")) and len(written) == 15
    for name in written:
        assert (tmp_path / name).read_text() == (CONFIGS / name).read_text(), name


@pytest.mark.parametrize("task", list(make_configs.HEADS))
def test_elmo_configs_are_fill_elmos_with_the_grids_bilm(task):
    head = make_configs.HEADS[task]
    source = "ensemble" if task == "genre" else "baseline"
    base = Config().from_disk(CONFIGS / f"{task}_{source}.cfg", interpolate=False)
    encoder = Config().from_disk(CONFIGS / f"{task}_elmo_encoder.cfg", interpolate=False)
    filled = fill_elmo_config(base)
    tok2vec = encoder["components"][head]["model"]["tok2vec"]
    assert tok2vec == filled["components"][head]["model"]["tok2vec"]  # the user's path, unchanged
    assert tok2vec["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    assert encoder["components"]["elmo"]["model"]["model"] == "${paths.elmo_model}"
    if task not in make_configs.REFERENCE_TASKS:
        return
    alone = Config().from_disk(CONFIGS / f"{task}_elmo_alone.cfg", interpolate=False)
    probe = Config().from_disk(CONFIGS / f"{task}_elmo_probe.cfg", interpolate=False)
    assert alone["components"][head]["model"]["tok2vec"] == dict(
        tok2vec, embed=dict(tok2vec["embed"], extra_features=None)
    )
    assert probe["components"][head]["model"]["tok2vec"] == tok2vec["embed"]


def test_genre_compares_spacys_bag_of_words_with_its_tok2vec_head_with_and_without_elmo():
    def model(system):
        config = Config().from_disk(CONFIGS / f"genre_{system}.cfg", interpolate=False)
        return config, config["components"]["textcat"]["model"]

    _, bow = model("baseline")
    ensemble_config, ensemble = model("ensemble")
    _, elmo = model("elmo_encoder")
    assert bow["@architectures"] == "spacy.TextCatBOW.v3" and "tok2vec" not in bow  # spaCy's efficiency default
    assert ensemble["@architectures"] == elmo["@architectures"] == "spacy.TextCatEnsemble.v2"
    assert ensemble["linear_model"] == elmo["linear_model"] == dict(bow, nO=None)
    tagger = Config().from_disk(CONFIGS / "pos_baseline.cfg", interpolate=False)
    assert ensemble_config["components"]["tok2vec"] == tagger["components"]["tok2vec"]  # width 96, depth 4


def test_every_run_has_a_config_and_its_scores_are_what_spacy_reports():
    runs = grid(list(SCORES), smoke=False)
    assert {f"{r.task}_{r.system}.cfg" for r in runs} == {path.name for path in CONFIGS.glob("*.cfg")}
    assert {(r.task, r.system) for r in runs if r.size == "all"} == {(t, s) for t in SCORES for s in SYSTEMS[t]}
    for run in runs:
        config = Config().from_disk(config_file(CONFIGS, run), interpolate=False)
        assert set(SCORES[run.task]) <= set(config["training"]["score_weights"]), run.name


def test_the_parser_trains_and_tests_on_the_tagger_corpus_samples(tmp_path):
    command = train_command(Run("dep", "500", "baseline", 2, 1000, 200), tmp_path, CONFIGS, tmp_path / "m", {})
    assert command[command.index("--paths.train") + 1] == str(tmp_path / "pos" / "train-500-s2.spacy")
    assert command[command.index("--paths.dev") + 1] == str(tmp_path / "pos" / "dev.spacy")
    assert command[4].endswith("dep_baseline.cfg")


@pytest.mark.slow
@pytest.mark.parametrize("name", [f"{t}_{s}.cfg" for t in HEAD_TASKS for s in SYSTEMS[t]])
def test_the_further_heads_configs_pass_spacy_debug_config(name, tmp_path):
    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab, words=["Troops", "left", "New", "York"], heads=[1, 1, 1, 2], deps=["nsubj", "ROOT", "obj", "flat"]
    )
    doc.cats = {"weblog": 1.0, "reviews": 0.0}
    doc.spans["sc"] = [Span(doc, 2, 4, label="LOC")]
    DocBin(docs=[doc]).to_disk(tmp_path / "corpus.spacy")
    paths = ("--paths.train", tmp_path / "corpus.spacy", "--paths.dev", tmp_path / "corpus.spacy")
    result = run_cli("debug", "config", CONFIGS / name, *paths, module="spacy")
    assert result.returncode == 0 and "Config is valid" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]


def test_genres_elmo_row_is_reduced_against_the_same_head_without_elmo():
    def records(system, score):
        return [
            {
                "task": "genre",
                "size": "500",
                "system": system,
                "seed": 0,
                "train_seconds": 10.0,
                "test": {"cats_macro_f": score},
                "dev": {"cats_macro_f": score},
            }
        ]

    groups = {
        ("genre", "500", "baseline"): records("baseline", 0.5),
        ("genre", "500", "ensemble"): records("ensemble", 0.6),
        ("genre", "500", "elmo_encoder"): records("elmo_encoder", 0.8),
    }
    rows = {line.split(" | ")[1]: line.split(" | ")[4] for line in table(groups) if line.startswith("| 500")}
    assert rows["spaCy's accuracy textcat (TextCatEnsemble), default CPU tok2vec"] == "+20.0%"
    assert rows["ELMo + task encoder"] == "+50.0%"  # (40 - 20) / 40, against the ensemble
    assert any(line.startswith("### genre macro F1") for line in table(groups))


def test_grid_takes_the_seeds_at_500_and_2000_sentences():
    runs = grid(["ner"], smoke=False, seeds=[0, 1, 2, 3, 4])
    for size in ("500", "2000"):
        seeds = {(r.system, r.seed) for r in runs if r.size == size}
        assert {seed for system, seed in seeds if system == "baseline"} == {0, 1, 2, 3, 4}
        assert {seed for system, seed in seeds if system == "elmo_encoder"} == {0, 1, 2, 3, 4}
    assert {r.seed for r in runs if r.system in ("elmo_alone", "elmo_probe")} == {0}
    assert {(r.size, r.seed) for r in runs if r.size == "all"} == {("all", 0)}
    assert {r.size for r in runs if r.system in ("elmo_alone", "elmo_probe")} == {"500"}
    assert all((r.steps, r.eval_every) == SCHEDULE[r.size] for r in runs)


def test_grid_defaults_to_three_seeds():
    assert {r.seed for r in grid(["pos"], smoke=False) if r.system == "baseline" and r.size == "500"} == {0, 1, 2}


def test_error_reduction_is_relative_to_the_baseline_error():
    assert error_reduction([80.0, 80.0], [90.0, 90.0]) == pytest.approx(50.0)
    assert error_reduction([60.0], [56.0]) == pytest.approx(-10.0)


def _records(task, size, system, scores):
    metric = "ents_f" if task == "ner" else "tag_acc"
    return [
        {"task": task, "size": size, "system": system, "seed": seed, "test": {metric: score / 100}}
        for seed, score in enumerate(scores)
    ]


def _interval(line):
    numbers = line.split(": ", 1)[1].replace("interval", "").replace("to", "").replace("%", "").replace(",", "")
    point, low, high = (float(v) for v in numbers.split())
    return point, low, high


def test_interval_brackets_the_point_and_widens_with_spread():
    base = _records("ner", "500", "baseline", [34.0, 41.0, 38.0, 36.0, 40.0])
    steady = _records("ner", "500", "elmo_encoder", [46.0, 47.0, 46.5, 45.5, 47.5])
    groups = {("ner", "500", "baseline"): base, ("ner", "500", "elmo_encoder"): steady}
    (line,) = [x for x in intervals(groups, 2000) if x.startswith("- ")]
    point, low, high = _interval(line)
    assert point == pytest.approx(error_reduction([34, 41, 38, 36, 40], [46, 47, 46.5, 45.5, 47.5]), abs=0.05)
    assert low < point < high
    same = _records("ner", "500", "baseline", [38.0] * 5)
    groups[("ner", "500", "baseline")] = same
    (narrow,) = [x for x in intervals(groups, 2000) if x.startswith("- ")]
    _, narrow_low, narrow_high = _interval(narrow)
    assert narrow_high - narrow_low < high - low


def test_interval_needs_three_seeds_on_both_sides():
    groups = {
        ("pos", "all", "baseline"): _records("pos", "all", "baseline", [93.0]),
        ("pos", "all", "elmo_encoder"): _records("pos", "all", "elmo_encoder", [94.5]),
    }
    assert not [x for x in intervals(groups, 100) if x.startswith("- ")]


def test_timing_rounds_alternate_which_system_runs_first():
    orders = [round_order(["baseline", "elmo_encoder"], i) for i in range(4)]
    assert orders == [["baseline", "elmo_encoder"], ["elmo_encoder", "baseline"]] * 2


def test_timing_summary_takes_medians_and_paired_ratios():
    times = {"baseline": [100.0, 110.0, 90.0], "elmo_encoder": [120.0, 143.0, 108.0]}
    base, other, ratio, (low, high) = summarise(times, "elmo_encoder")
    assert (base, other) == (100.0, 120.0)
    assert ratio == pytest.approx(1.2)
    assert (low, high) == (pytest.approx(1.2), pytest.approx(1.3))


def test_the_timed_command_is_the_grids_and_names_the_biLM_only_for_elmo(tmp_path):
    elmo = {"elmo_model": "hf:org/elmo", "fast_mode": "bf16"}
    base = train_command(Run("pos", "all", "baseline", 0, 2000, 400), tmp_path, tmp_path, tmp_path / "m", elmo)
    with_elmo = train_command(Run("pos", "all", "elmo_encoder", 0, 2000, 400), tmp_path, tmp_path, tmp_path / "m", elmo)
    assert base[base.index("--training.max_steps") + 1] == "2000"
    assert base[base.index("--paths.train") + 1] == str(tmp_path / "pos" / "train-all.spacy")
    assert "--paths.elmo_model" not in base
    assert with_elmo[with_elmo.index("--paths.elmo_model") + 1] == "hf:org/elmo"
    assert with_elmo[with_elmo.index("--components.elmo.model.fast_mode") + 1] == "bf16"
    assert "--components.elmo.model.fast_mode" not in base
    assert with_elmo[4].endswith("pos_elmo_encoder.cfg")


def test_a_pinned_run_sets_every_thread_variable(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    env = thread_env(1)
    assert all(env[name] == "1" for name in THREAD_VARIABLES)


def test_threads_zero_unpins_even_what_the_caller_pinned(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("SOME_OTHER_SETTING", "kept")
    env = thread_env(0)
    assert not any(name in env for name in THREAD_VARIABLES)
    assert env["SOME_OTHER_SETTING"] == "kept"
    assert threads_label(0).startswith("default (") and threads_label(2) == "2"


def test_a_timed_log_stamps_every_line_and_finds_the_step_0_evaluation():
    spacy_output = [
        "=========================== Initializing pipeline ===========================\n",
        "E    #       LOSS ELMO  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE \n",
        "---  ------  ---------  --------  ------  ------  ------  ------\n",
        "  0       0       0.00     41.07    0.00    0.00    0.00    0.00\n",
        "  0     400       0.00   2379.25   49.71   56.12   44.62    0.50\n",
    ]
    log = io.StringIO()
    started = time.perf_counter()
    first = stamp_lines(spacy_output, log, started)
    lines = log.getvalue().splitlines()
    assert len(lines) == len(spacy_output)
    for stamped, original in zip(lines, spacy_output):
        assert float(stamped[:8]) >= 0 and stamped[9:] == original.rstrip("\n")
    assert first is not None and 0 <= first <= time.perf_counter() - started
    assert stamp_lines(spacy_output[:3], io.StringIO(), started) is None


def test_the_biLMs_files_as_before_v3_are_refused_naming_the_one_model():
    parser = argparse.ArgumentParser()
    add_elmo_arguments(parser)
    assert elmo_settings(parser, parser.parse_args(["--elmo-model", "fixture-tiny"]))["elmo_model"] == "fixture-tiny"
    assert elmo_settings(parser, parser.parse_args(["--elmo-model=", "--elmo-options="]))["elmo_model"] is None
    stderr = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stderr(stderr):
        elmo_settings(parser, parser.parse_args(["--elmo-options", "o.json", "--elmo-weights", "w.hdf5"]))
    assert (
        "give the folder holding options.json and the weights as --elmo-model (--vars.elmo_model)" in stderr.getvalue()
    )
