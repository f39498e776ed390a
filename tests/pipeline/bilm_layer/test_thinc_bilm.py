"""The biLM as a thinc layer (pipeline/layers/thinc_bilm.py): settings checked when the config is built,
each form of the one model reference, nothing read until first use nor by spacy.load, each doc's layers
the biLM's own with whitespace rows zero, the time loop the config names run, and gradients reaching the
biLM only when its owner lets it train."""

import shutil
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError, InputError
from spacy_elmo.elmo.nn.errors import FastModeError
from spacy_elmo.elmo.nn.time_loops import captured, wavefront
from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL
from spacy_elmo.pipeline.architectures import build_bilm_v3
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import (
    declared_layers,
    ensure_loaded,
    get_bilm,
    set_frozen,
)
from tests.support.hub_cache import add_repo, offline_cache
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
        ({"fast_mode": "int4"}, FastModeError, "unknown fast_mode .int4.; choose one of int8, bf16, auto, or null"),
        ({"fast_mode": "auto", "stateful": True}, FastModeError, "fast_mode runs stateless only"),
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
        build_bilm_v3("fixture-tiny", **settings)


def test_nothing_is_loaded_until_first_use_but_the_layer_count_is_known():
    model = build_bilm_v3("fixture-tiny")
    assert get_bilm(model) is None
    declared = declared_layers(model)
    assert declared == ensure_loaded(model).n_layers == load_bilm(TINY_MODEL).n_layers


def test_each_docs_layers_are_the_bilms_with_whitespace_rows_zero():
    model = build_bilm_v3("fixture-tiny", max_batch_tokens=3)
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
    expected = build_bilm_v3("fixture-tiny").predict(docs())
    assert calls == [], "auto is the step loop on the CPU"
    got = build_bilm_v3("fixture-tiny", time_loop=time_loop).predict(docs())
    assert calls
    for layers, want in zip(got, expected):
        assert_matches_reference(layers, want)


@pytest.mark.parametrize("frozen", [True, False])
def test_gradients_reach_the_bilm_only_when_it_trains(frozen):
    model = build_bilm_v3("fixture-tiny")
    model.initialize()
    set_frozen(model, frozen)
    bilm = get_bilm(model)
    bilm.zero_grad(set_to_none=True)
    outputs, backprop = model.begin_update(docs())
    backprop([np.ones_like(x) for x in outputs])
    grads = [p.grad for p in bilm.parameters() if p.requires_grad]
    assert (not frozen) == any(g is not None and g.abs().sum() > 0 for g in grads)


@pytest.fixture
def references(tmp_path, monkeypatch):
    """The tiny model under each form of BiLM.v3's `model`: its bundled name, a folder, a zip archive
    and a Hugging Face Hub repository (an offline cache made here, tests/support/hub_cache.py)."""
    folder = Path(shutil.copytree(TINY_MODEL, tmp_path / "tiny"))
    archive = shutil.make_archive(str(tmp_path / "tiny"), "zip", folder)
    cache = offline_cache(monkeypatch, tmp_path / "hub")
    add_repo(cache, "org/tiny", [folder / "options.json", folder / "weights.hdf5"])
    return {"name": "fixture-tiny", "folder": str(folder), "archive": archive, "hf": "hf:org/tiny", "cache": cache}


@pytest.mark.parametrize("form", ["name", "folder", "archive", "hf"])
def test_each_form_of_the_model_reference_gives_the_models_layers(references, form):
    got = build_bilm_v3(references[form]).predict(docs())
    expected = build_bilm_v3(str(TINY_MODEL)).predict(docs())
    for layers, want in zip(got, expected):
        np.testing.assert_array_equal(layers, want)


@pytest.mark.parametrize(
    "model, message",
    [
        ("", "`model` is empty .* give the model's path or name"),
        ("hf:tiny", "hf:ORG/REPO"),
        ("hf:org/tiny@", "hf:ORG/REPO"),
    ],
)
def test_a_malformed_reference_is_refused_when_the_config_is_built(model, message):
    with pytest.raises(InputError, match=message):
        spacy.blank("en").add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v3", "model": model}})


@pytest.mark.parametrize("form", ["folder", "hf"])
def test_a_saved_pipeline_loads_without_the_models_files(references, tmp_path, form):
    """The weights travel with the pipeline: spacy.load reads nothing `model` names, nor fetches it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v3", "model": references[form]}})
    nlp.initialize()
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(references["folder"])
    shutil.rmtree(references["cache"])
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.config["components"]["elmo"]["model"]["model"] == references[form]
    np.testing.assert_array_equal(loaded("The bank rose .")._.elmo["layers"], nlp("The bank rose .")._.elmo["layers"])


def test_a_biLM_that_learns_refuses_a_fast_mode():
    """A fast copy is made once, from the weights of that moment: a head's own biLM fine-tuned in a fast
    mode would be evaluated on stale, rounded weights."""
    model = build_bilm_v3("fixture-tiny", fast_mode="int8")
    set_frozen(model, True)
    with pytest.raises(FastModeError, match="'int8' runs a frozen biLM only.*fine-tuned .frozen = false."):
        set_frozen(model, False)
