"""The "auto" fast mode (spacy_elmo/elmo/nn/fast/auto.py): the mode closest to exact among those that beat
the exact biLM by the margin, bf16 before int8, exact when none does; the choice in the log; a mode the
machine cannot run never timed. The timing itself is replaced by fixed figures, except in one test that
times the fixture model for real."""

import logging

import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.nn.fast import auto, bf16
from spacy_elmo.elmo.nn.fast.fast_bilm import FastBiLM, FastModeUnavailable, make_fast, resolve_mode
from tests.pipeline.test_component import MONEY, _nlp


def timed_as(monkeypatch, gains):
    """Each fast copy "runs" at `gains[mode]` x the exact model; the modes timed are listed."""
    timed = []

    def speedup(exact, fast):
        timed.append(fast.mode)
        return gains[fast.mode]

    monkeypatch.setattr(auto, "speedup", speedup)
    return timed


@pytest.fixture(autouse=True)
def bf16_units(monkeypatch):
    monkeypatch.setattr(bf16, "has_bf16_units", lambda: True)


def test_bf16_is_chosen_where_it_beats_exact(fixture_bilm, monkeypatch, caplog):
    timed = timed_as(monkeypatch, {"bf16": 2.5, "int8": 3.0})
    with caplog.at_level(logging.INFO, logger=auto.__name__):
        fast = make_fast(fixture_bilm, "auto")
    assert isinstance(fast, FastBiLM) and fast.mode == "bf16"
    assert timed == ["bf16"], "int8 is not timed once bf16 pays: bf16 is the closer to exact"
    assert "fast_mode 'auto' chose 'bf16': 2.50x" in caplog.text


def test_int8_is_chosen_where_bf16_does_not_pay(fixture_bilm, monkeypatch, caplog):
    timed = timed_as(monkeypatch, {"bf16": 1.05, "int8": 1.5})
    with caplog.at_level(logging.INFO, logger=auto.__name__):
        assert resolve_mode(fixture_bilm, "auto") == "int8"
    assert timed == ["bf16", "int8"]
    assert "'bf16' ran 1.05x the exact biLM, not enough" in caplog.text and "chose 'int8'" in caplog.text


def test_without_bf16_units_bf16_is_never_timed(fixture_bilm, monkeypatch):
    monkeypatch.setattr(bf16, "has_bf16_units", lambda: False)
    timed = timed_as(monkeypatch, {"bf16": 9.0, "int8": 2.0})
    assert resolve_mode(fixture_bilm, "auto") == "int8"
    assert timed == ["int8"]


def test_exact_where_no_mode_pays(fixture_bilm, fixture_paths, monkeypatch, caplog):
    timed_as(monkeypatch, {"bf16": 1.0, "int8": 0.8})
    with caplog.at_level(logging.INFO, logger=auto.__name__):
        assert resolve_mode(fixture_bilm, "auto") is None
    assert "chose the exact biLM" in caplog.text
    with pytest.raises(FastModeUnavailable, match="no fast mode ran faster than the exact biLM"):
        make_fast(fixture_bilm, "auto")
    bilm = load_bilm(*fixture_paths, fast_mode="auto")
    assert not isinstance(bilm, FastBiLM)


def test_the_component_takes_auto_and_runs_exact_without_a_warning_where_nothing_pays(
    fixture_paths, monkeypatch, recwarn
):
    timed_as(monkeypatch, {"bf16": 1.0, "int8": 1.0})
    exact = _nlp(fixture_paths)(MONEY)._.elmo["layers"]
    assert (_nlp(fixture_paths, model={"fast_mode": "auto"})(MONEY)._.elmo["layers"] == exact).all()
    assert not [w for w in recwarn if "fast_mode" in str(w.message)]


def test_the_gain_is_the_exact_time_over_the_fast_one_on_the_worse_probe(fixture_bilm, monkeypatch):
    fast = make_fast(fixture_bilm, "int8")
    assert 0.0 < auto.speedup(fixture_bilm, fast) < float("inf")  # a real timing runs
    rows_seen = set()

    def seconds(model, embedded):
        rows_seen.add(embedded.shape[0])
        if model is fixture_bilm:
            return 3.0
        return 1.0 if embedded.shape[0] == 1 else 2.0

    monkeypatch.setattr(auto, "_probe_seconds", seconds)
    assert auto.speedup(fixture_bilm, fast) == 1.5
    assert rows_seen == {rows for rows, _ in auto.PROBES} and len(rows_seen) == 2
