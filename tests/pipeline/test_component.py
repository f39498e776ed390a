"""The `elmo` component: vectors through spaCy's API, equal to the biLM's pooled layers, kept through
serialization; clear errors."""

import subprocess
import sys
import tracemalloc

import h5py
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo import restore_vectors
from spacy_elmo.elmo.formats import WeightsError
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import set_source
from tests.support.pipelines import EXACT_LAYERS, TAGGER_ON_ELMO, elmo_config

MONEY = "She went to the bank to withdraw money ."
RIVER = "They sat on the bank of the river ."
TEXTS = [MONEY, RIVER, "He deposited the cheque at the bank .", "Banks lend money .", "Yes"]


def _nlp(fixture_paths, **config):
    options, weights = fixture_paths
    nlp = spacy.blank("en")
    model = elmo_config(options=str(options), weights=str(weights), **config.pop("model", {}))
    nlp.add_pipe("elmo", config={**EXACT_LAYERS, **model, **config})
    return nlp


@pytest.fixture(scope="module")
def nlp(fixture_paths):
    return _nlp(fixture_paths)


def _vectors(docs):
    return [np.stack([t.vector for t in doc]) for doc in docs]


@pytest.mark.parametrize("pooling", ["mean", "top", [0.5, 0.25, 0.25]])
def test_token_vector_is_the_configured_pooling_of_the_bilm_layers(fixture_paths, fixture_bilm, pooling):
    nlp = _nlp(fixture_paths, pooling=pooling)
    doc = nlp(MONEY)
    layers = fixture_bilm.embed([MONEY.split()])[0]
    expected = {"mean": layers.mean(axis=0), "top": layers[-1]}.get(pooling if isinstance(pooling, str) else "", None)
    if expected is None:
        expected = np.tensordot(np.array(pooling), layers, axes=1)
    for token in doc:
        np.testing.assert_allclose(token.vector, expected[token.i], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(doc._.elmo["layers"], layers, rtol=1e-5, atol=1e-6)


def test_bank_depends_on_context_and_similarity_works(nlp):
    money, river = nlp(MONEY), nlp(RIVER)
    bank_money, bank_river = money[4], river[4]
    assert bank_money.has_vector and bank_money.vector_norm > 0
    assert not np.allclose(bank_money.vector, bank_river.vector)
    assert bank_money.similarity(bank_money) == pytest.approx(1.0)
    assert -1.0 <= bank_money.similarity(bank_river) < 0.9999
    span = money[3:5]
    np.testing.assert_allclose(span.vector, (money[3].vector + money[4].vector) / 2, rtol=1e-6)
    np.testing.assert_allclose(money.vector, _vectors([money])[0].mean(axis=0), rtol=1e-5)
    assert money.vector_norm == pytest.approx(float(np.linalg.norm(money.vector)))
    assert 0 < money.similarity(river) < 1
    assert span.similarity(river[3:5]) == pytest.approx(
        float(span.vector @ river[3:5].vector / (span.vector_norm * river[3:5].vector_norm)), rel=1e-5
    )
    assert bank_money.similarity(money[4:5]) == pytest.approx(1.0, rel=1e-5)


def test_empty_docs_and_whitespace_tokens(nlp, fixture_bilm):
    empty = nlp("")
    assert empty._.elmo["vectors"].shape == (0, fixture_bilm.output_dim)
    assert not empty.has_vector and empty.similarity(nlp(MONEY)) == 0.0
    spaced = nlp("Hello \n\n world")
    assert [t.is_space for t in spaced] == [False, True, False]
    assert not spaced[1].has_vector and not spaced[1].vector.any()
    assert spaced[1].similarity(spaced[0]) == 0.0
    plain = nlp("Hello world")
    # The biLM never saw the whitespace: the words get exactly the vectors they get without it.
    np.testing.assert_allclose(spaced[2].vector, plain[1].vector, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(spaced.vector, plain.vector, rtol=1e-5, atol=1e-6)
    only_space = nlp("\n\n")
    assert not only_space.has_vector and not only_space.vector.any()


def test_batch_size_and_token_budget_do_not_change_vectors(fixture_paths, nlp):
    one = _vectors(nlp.pipe(TEXTS, batch_size=1))
    many = _vectors(nlp.pipe(TEXTS, batch_size=64))
    tight = _vectors(_nlp(fixture_paths, model={"max_batch_tokens": 1}).pipe(TEXTS))
    for a, b, c in zip(one, many, tight):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)


def test_stateful_mode_is_explicit_and_carries_state(fixture_paths):
    stateless = _nlp(fixture_paths)
    stateful = _nlp(fixture_paths, model={"stateful": True})
    first = stateful(MONEY)[4].vector
    again = stateful(MONEY)[4].vector
    assert not np.allclose(first, again)
    np.testing.assert_allclose(stateless(MONEY)[4].vector, stateless(MONEY)[4].vector)


def test_to_disk_and_load_needs_no_outside_file(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    # Prove the loaded pipeline took its weights from its own directory, not the config's paths.
    assert loaded.get_pipe("elmo").model.attrs["source"]["weights"] is not None
    set_source(loaded.get_pipe("elmo").model, "/nonexistent/options.json", "/nonexistent.hdf5")
    # 1e-6, not equality: `nlp` has token rows cached from other batches, whose char-CNN rounding differs.
    for a, b in zip(_vectors(nlp.pipe(TEXTS)), _vectors(loaded.pipe(TEXTS))):
        np.testing.assert_allclose(a, b, atol=1e-6)
    from_bytes = spacy.load(tmp_path / "pipeline")
    from_bytes.from_bytes(nlp.to_bytes())
    np.testing.assert_allclose(from_bytes(MONEY)[4].vector, nlp(MONEY)[4].vector, atol=1e-6)


def test_docbin_round_trip_keeps_data_and_restore_vectors_brings_back_the_hooks(nlp):
    docs = list(nlp.pipe(TEXTS))
    expected = _vectors(docs)
    docbin = DocBin(store_user_data=True, docs=docs)
    restored = list(DocBin().from_bytes(docbin.to_bytes()).get_docs(nlp.vocab))
    assert restore_vectors(restored) == len(TEXTS)
    for doc, vectors, original in zip(restored, _vectors(restored), docs):
        np.testing.assert_array_equal(vectors, expected[docs.index(original)])
        assert doc[0].similarity(original[0]) == pytest.approx(1.0)


def test_doc_to_bytes_keeps_vectors_automatically_with_set_tensor(fixture_paths):
    nlp = _nlp(fixture_paths, set_tensor=True)
    doc = nlp(MONEY)
    with pytest.warns(UserWarning, match="W109"):
        data = doc.to_bytes()
    plain = Doc(nlp.vocab).from_bytes(data)
    assert not plain.user_token_hooks  # hooks are gone, spaCy falls back to doc.tensor
    np.testing.assert_array_equal(plain[4].vector, doc[4].vector)
    np.testing.assert_allclose(plain.vector, doc.vector, rtol=1e-6)
    assert plain[4].similarity(doc[4]) == pytest.approx(1.0)


def test_tensor_is_opt_in(nlp):
    assert nlp(MONEY).tensor.size == 0


def test_analyze_pipes_reports_what_the_component_writes(nlp):
    assigns = nlp.analyze_pipes()["summary"]["elmo"]["assigns"]
    assert {"doc._.elmo", "doc.user_hooks", "doc.user_span_hooks", "doc.user_token_hooks"} <= set(assigns)
    doc = nlp(MONEY)
    for attr in assigns:  # each declared attribute is written, with the default settings
        name = attr.split(".")[-1]
        value = getattr(doc._, name) if attr.startswith("doc._.") else getattr(doc, name)
        assert len(value), attr
    assert doc.tensor.size == 0 and "doc.tensor" not in assigns  # set_tensor is off by default


def test_store_layers_false_keeps_only_vectors(fixture_paths):
    doc = _nlp(fixture_paths, store_layers=False)(MONEY)
    assert "layers" not in doc._.elmo and doc[0].has_vector


def test_bad_pooling_is_named(fixture_paths):
    with pytest.raises(ValueError, match="pooling 'max'"):
        _nlp(fixture_paths, pooling="max")
    with pytest.raises(ValueError, match="pooling has 2 weights but the biLM has 3 layers"):
        _nlp(fixture_paths, pooling=[0.5, 0.5])(MONEY)


def test_weights_that_do_not_fit_the_options_fail_clearly(fixture_paths, tmp_path):
    options, weights = fixture_paths
    broken = tmp_path / "broken.hdf5"
    with h5py.File(weights, "r") as src, h5py.File(broken, "w") as dst:
        for name in ("char_embed",):
            dst.create_dataset(name, data=src[name][()][:, :2])
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config=elmo_config(options=str(options), weights=str(broken)),
    )
    with pytest.raises(WeightsError, match="char_embed"):
        nlp.initialize()


def test_initialize_paths_override_the_model_config(fixture_paths, fixture_bilm):
    options, weights = fixture_paths
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=EXACT_LAYERS)  # the bundled default
    nlp.get_pipe("elmo").initialize(lambda: [], nlp=nlp, options=str(options), weights=str(weights))
    np.testing.assert_allclose(
        nlp(MONEY)._.elmo["layers"], fixture_bilm.embed([MONEY.split()])[0], rtol=1e-5, atol=1e-6
    )
    with pytest.raises(ValueError, match="without options"):
        nlp.get_pipe("elmo").initialize(lambda: [], nlp=nlp, weights=str(weights))


@pytest.mark.slow
def test_nlp_pipe_with_two_processes(nlp):
    expected = _vectors(nlp.pipe(TEXTS))
    docs = list(nlp.pipe(TEXTS, n_process=2, batch_size=2))
    assert all(doc._.elmo is not None for doc in docs)
    assert restore_vectors(docs) == len(TEXTS)
    for a, b in zip(expected, _vectors(docs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_warm_start_config_and_it_survives_to_disk(fixture_paths, tmp_path):
    from spacy_elmo import load_bilm

    nlp = _nlp(fixture_paths, model={"warm_start": True})
    doc = nlp(MONEY)
    expected = load_bilm(*fixture_paths, warm_start=True).embed([MONEY.split()])[0]
    np.testing.assert_allclose(doc._.elmo["layers"], expected, atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    again = spacy.load(tmp_path / "pipeline")(MONEY)
    np.testing.assert_array_equal(again._.elmo["layers"], doc._.elmo["layers"])


def test_int8_fast_mode_is_close_to_exact_and_survives_to_disk(fixture_paths, tmp_path):
    from spacy_elmo.elmo.nn.fast.fast_bilm import FastModeError

    exact = _nlp(fixture_paths)(MONEY)._.elmo["layers"]
    nlp = _nlp(fixture_paths, model={"fast_mode": "int8"})
    fast = nlp(MONEY)._.elmo["layers"]
    assert not np.array_equal(fast, exact)
    cosine = (fast[2] * exact[2]).sum(-1) / (np.linalg.norm(fast[2], axis=-1) * np.linalg.norm(exact[2], axis=-1))
    assert cosine.min() > 0.999
    nlp.to_disk(tmp_path / "pipeline")
    np.testing.assert_allclose(spacy.load(tmp_path / "pipeline")(MONEY)._.elmo["layers"], fast, atol=1e-6)
    with pytest.raises(FastModeError, match="stateless only"):
        _nlp(fixture_paths, model={"fast_mode": "int8", "stateful": True})
    with pytest.raises(FastModeError, match="unknown fast_mode"):
        _nlp(fixture_paths, model={"fast_mode": "int4"})


def test_fast_mode_that_cannot_run_here_runs_the_exact_biLM_with_a_warning(fixture_paths, monkeypatch):
    """One config serves every machine: int8 on a GPU (here pretended: the CPU biLM counts as a GPU one)."""
    from spacy_elmo.elmo.nn.fast import fast_bilm as int8_module

    reason = "the 'int8' fast mode runs on the CPU only"
    monkeypatch.setattr(int8_module, "unavailable_reason", lambda mode, device: reason)
    exact = _nlp(fixture_paths)(MONEY)._.elmo["layers"]
    nlp = _nlp(fixture_paths, model={"fast_mode": "int8"})
    with pytest.warns(UserWarning, match="fast_mode 'int8' is not used: .*CPU only.*exact biLM instead"):
        layers = nlp(MONEY)._.elmo["layers"]
    np.testing.assert_array_equal(layers, exact)


def test_pooling_is_any_layer_mix_or_fixed():
    """`pooling` takes a registered layer: a non-trainable ScalarMix gives gamma * softmax(w)-weighted layers."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config={
            **elmo_config(),
            **EXACT_LAYERS,
            "pooling": {
                "@layers": "spacy-elmo.ScalarMix.v2",
                "weights": [0.0, 1.0, 2.0],
                "gamma": 2.0,
                "trainable": False,
            },
        },
    )
    doc = nlp("The bank raised rates .")
    s = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    expected = 2.0 * np.tensordot(s, doc._.elmo["layers"], axes=1)
    np.testing.assert_allclose(doc._.elmo["vectors"], expected, atol=1e-5)
    np.testing.assert_allclose(doc[1].vector, expected[1], atol=1e-5)

    top = spacy.blank("en")
    top.add_pipe(
        "elmo",
        config={
            **elmo_config(),
            **EXACT_LAYERS,
            "pooling": {"@layers": "spacy-elmo.Pooling.v1", "weights": "top"},
        },
    )
    doc = top("The bank raised rates .")
    np.testing.assert_array_equal(doc._.elmo["vectors"], doc._.elmo["layers"][-1])


def _numpy_peak(nlp, doc):
    """The most bytes NumPy held at once (tracemalloc counts its arrays, not torch's) while `nlp` ran."""
    tracemalloc.start()
    try:
        nlp(doc)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_docs_float16_layers_peak_below_float32s(fixture_paths):
    """float16 `store_layers` keep each piece's rows as the biLM gives them, never a whole doc's float32
    layers first (which made float16 peak above float32: docs/results.md, bench_long_doc_memory)."""
    text = " ".join(np.random.default_rng(0).choice(MONEY.split() + RIVER.split(), 3000))
    peaks = {}
    for store in ("float16", True):
        nlp = _nlp(fixture_paths, store_layers=store)
        nlp("A warm-up .")
        peaks[store] = _numpy_peak(nlp, nlp.make_doc(text))
        assert nlp(text)._.elmo["layers"].dtype == (np.float16 if store == "float16" else np.float32)
    float32_layers = 3 * 3000 * 32 * 4
    assert peaks["float16"] + float32_layers // 4 < peaks[True], peaks


@pytest.mark.parametrize("store", ["float16", True, False])
@pytest.mark.parametrize("pooling", ["mean", [0.5, 0.25, 0.25]])
def test_a_long_doc_is_annotated_piece_by_piece_as_predict_and_set_annotations_would(fixture_paths, store, pooling):
    nlp = _nlp(fixture_paths, store_layers=store, pooling=pooling)
    text = " ".join(np.random.default_rng(1).choice(MONEY.split() + RIVER.split() + ["\n\n"], 1500))
    doc = nlp(text)
    expected = nlp.make_doc(text)
    elmo = nlp.get_pipe("elmo")
    elmo.set_annotations([expected], elmo.predict([expected]))
    got, want = doc._.elmo, expected._.elmo
    assert sorted(got) == sorted(want)
    np.testing.assert_allclose(got["vectors"], want["vectors"], rtol=0, atol=1e-6)  # pooled per piece: 1 ulp
    if store:
        assert got["layers"].dtype == want["layers"].dtype and np.array_equal(got["layers"], want["layers"])


def test_a_serving_pipeline_never_reads_the_frozen_cache(fixture_paths, monkeypatch):
    """`predict` runs the model; the cache is a training object, read only while it lives."""
    nlp = _nlp(fixture_paths)
    elmo = nlp.get_pipe("elmo")

    def no_cache(*args, **kwargs):
        raise AssertionError("a serving pipeline read the frozen cache")

    monkeypatch.setattr(elmo.cache, "layers", no_cache)
    assert nlp("The bank .")._.elmo["vectors"].shape[0] == 3
    assert [doc._.elmo["vectors"].shape[0] for doc in nlp.pipe(["A b", "c"])] == [2, 1]
    assert len(elmo.predict([nlp.make_doc("x y")])) == 1


STATEFUL_IN_TWO_PROCESSES = """
import spacy
nlp = spacy.blank("en")
model = {"@architectures": "spacy-elmo.BiLM.v2", "name": "fixture-tiny", "stateful": True}
nlp.add_pipe("elmo", config={"model": model})
docs = list(nlp.pipe(["The bank raised rates ."] * 4, n_process=2, batch_size=2))
print(len(docs))
"""


@pytest.mark.slow
def test_a_stateful_pipeline_in_two_processes_is_warned_of():
    """In a fresh interpreter: under pytest a forked worker inherits its record of warnings, unprinted."""
    result = subprocess.run(
        [sys.executable, "-c", STATEFUL_IN_TWO_PROCESSES], capture_output=True, text=True, timeout=240
    )
    assert result.stdout.strip() == "4", result.stderr[-2000:]
    assert "a stateful biLM (stateful = true) runs in a worker process" in result.stderr


def test_a_fine_tuned_biLM_refuses_a_fast_mode(fixture_paths):
    """A fast copy is made once, from the weights of that moment: a biLM fine-tuned in a fast mode would be
    evaluated on stale, rounded weights. Refused when built, and at the update after `frozen` is unset."""
    from spacy.training import Example

    from spacy_elmo.elmo.nn.errors import FastModeError

    with pytest.raises(FastModeError, match="'bf16' runs a frozen biLM only.*set fast_mode = null"):
        _nlp(fixture_paths, model={"fast_mode": "bf16"}, frozen=False)
    nlp = _nlp(fixture_paths, model={"fast_mode": "int8"})
    nlp.add_pipe("tagger", config=TAGGER_ON_ELMO)
    examples = [Example.from_dict(nlp.make_doc(MONEY), {"tags": ["X"] * len(MONEY.split())})]
    nlp.initialize(lambda: examples)
    nlp.get_pipe("elmo").frozen = False
    with pytest.raises(FastModeError, match="'int8' runs a frozen biLM only"):
        nlp.update(examples)
