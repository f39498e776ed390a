"""A frozen biLM's layers for the dev set are computed once per training run, not at every evaluation;
only while the component trains (from the first update to `finish_training`); filled as training batches
meet their docs, each biLM call topped up to a full batch; with a progress bar when embedding takes long."""

import copy
import sys

import numpy as np
import spacy
import torch
from spacy.training import Example

from spacy_elmo import BiLM
from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast
from spacy_elmo.elmo.nn.run_options import EXACT
from spacy_elmo.pipeline import frozen_cache
from spacy_elmo.pipeline.frozen_cache import TOP_UP_BATCHES, ActivationCache, doc_key
from spacy_elmo.pipeline.layers import get_bilm, set_bilm
from tests.support.pipelines import TAGGER_ON_ELMO, elmo_config, tiny_tagger_pipeline

TEXTS = ["The bank raised its rates .", "They sat on the river bank .", "Money talks ."]


def pipeline(frozen: bool, **model):
    nlp = tiny_tagger_pipeline(frozen) if not model else spacy.blank("en")
    if model:
        nlp.add_pipe("elmo", config=elmo_config(**model))
        nlp.add_pipe("tagger", config=TAGGER_ON_ELMO)
    examples = [Example.from_dict(nlp.make_doc(t), {"tags": ["X"] * len(t.split())}) for t in TEXTS]
    nlp.initialize(lambda: examples)
    return nlp, examples


def count_bilm_calls(nlp, monkeypatch):
    """The sentences the torch biLM runs on from now on (one entry per call: its number of rows)."""
    calls = []
    forward_sentences = BiLM.forward_sentences

    def counting(self, sentences, stateful=False, run=EXACT):
        calls.append(len(sentences))
        return forward_sentences(self, sentences, stateful, run)

    monkeypatch.setattr(BiLM, "forward_sentences", counting)
    return calls


def test_evaluation_while_training_reuses_the_frozen_layers(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    nlp.update(examples, sgd=nlp.create_optimizer())
    calls = count_bilm_calls(nlp, monkeypatch)
    first = nlp.evaluate(examples)
    assert sum(calls) == 0, "the training docs were cached by update; evaluation found them"
    dev = [Example.from_dict(nlp.make_doc("A new dev sentence ."), {"tags": ["X"] * 5})]
    nlp.evaluate(dev)
    assert sum(calls) == 1
    nlp.evaluate(dev)
    assert sum(calls) == 1, "second evaluation of the same dev docs ran the biLM again"
    again = nlp.evaluate(examples)
    assert {k: v for k, v in again.items() if k != "speed"} == {k: v for k, v in first.items() if k != "speed"}


def test_no_cache_outside_training_or_when_fine_tuning(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    calls = count_bilm_calls(nlp, monkeypatch)
    list(nlp.pipe(TEXTS))
    list(nlp.pipe(TEXTS))
    assert sum(calls) == 2 * len(TEXTS), "a serving pipeline must not keep layers"
    assert len(nlp.get_pipe("elmo").cache) == 0

    tuned, tuned_examples = pipeline(frozen=False)
    tuned.update(tuned_examples, sgd=tuned.create_optimizer())
    calls = count_bilm_calls(tuned, monkeypatch)
    tuned.evaluate(tuned_examples)
    tuned.evaluate(tuned_examples)
    assert sum(calls) == 2 * len(TEXTS), "a biLM being fine-tuned changes: its layers are never reused"


def test_a_different_bilm_empties_the_cache(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    nlp.update(examples, sgd=nlp.create_optimizer())
    component = nlp.get_pipe("elmo")
    before = component.predict([nlp.make_doc(TEXTS[0])])[0].copy()
    replacement = copy.deepcopy(get_bilm(component.model))
    with torch.no_grad():
        for parameter in replacement.parameters():
            parameter.mul_(0.5)
    set_bilm(component.model, replacement)
    calls = count_bilm_calls(nlp, monkeypatch)
    after = component.predict([nlp.make_doc(TEXTS[0])])[0]
    assert sum(calls) == 1, "the layers cached for the old biLM were served for the new one"
    assert np.abs(after - before).max() > 1e-3


def test_the_first_update_tops_its_batch_up_with_training_docs_to_a_full_batch(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    calls = count_bilm_calls(nlp, monkeypatch)
    assert len(nlp.get_pipe("elmo").cache) == 0, "initialize alone keeps nothing (it may be a serving pipeline)"
    optimizer = nlp.create_optimizer()
    nlp.update(examples[:1], sgd=optimizer)
    assert calls == [len(TEXTS)], "the training docs fit in one batch of max_batch_tokens: one call"
    for example in examples[1:]:
        nlp.update([example], sgd=optimizer)
    assert calls == [len(TEXTS)], "later updates find their docs in the cache"
    component = nlp.get_pipe("elmo")
    alone = component.model.predict([nlp.make_doc(TEXTS[2])])[0]
    np.testing.assert_allclose(component.predict([nlp.make_doc(TEXTS[2])])[0], alone, atol=1e-6)


def test_a_short_run_embeds_what_its_batches_meet_topped_up_to_max_batch_tokens(monkeypatch):
    # A call is topped up to TOP_UP_BATCHES tokens here (max_batch_tokens 1): the first doc (6) fills it.
    nlp, examples = pipeline(frozen=True, max_batch_tokens=1)
    assert TOP_UP_BATCHES <= len(TEXTS[0].split()) and TOP_UP_BATCHES > len(TEXTS[2].split())
    calls = count_bilm_calls(nlp, monkeypatch)
    optimizer = nlp.create_optimizer()
    nlp.update(examples[:1], sgd=optimizer)
    assert sum(calls) == 1 and len(nlp.get_pipe("elmo").cache) == 1, "one step embeds its own batch, not the corpus"
    nlp.update(examples[2:], sgd=optimizer)  # 3 tokens: topped up with the one unmet doc
    assert sum(calls) == 3
    nlp.update(examples[1:2], sgd=optimizer)
    assert sum(calls) == 3, "the doc embedded ahead was kept for its turn"


def test_no_top_up_when_the_training_docs_do_not_fit_in_the_cache(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    component = nlp.get_pipe("elmo")
    # Room for the longest doc's layers, not for two.
    layers = component.model.predict([eg.predicted for eg in examples])
    component.cache.store = ActivationCache(max(x.nbytes for x in layers))
    calls = count_bilm_calls(nlp, monkeypatch)
    nlp.update(examples[:1], sgd=nlp.create_optimizer())
    assert calls == [1], "only the batch's own doc is embedded"


def test_the_cache_lives_from_the_first_update_to_finish_training(monkeypatch):
    nlp, examples = pipeline(frozen=True)
    component = nlp.get_pipe("elmo")
    assert not component.cache.live
    nlp.update(examples, sgd=nlp.create_optimizer())
    assert component.cache.live and len(component.cache) == len(TEXTS)
    nlp.evaluate([Example.from_dict(nlp.make_doc("A dev sentence ."), {"tags": ["X"] * 4})])
    assert len(component.cache) == len(TEXTS) + 1, "an evaluation while training keeps the dev doc"
    component.finish_training()
    assert not component.cache.live and len(component.cache) == 0
    calls = count_bilm_calls(nlp, monkeypatch)
    list(nlp.pipe(TEXTS))
    nlp(TEXTS[0])
    assert sum(calls) == len(TEXTS) + 1 and len(component.cache) == 0, "serving again: nothing is kept"
    nlp.update(examples, sgd=nlp.create_optimizer())
    assert component.cache.live
    nlp.initialize(lambda: examples)
    assert not component.cache.live and len(component.cache) == 0, "initialize starts over"


def test_long_embeddings_while_training_show_progress_and_serving_shows_none(monkeypatch, capsys):
    monkeypatch.setattr(frozen_cache, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)  # a terminal
    nlp, examples = pipeline(frozen=True)
    list(nlp.pipe(TEXTS))
    assert capsys.readouterr().err == "", "a serving pipeline prints nothing"
    nlp.update(examples, sgd=nlp.create_optimizer())
    nlp.evaluate([Example.from_dict(nlp.make_doc("A new dev sentence ."), {"tags": ["X"] * 5})])
    err = capsys.readouterr().err
    assert "elmo: embedding text not seen before" in err and "5.00 tokens" in err
    monkeypatch.setattr(frozen_cache, "PROGRESS_DELAY_S", 3600.0)
    nlp.evaluate([Example.from_dict(nlp.make_doc("Another dev sentence ."), {"tags": ["X"] * 4})])
    assert capsys.readouterr().err == "", "a short embedding shows no bar"


def test_a_log_gets_no_bar_whose_redraws_would_be_glued_on_one_line(monkeypatch, capsys):
    monkeypatch.setattr(frozen_cache, "PROGRESS_DELAY_S", 0.0)
    nlp, examples = pipeline(frozen=True)
    nlp.update(examples, sgd=nlp.create_optimizer())
    nlp.evaluate([Example.from_dict(nlp.make_doc("A new dev sentence ."), {"tags": ["X"] * 5})])
    assert capsys.readouterr().err == ""


def test_activation_cache_is_an_lru_bounded_in_bytes():
    cache = ActivationCache(max_bytes=3 * 400)
    arrays = {k: np.zeros(100, dtype=np.float32) for k in "abcd"}
    for key in "abc":
        cache.put(key, arrays[key])
    assert cache.get("a") is arrays["a"]  # "a" is now the most recent
    cache.put("d", arrays["d"])
    assert cache.get("b") is None and len(cache) == 3 and cache.size == 1200
    cache.put("huge", np.zeros(1000, dtype=np.float32))
    assert cache.get("huge") is None


def test_training_in_a_fast_mode_caches_the_fast_copys_layers_and_serves_as_saved(tmp_path):
    """`fast_mode` on a frozen biLM feeds the heads the fast copy's layers while they train (a run that
    silently trained on the exact layers would not be what its config says); the pipeline saved from it
    serves in its mode, and exact with `fast_mode` null."""
    nlp, examples = pipeline(frozen=True, fast_mode="int8")
    nlp.update(examples, sgd=nlp.create_optimizer())
    component = nlp.get_pipe("elmo")
    docs = [eg.predicted for eg in examples]
    sentences = [[token.text for token in doc] for doc in docs]
    bilm = get_bilm(component.model)
    with torch.inference_mode():
        fast = make_fast(bilm, "int8").forward_sentences(sentences).layers.numpy()
        exact = bilm.forward_sentences(sentences).layers.numpy()
    for row, doc in enumerate(docs):
        cached = component.cache.store.get(doc_key(doc))
        np.testing.assert_allclose(cached, fast[:, row, : len(doc)], atol=1e-6)
        assert np.abs(cached - exact[:, row, : len(doc)]).max() > 1e-4
    nlp.to_disk(tmp_path / "pipeline")
    for mode, expected in (("int8", fast), (None, exact)):
        loaded = spacy.load(tmp_path / "pipeline", config={"components": {"elmo": {"model": {"fast_mode": mode}}}})
        served = loaded.get_pipe("elmo").predict([loaded.make_doc(text) for text in TEXTS])
        for row, layers in enumerate(served):
            np.testing.assert_allclose(layers, expected[:, row, : layers.shape[1]], atol=1e-6)
