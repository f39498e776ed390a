"""ElmoListener: fed by the upstream component in training, reading the Doc at prediction; gradient
accumulation across listeners; frozen vs fine-tuned biLM; nothing of a batch held after its update;
replace_listeners; clear errors."""

import gc
import weakref

import numpy as np
import pytest
import spacy
import torch
from spacy.training import Example
from thinc.api import Adam

from spacy_elmo import BiLM
from spacy_elmo.elmo.nn.run_options import EXACT
from spacy_elmo.pipeline.errors import DocDataError
from spacy_elmo.pipeline.layers import ElmoListener, get_bilm
from spacy_elmo.pipeline.layers.listener import find_listener_cfg, replace_listener_cfg
from tests.support.paths import CONFIGS
from tests.support.pipelines import elmo_config

TRAIN = [
    ("Alice went to the bank .", {"tags": ["NNP", "VBD", "TO", "DT", "NN", "."]}),
    ("Bob sat on the bank .", {"tags": ["NNP", "VBD", "IN", "DT", "NN", "."]}),
]


def _pipeline(fixture_paths, frozen=True, heads=("tagger",), upstream="elmo", with_elmo=True):
    options, weights = fixture_paths
    nlp = spacy.blank("en")
    if with_elmo:
        nlp.add_pipe(
            "elmo",
            config={
                "frozen": frozen,
                **elmo_config(options=str(options), weights=str(weights)),
            },
        )
    for head in heads:
        nlp.add_pipe(
            "tagger",
            name=head,
            config={
                "model": {
                    "@architectures": "spacy.Tagger.v2",
                    "tok2vec": {
                        "@architectures": "spacy-elmo.ElmoListener.v1",
                        "upstream": upstream,
                        "mix": {"@layers": "spacy-elmo.ScalarMix.v2"},
                    },
                }
            },
        )
    return nlp


def _examples(nlp):
    return [Example.from_dict(nlp.make_doc(text), annots) for text, annots in TRAIN]


def _train_step(nlp, optimizer):
    """As `spacy train` does it: all updates first, then every component's finish_update (nlp.update
    with an optimizer would finish the upstream before the heads have sent their gradients)."""
    nlp.update(_examples(nlp), sgd=False)
    for _, proc in nlp.pipeline:
        proc.finish_update(optimizer)


def _bilm_params(nlp):
    return [p.detach().clone() for p in get_bilm(nlp.get_pipe("elmo").model).parameters()]


def test_listeners_are_bound_and_prediction_reads_the_doc(fixture_paths):
    nlp = _pipeline(fixture_paths, heads=("tagger", "tagger2"))
    elmo = nlp.get_pipe("elmo")
    assert elmo.listening_components == ["tagger", "tagger2"]
    nlp.initialize(lambda: _examples(nlp))
    doc = nlp("Alice went to the bank .")
    assert doc._.elmo["layers"].shape[:2] == (3, 6)
    listener = elmo.listener_map["tagger"][0]
    np.testing.assert_array_equal(listener.predict([doc])[0], doc._.elmo["layers"])
    assert len(doc[0].tag_) > 0


def test_frozen_training_leaves_the_bilm_alone_and_moves_each_mix(fixture_paths):
    nlp = _pipeline(fixture_paths, heads=("tagger", "tagger2"))
    nlp.initialize(lambda: _examples(nlp))
    before = _bilm_params(nlp)
    optimizer = Adam(0.01)
    for _ in range(3):
        _train_step(nlp, optimizer)
    for a, b in zip(before, _bilm_params(nlp)):
        assert torch.equal(a, b)
    mixes = nlp.get_pipe("elmo").mix_weights()
    for name in ("tagger", "tagger2"):
        (mix,) = mixes[name]
        assert not np.allclose(mix["weights"], 1 / 3) and mix["gamma"] != 1.0
    cache = nlp.get_pipe("elmo").cache.store
    assert len(cache) == 2 and cache.misses == 2 and cache.hits == 4  # the biLM ran once per distinct doc


def test_fine_tuning_accumulates_gradients_from_all_listeners(fixture_paths):
    nlp = _pipeline(fixture_paths, frozen=False, heads=("tagger", "tagger2"))
    nlp.initialize(lambda: _examples(nlp))
    elmo = nlp.get_pipe("elmo")
    seen = []
    forward = elmo.model._func

    def spy(model, docs, is_train):
        outputs, backprop = forward(model, docs, is_train)

        def recording_backprop(d_outputs):
            seen.append([d.copy() for d in d_outputs])
            return backprop(d_outputs)

        return outputs, recording_backprop

    elmo.model._func = spy
    before = _bilm_params(nlp)
    grads = {}
    for listener in elmo.listeners:
        original = listener.receive

        def receive(batch_id, outputs, callback, listener=listener, original=original):
            def wrapped(d_layers):
                grads.setdefault(id(listener), []).append([d.copy() for d in d_layers])
                return callback(d_layers)

            original(batch_id, outputs, wrapped)

        listener.receive = receive
    optimizer = Adam(0.01)
    for _ in range(2):  # the heads' output layers start at zero: the first step sends no gradient down
        _train_step(nlp, optimizer)
    assert len(seen) == 2 and len(grads) == 2  # one backprop per step into the biLM, carrying both heads'
    (_, first), (_, second) = grads.values()
    assert np.abs(first[0]).sum() > 0 and np.abs(second[0]).sum() > 0
    for total, a, b in zip(seen[1], first, second):
        np.testing.assert_allclose(total, a + b, rtol=1e-6, atol=1e-7)
    assert any(not torch.equal(a, b) for a, b in zip(before, _bilm_params(nlp)))


def _record_gradients(elmo):
    """Each listener's gradients as it sends them back, in order."""
    sent = []
    for listener in elmo.listeners:
        original = listener.receive

        def receive(batch_id, outputs, callback, original=original):
            def wrapped(d_layers):
                sent.append([d.copy() for d in d_layers])
                return callback(d_layers)

            original(batch_id, outputs, wrapped)

        listener.receive = receive
    return sent


@pytest.mark.parametrize("frozen", [False, True])
def test_the_elmo_loss_is_the_squared_gradient_the_listeners_send_back(fixture_paths, frozen):
    nlp = _pipeline(fixture_paths, frozen=frozen, heads=("tagger", "tagger2"))
    nlp.initialize(lambda: _examples(nlp))
    optimizer = Adam(0.01)
    _train_step(nlp, optimizer)  # the heads' output layers start at zero: this step sends no gradient down
    sent = _record_gradients(nlp.get_pipe("elmo"))
    losses = nlp.update(_examples(nlp), sgd=optimizer)
    assert len(sent) == 2 and np.abs(sent[0][0]).sum() > 0
    expected = sum(float((d.astype(np.float64) ** 2).sum()) for d_layers in sent for d in d_layers)
    if frozen:
        assert losses["elmo"] == 0.0, "a frozen biLM learns nothing: its loss stays 0"
    else:
        assert losses["elmo"] > 0 and losses["elmo"] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("frozen", [True, False])
def test_a_replaced_listeners_own_biLM_is_frozen_as_the_component_was(fixture_paths, frozen):
    nlp = _pipeline(fixture_paths, frozen=frozen)
    nlp.initialize(lambda: _examples(nlp))
    nlp.replace_listeners("elmo", "tagger", ["model.tok2vec"])
    nlp.remove_pipe("elmo")
    tagger = nlp.get_pipe("tagger")
    bilm = get_bilm(next(node for node in tagger.model.walk() if node.name == "elmo-bilm"))
    before = [p.detach().clone() for p in bilm.parameters()]
    optimizer = Adam(0.01)
    for _ in range(2):
        nlp.update(_examples(nlp), sgd=optimizer)
    moved = any(not torch.equal(a, b) for a, b in zip(before, bilm.parameters()))
    assert moved is not frozen


def test_no_torch_graph_outlives_a_fine_tuning_update(fixture_paths, monkeypatch):
    nlp = _pipeline(fixture_paths, frozen=False, heads=("tagger", "tagger2"))
    nlp.initialize(lambda: _examples(nlp))
    graphs = []
    forward_sentences = BiLM.forward_sentences

    def recording(self, sentences, stateful=False, run=EXACT):
        output = forward_sentences(self, sentences, stateful, run)
        if output.layers.grad_fn is not None:
            graphs.append(weakref.ref(output.layers))
        return output

    monkeypatch.setattr(BiLM, "forward_sentences", recording)
    _train_step(nlp, Adam(0.01))
    gc.collect()
    assert graphs, "the fine-tuned biLM ran with autograd"
    assert all(ref() is None for ref in graphs), "the batch's torch graph is still referenced after the update"
    assert all(listener._outputs is None and listener._backprop is None for listener in nlp.get_pipe("elmo").listeners)


def test_a_batch_is_handed_over_once_and_finish_training_forgets_it(fixture_paths):
    nlp = _pipeline(fixture_paths)
    nlp.initialize(lambda: _examples(nlp))
    elmo = nlp.get_pipe("elmo")
    docs = [eg.predicted for eg in _examples(nlp)]
    elmo.update(_examples(nlp))
    (listener,) = elmo.listeners
    listener.begin_update(docs)
    with pytest.raises(ValueError, match="asked twice"):
        listener.begin_update(docs)
    elmo.update(_examples(nlp))
    elmo.finish_training()
    assert listener._outputs is None and listener._batch_id is None
    # Without a received batch the listener reads the docs (or runs the upstream's biLM), as at prediction.
    (layers,), _ = listener.begin_update(docs[:1])
    assert layers.shape[:2] == (3, len(docs[0]))


def test_batch_mismatch_is_an_error(fixture_paths):
    listener = ElmoListener("elmo")
    nlp = spacy.blank("en")
    listener.receive(12345, [], lambda d: [])
    with pytest.raises(ValueError, match="differs from the one its upstream"):
        listener.begin_update([nlp("something else")])


def test_missing_upstream_component_is_named(fixture_paths):
    nlp = _pipeline(fixture_paths, with_elmo=False)
    with pytest.raises(ValueError, match="no such component before it"):
        nlp.initialize(lambda: _examples(nlp))
    nlp = _pipeline(fixture_paths, upstream="elmo_other")
    with pytest.raises(ValueError, match="'elmo_other'"):
        nlp.initialize(lambda: _examples(nlp))


def test_replace_listeners_gives_a_standalone_head(fixture_paths, tmp_path):
    nlp = _pipeline(fixture_paths)
    nlp.initialize(lambda: _examples(nlp))
    nlp.update(_examples(nlp), sgd=Adam(0.01))
    text = "Alice went to the bank ."
    expected = nlp(text)
    nlp.replace_listeners("elmo", "tagger", ["model.tok2vec"])
    assert nlp.get_pipe_config("tagger")["model"]["tok2vec"]["@architectures"] == "spacy-elmo.ElmoTok2Vec.v1"
    assert not nlp.get_pipe("elmo").listeners
    nlp.remove_pipe("elmo")
    doc = nlp(text)
    assert [t.tag_ for t in doc] == [t.tag_ for t in expected]
    nlp.to_disk(tmp_path / "standalone")
    loaded = spacy.load(tmp_path / "standalone")
    assert [t.tag_ for t in loaded(text)] == [t.tag_ for t in expected]


def test_replace_listeners_inside_the_shipped_encoder_config():
    """The shipped configs put the listener inside a Tok2Vec (`model.tok2vec.embed`)."""

    from spacy.training import Example
    from spacy.util import load_model_from_config
    from thinc.api import Config

    path = CONFIGS / "tagger_elmo.cfg"
    config = Config().from_disk(
        path, overrides={"paths.train": "x", "paths.dev": "x", "paths.elmo_model": "fixture-tiny"}
    )
    nlp = load_model_from_config(config, auto_fill=True)
    examples = [Example.from_dict(nlp.make_doc("The bank rose ."), {"tags": ["D", "N", "V", "P"]})]
    nlp.initialize(lambda: examples)
    before = [t.tag_ for t in nlp("The bank rose .")]
    nlp.replace_listeners("elmo", "tagger", ["model.tok2vec.embed"])
    nlp.remove_pipe("elmo")
    assert [t.tag_ for t in nlp("The bank rose .")] == before


def test_replace_listener_cfg_finds_the_listener_where_it_is_nested():
    listener = {"@architectures": "spacy-elmo.ElmoListener.v1", "upstream": "elmo", "width": 96, "mix": {"x": 1}}
    tok2vec = {"@architectures": "spacy.Tok2Vec.v2", "embed": listener, "encode": {"width": 96}}
    assert find_listener_cfg(tok2vec) is listener and find_listener_cfg({"embed": {}}) is None
    bilm = elmo_config()["model"]
    assert replace_listener_cfg(bilm, tok2vec, frozen=False) == {
        "@architectures": "spacy-elmo.ElmoTok2Vec.v1",
        "bilm": bilm,
        "frozen": False,
        "width": 96,
        "mix": {"x": 1},
    }
    with pytest.raises(ValueError, match="found no spacy-elmo.ElmoListener.v1"):
        replace_listener_cfg(bilm, {"@architectures": "spacy.Tok2Vec.v2"}, frozen=True)


def test_prediction_refuses_stored_layers_of_another_width(fixture_paths):
    nlp = _pipeline(fixture_paths)
    nlp.initialize(lambda: _examples(nlp))
    doc = nlp("Alice went to the bank .")
    data = doc._.elmo  # the stored dict itself
    data.update(vectors=data["vectors"][:, :8], layers=data["layers"][..., :8])
    with pytest.raises(DocDataError, match=r"holds 3 layers of width 8, but the 'elmo' component's biLM gives 3 of"):
        nlp.get_pipe("tagger")(doc)


def test_float16_layers_move_the_heads_input_by_their_rounding_only(fixture_paths):
    """The default keeps the layers in float16: what a listening head reads at prediction differs from
    the float32 layers by float16's rounding, and the tags stay."""
    nlp = _pipeline(fixture_paths)
    nlp.initialize(lambda: _examples(nlp))
    tok2vec = nlp.get_pipe("tagger").model.get_ref("tok2vec")
    half = nlp("Alice went to the bank .")
    full = nlp("Alice went to the bank .")
    full._.elmo["layers"] = nlp.get_pipe("elmo").model.predict([full])[0]  # as store_layers = true keeps them
    assert half._.elmo["layers"].dtype == np.float16 and full._.elmo["layers"].dtype == np.float32
    a, b = tok2vec.predict([half])[0], tok2vec.predict([full])[0]
    assert 0 < np.abs(a - b).max() <= 2**-10 * np.abs(b).max()
    assert [t.tag_ for t in half] == [t.tag_ for t in nlp.get_pipe("tagger")(full)]
