"""The biLM as a thinc layer (pipeline/layers/thinc_bilm.py): settings checked when the config is built,
nothing read until first use, each doc's layers the biLM's own with whitespace rows zero, the time loop
the config names run, and gradients reaching the biLM only when its owner lets it train."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.nn.errors import FastModeError, InputError
from spacy_elmo.elmo.nn.time_loops import captured, wavefront
from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL
from spacy_elmo.pipeline.architectures import build_bilm_v2
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import (
    declared_layers,
    ensure_loaded,
    get_bilm,
    set_frozen,
)
from tests.support.paths import TINY_MODEL
from tests.support.tolerance import assert_matches_reference

VOCAB = spacy.blank("en").vocab


def docs():
    return [
        Doc(VOCAB, words=["The", "bank", "\n", "rose", "."], spaces=[True, False, False, False, False]),
        Doc(VOCAB, words=["Hi", "!"]),
    ]


@pytest.mark.parametrize(
    "settings, error, message",
    [
        ({"fast_mode": "int4"}, FastModeError, "unknown fast_mode 'int4'"),
        ({"fast_mode": "int8", "stateful": True}, FastModeError, "fast_mode runs stateless only"),
        ({"max_batch_tokens": 0}, ElmoError, "'max_batch_tokens' must be an integer of at least 1, got 0"),
        (
            {"max_batch_tokens": "4096"},
            ElmoError,
            "'max_batch_tokens' must be .*, got '4096'; write the number without",
        ),
        ({"max_batch_tokens": True}, ElmoError, "'max_batch_tokens' must be an integer of at least 1, got True"),
        ({"segmentation": "sentences"}, ElmoError, "'segmentation' must be a Segmenter .* got 'sentences'"),
        (
            {"time_loop": "fast"},
            InputError,
            "unknown time_loop 'fast'; choose one of auto, step, wavefront, captured",
        ),
    ],
)
def test_bad_settings_are_named_when_the_layer_is_built(settings, error, message):
    with pytest.raises(error, match=message):
        build_bilm_v2(name="fixture-tiny", **settings)


def test_nothing_is_loaded_until_first_use_but_the_layer_count_is_known():
    model = build_bilm_v2(name="fixture-tiny")
    assert get_bilm(model) is None
    declared = declared_layers(model)
    assert declared == ensure_loaded(model).n_layers == load_bilm(TINY_MODEL).n_layers


def test_each_docs_layers_are_the_bilms_with_whitespace_rows_zero():
    model = build_bilm_v2(name="fixture-tiny", max_batch_tokens=3)
    model.initialize()
    outputs = model.predict(docs())
    bilm = load_bilm(TINY_MODEL)
    expected = bilm.embed([["The", "bank", "rose", "."], ["Hi", "!"]])
    np.testing.assert_allclose(outputs[0][:, [0, 1, 3, 4]], expected[0], rtol=0, atol=1e-6)
    assert not outputs[0][:, 2].any()
    np.testing.assert_allclose(outputs[1], expected[1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("time_loop, module", [("wavefront", wavefront), ("captured", captured)])
def test_the_time_loop_of_the_config_runs_and_gives_the_step_loops_layers(monkeypatch, time_loop, module):
    """On the CPU too: "captured" runs its buckets without a graph (elmo/nn/time_loops/captured.py)."""
    monkeypatch.setattr(WAVE_CELL, "compiling", False)  # its logic, eagerly: compiling takes seconds
    calls = []
    run = module.run
    monkeypatch.setattr(module, "run", lambda *args, **kwargs: calls.append(time_loop) or run(*args, **kwargs))
    expected = build_bilm_v2(name="fixture-tiny").predict(docs())
    assert calls == [], "auto is the step loop on the CPU"
    got = build_bilm_v2(name="fixture-tiny", time_loop=time_loop).predict(docs())
    assert calls
    for layers, want in zip(got, expected):
        assert_matches_reference(layers, want)


@pytest.mark.parametrize("frozen", [True, False])
def test_gradients_reach_the_bilm_only_when_it_trains(frozen):
    model = build_bilm_v2(name="fixture-tiny")
    model.initialize()
    set_frozen(model, frozen)
    bilm = get_bilm(model)
    bilm.zero_grad(set_to_none=True)
    outputs, backprop = model.begin_update(docs())
    backprop([np.ones_like(x) for x in outputs])
    grads = [p.grad for p in bilm.parameters() if p.requires_grad]
    assert (not frozen) == any(g is not None and g.abs().sum() > 0 for g in grads)
