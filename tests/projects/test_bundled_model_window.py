"""The bundled model's training plan in GPU windows (projects/bundled_model/scripts/window): the
replace-only-if-better rule, the choice of shards, and two whole windows rehearsed on the CPU at the tiny
size through the device's own command."""

import filecmp
import importlib.util
import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import srsly
import torch

from projects.bundled_model.scripts.window.__main__ import main
from projects.bundled_model.scripts.window.accept import ANOTHER_SIZE, beats
from projects.bundled_model.scripts.window.errors import WindowError
from projects.bundled_model.scripts.window.paths import CANDIDATE_DIR, DEFAULT_WEIGHTS, STATE_FILE
from projects.bundled_model.scripts.window.state import shards_to_send
from spacy_elmo.elmo.nn.options import ElmoOptions
from spacy_elmo.elmo.pretrain import LanguageModel, Vocabulary, export_model, load_config
from spacy_elmo.elmo.pretrain.export import load_language_model
from tests.support.paths import PRETRAIN_TINY_CONFIG
from tests.support.tiny_corpus import write_tiny_corpus
from tests.support.wsd_data import write_wsd_data

DEFAULT = {"perplexity": 100.0, "wsd_f1": 60.0, "bank": 3}


@pytest.mark.parametrize(
    "candidate, better",
    [
        ({"perplexity": 99.0, "wsd_f1": 61.0, "bank": 3}, True),
        ({"perplexity": 99.0, "wsd_f1": 61.0, "bank": 4}, True),
        ({"perplexity": 100.0, "wsd_f1": 61.0, "bank": 4}, False),
        ({"perplexity": 99.0, "wsd_f1": 60.0, "bank": 4}, False),
        ({"perplexity": 99.0, "wsd_f1": 61.0, "bank": 2}, False),
        ({"perplexity": 99.0, "wsd_f1": None, "bank": 4}, False),
    ],
)
def test_a_candidate_replaces_the_default_only_when_better_on_every_figure(candidate, better):
    assert beats(candidate, DEFAULT)[0] is better


def test_shards_least_seen_go_first_within_the_bytes(tmp_path):
    shards = []
    for name, size in [("a", 30), ("b", 30), ("c", 50)]:
        (tmp_path / name).write_bytes(bytes(size))
        shards.append(tmp_path / name)
    state = {"windows": [{"train_shards": ["a"]}]}
    assert [p.name for p in shards_to_send(state, shards, 80)] == ["b", "c"]
    state["windows"].append({"train_shards": ["b", "c"]})
    assert [p.name for p in shards_to_send(state, shards, 80)] == ["a", "b"]


def start_candidate(tmp_path: Path) -> Tuple[Dict[str, object], Path, List[str]]:
    """A tiny corpus packed for windows, a made-up candidate (with a made-up default's figures) to start
    from; returns the corpus, the candidate's folder and the arguments that name both folders."""
    corpus = write_tiny_corpus(tmp_path / "corpus", 200)
    heldout = tmp_path / "heldout.txt"  # in-domain text, so that ten steps lower its perplexity
    heldout.write_text("".join(Path(corpus["paths.train"][0]).read_text().splitlines(keepends=True)[:40]))
    config = load_config(PRETRAIN_TINY_CONFIG, {**corpus})
    vocab = Vocabulary.from_file(corpus["paths.vocab"])
    candidate, send = tmp_path / "candidate", tmp_path / "send"
    torch.manual_seed(0)
    export_model(LanguageModel(config.options, len(vocab)), vocab, candidate, step=0)
    recorded = {"perplexity": 1e9, "wsd_f1": 0.0, "bank": 0, "source": "made up"}
    (candidate / STATE_FILE).write_text(json.dumps({"default": recorded, "windows": []}))
    where = ["--candidate", str(candidate), "--send-dir", str(send)]
    main([*where, "pack", "--train", *corpus["paths.train"], "--heldout", str(heldout), "--shard-tokens", "500"])
    main([*where, "send", "--max-mib", "0.0012"])  # the lexicon and two of the three shards
    return corpus, candidate, where


TINY = ["--device", "cpu", "--config", str(PRETRAIN_TINY_CONFIG), "--training.batch_size", "4"]


@pytest.mark.slow
def test_the_deadline_stops_a_window_through_pretrains_max_time_with_the_model(tmp_path, capfd):
    _, _, where = start_candidate(tmp_path)
    out = tmp_path / "out"
    # The deadline is 2 s after the start: pretrain gets what is left of it as max_time (at least its floor,
    # 1 s), which stops the run; the rest of the budget is for a loaded machine.
    main(
        [
            *where,
            "run",
            "--out",
            str(out),
            "--budget-s",
            "600",
            "--reserve-s",
            "598",
            *TINY,
            "--logging.log_every",
            "10",
        ]
    )
    record = json.loads((out / "window.json").read_text())
    max_time = record["overrides"]["training.max_time"]
    assert 1 / 60 <= max_time <= 2 / 60 and "end" in record
    assert f"max_time ({max_time:g} minutes) is up" in capfd.readouterr().err
    load_language_model(out)  # the four files are whole and from one step


@pytest.mark.slow
def test_two_windows_rehearsed_on_the_cpu(tmp_path, capfd):
    corpus, candidate, where = start_candidate(tmp_path)
    vocab = Vocabulary.from_file(corpus["paths.vocab"])
    default = tmp_path / "default.hdf5"
    wsd = write_wsd_data(tmp_path / "wsd")
    # Ten steps a window, well before the deadline: a window stopped by its deadline trains for as many
    # steps as the machine's speed allows, and the tiny corpus's perplexity soon reaches its floor, where
    # a second window's change is noise.
    fixed = [*TINY, "--training.max_steps", "10", "--logging.log_every", "5"]
    records, links = [], []
    for window in (1, 2):
        out = tmp_path / f"out{window}"
        if window == 2:
            main([*where, "send", "--max-mib", "0.0012"])
        main([*where, "run", "--out", str(out), "--budget-s", "600", "--reserve-s", "60", *fixed])
        # Without the WSD figure (the second window) a candidate never becomes the default.
        measured = ["--wsd-data", str(wsd)] if window == 1 else []
        main([*where, "accept", str(out), *measured, "--default-weights", str(default)])
        records.append(json.loads((out / "window.json").read_text()))
        links.append((candidate / "weights.hdf5").is_symlink())
    first, second = records
    assert first["steps"] == second["steps"] == 10 and first["end"]["average"] < first["start"]["average"]
    # Each training run started from the candidate's biLM and softmax (the trainer says so), and the
    # second window's candidate was the first one's model, float16 softmax included.
    assert capfd.readouterr().err.count(f"softmax: {len(vocab)} of {len(vocab)} words taken from {candidate}") == 2
    assert second["start"] == first["end"]
    assert first["train_shards"] != second["train_shards"]
    state = json.loads((candidate / STATE_FILE).read_text())
    # The first beat the made-up default and became it (the candidate's weights a link to the default's);
    # the second lowered the perplexity too, but had no WSD figure: the candidate only.
    assert [w["outcome"] for w in state["windows"]] == ["default", "candidate"]
    assert state["default"]["source"] == "window 1" and links == [True, False]
    assert filecmp.cmp(default, tmp_path / "out1" / "weights.hdf5", shallow=False)
    assert filecmp.cmp(candidate / "weights.hdf5", tmp_path / "out2" / "weights.hdf5", shallow=False)
    with pytest.raises(WindowError, match="accepted already"):
        main([*where, "accept", str(tmp_path / "out2"), "--default-weights", str(default)])
    card = (candidate / "README.md").read_text()
    assert card.count("## Training windows") == 1 and "| 2 (" in card and (candidate / "windows.png").is_file()


@pytest.mark.slow
def test_a_new_size_begins_from_scratch_and_never_replaces_the_bundled_weights(tmp_path, capfd):
    _, candidate, where = start_candidate(tmp_path)
    line = tmp_path / "new-size"
    main([*where, "begin", str(line), "--set", "lstm.dim=48"])
    assert ElmoOptions.from_file(line / "options.json").lstm.dim == 48
    assert (line / "vocab.txt").read_text() == (candidate / "vocab.txt").read_text()
    assert not (line / "weights.hdf5").exists() and "A new size" in (line / "README.md").read_text()
    with pytest.raises(WindowError, match="not empty"):
        main([*where, "begin", str(line), "--set", "lstm.dim=64"])
    on_line = ["--candidate", str(line), *where[2:]]
    out, default = tmp_path / "out", tmp_path / "default.hdf5"
    fixed = [*TINY, "--training.max_steps", "10", "--logging.log_every", "5"]
    main([*on_line, "run", "--out", str(out), "--budget-s", "600", "--reserve-s", "60", *fixed])
    assert "taken from" not in capfd.readouterr().err  # the trainer's own initialization, no model to continue
    main(
        [
            *on_line,
            "accept",
            str(out),
            "--wsd-data",
            str(write_wsd_data(tmp_path / "wsd")),
            "--default-weights",
            str(default),
        ]
    )
    window = json.loads((line / STATE_FILE).read_text())["windows"][0]
    # Better than the made-up default on every figure, yet a candidate: another size is bundled by hand.
    assert window["start"] is None and window["outcome"] == "candidate" and window["not_better"] == [ANOTHER_SIZE]
    assert not default.exists() and filecmp.cmp(line / "weights.hdf5", out / "weights.hdf5", shallow=False)
    assert "| scratch -> " in (line / "README.md").read_text()


def held_back_candidate(tmp_path: Path, outcome: str = "candidate", not_better=()) -> Tuple[Path, List[str]]:
    """A candidate folder whose one window beat the default's figures and was kept a candidate."""
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "weights.hdf5").write_bytes(b"the window's weights")
    ends = {"average": 102.8}
    window = {
        "date": "2026-11-27", "device": "cpu", "steps": 10, "tokens": 100, "train_s": 1.0, "curve": [],
        "start": {"average": 108.6}, "end": ends, "end_fp32": ends, "outcome": outcome,
        "figures": {"perplexity": 102.8, "wsd_f1": 61.2, "bank": 3}, "not_better": list(not_better),
    }  # fmt: skip
    state = {"default": {"perplexity": 108.6, "wsd_f1": 60.9, "bank": 3, "source": "stage 4"}, "windows": [window]}
    (candidate / STATE_FILE).write_text(json.dumps(state))
    return candidate, ["--candidate", str(candidate)]


def test_promote_makes_a_held_back_candidate_the_default_and_says_why(tmp_path):
    candidate, where = held_back_candidate(tmp_path)
    default = tmp_path / "default.hdf5"
    default.write_bytes(b"the old default")
    main([*where, "promote", "--why", "downstream table at 500 sentences", "--default-weights", str(default)])
    assert default.read_bytes() == b"the window's weights" and (candidate / "weights.hdf5").is_symlink()
    state = json.loads((candidate / STATE_FILE).read_text())
    window = state["windows"][0]
    assert window["outcome"] == "default" and window["promoted"]["why"] == "downstream table at 500 sentences"
    assert state["default"] == {"perplexity": 102.8, "wsd_f1": 61.2, "bank": 3, "source": "window 1"}
    assert "| default |" in (candidate / "README.md").read_text()


@pytest.mark.parametrize(
    "outcome, not_better", [("candidate", ["WSD F1 60.0 is not above 60.9"]), ("default", []), ("dropped", [])]
)
def test_promote_refuses_a_window_that_did_not_beat_the_default_or_is_not_held_back(tmp_path, outcome, not_better):
    _, where = held_back_candidate(tmp_path, outcome, not_better)
    default = tmp_path / "default.hdf5"
    default.write_bytes(b"the old default")
    with pytest.raises(WindowError, match="nothing to promote"):
        main([*where, "promote", "--why", "x", "--default-weights", str(default)])
    assert default.read_bytes() == b"the old default"


def test_the_default_paths_are_the_projects_candidate_and_the_packages_default():
    """Run from the project folder, the commands find the candidate's record and full model, whose
    options (and weights, while it is the default) are links to the package's copy."""
    assert (CANDIDATE_DIR / STATE_FILE).is_file() and (CANDIDATE_DIR / "softmax.hdf5").is_file()
    packaged = DEFAULT_WEIGHTS.parent
    assert (CANDIDATE_DIR / "options.json").resolve() == (packaged / "options.json").resolve()
    assert DEFAULT_WEIGHTS.is_file()


def test_every_project_command_runs_a_module_of_the_projects_scripts():
    project = srsly.read_yaml(CANDIDATE_DIR.parents[1] / "project.yml")
    modules = [line.split()[2] for command in project["commands"] for line in command["script"]]
    assert {"scripts.corpus", "scripts.window"} == set(modules)
    for module in modules:
        assert importlib.util.find_spec(f"projects.bundled_model.{module}") is not None, module
