"""The perplexity plot (elmo/pretrain/plot.py): drawn from a run's log once it holds a point, written whole
under its final name; nothing drawn from an empty log or without matplotlib."""

import builtins
import logging

from spacy_elmo.elmo.pretrain.checkpoint import MetricsLog
from spacy_elmo.elmo.pretrain.plot import plot_curves

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def log_of(tmp_path, records):
    log = MetricsLog(tmp_path / "log.jsonl")
    for record in records:
        log.append(record)
    return tmp_path / "log.jsonl"


def test_training_and_held_out_curves_are_drawn_into_a_png(tmp_path):
    path = log_of(
        tmp_path,
        [
            {"event": "train", "tokens": 100, "perplexity": 900.0},
            {"event": "train", "tokens": 200, "perplexity": 400.0},
            {"event": "eval", "tokens": 200, "average": 450.0},
            {"event": "checkpoint", "step": 2},
        ],
    )
    assert plot_curves(path, tmp_path / "perplexity.png")
    assert (tmp_path / "perplexity.png").read_bytes().startswith(PNG_MAGIC)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl", "perplexity.png"]


def test_a_log_without_a_point_draws_nothing(tmp_path):
    path = log_of(tmp_path, [{"event": "checkpoint", "step": 1}])
    assert not plot_curves(path, tmp_path / "perplexity.png")
    assert not (tmp_path / "perplexity.png").exists()


def test_without_matplotlib_it_warns_and_draws_nothing(tmp_path, monkeypatch, caplog):
    path = log_of(tmp_path, [{"event": "train", "tokens": 100, "perplexity": 900.0}])
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with caplog.at_level(logging.WARNING):
        assert not plot_curves(path, tmp_path / "perplexity.png")
    assert "matplotlib is not installed" in caplog.text
    assert not (tmp_path / "perplexity.png").exists()
