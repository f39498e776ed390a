"""The mix sees the rows of the tokens the biLM read, whitespace rows are zero: told, not guessed."""

import numpy as np
import pytest
import spacy
from thinc.api import Model

from spacy_elmo.pipeline.architectures import build_bilm_v3, build_scalar_mix_v2
from spacy_elmo.pipeline.layers.pooling import build_pooling_v1
from spacy_elmo.pipeline.layers.read_rows import ROW_WISE, apply_to_read_rows, mix_read_rows
from tests.support.pipelines import elmo_config

TEXTS = ["Alice  went to\nthe bank .", "Bob  sat .", "  "]


def _docs():
    nlp = spacy.blank("en")
    return [nlp.make_doc(text) for text in TEXTS]


def _read(doc):
    return [i for i, token in enumerate(doc) if not token.is_space]


def _bilm():
    bilm = build_bilm_v3("fixture-tiny")
    bilm.initialize()
    return bilm


def test_layer_norm_counts_only_the_read_tokens_and_whitespace_rows_are_zero():
    docs = _docs()
    assert all(len(_read(doc)) < len(doc) for doc in docs)  # every doc has whitespace tokens
    bilm = _bilm()
    model = mix_read_rows(bilm, build_scalar_mix_v2(weights=[0.5, -0.3, 0.1], gamma=1.5, layer_norm=True))
    model.initialize(X=docs)
    outputs = model.predict(docs)
    layers = bilm.predict(docs)
    read = [x[:, _read(doc)] for doc, x in zip(docs, layers)]
    expected = build_scalar_mix_v2(weights=[0.5, -0.3, 0.1], gamma=1.5, layer_norm=True).predict(read)
    assert model.get_dim("nO") == layers[0].shape[2]
    for doc, output, want in zip(docs, outputs, expected):
        assert output.shape == (len(doc), layers[0].shape[2])
        np.testing.assert_allclose(output[_read(doc)], want, rtol=1e-5, atol=1e-6)
        spaces = [i for i in range(len(doc)) if i not in _read(doc)]
        assert not output[spaces].any()


def test_the_mix_learns_from_the_read_rows_only():
    docs = _docs()
    bilm = _bilm()
    mix = build_scalar_mix_v2(layer_norm=True)
    model = mix_read_rows(bilm, mix)
    model.initialize(X=docs)
    outputs, backprop = model.begin_update(docs)
    rng = np.random.default_rng(0)
    d_outputs = [rng.normal(size=y.shape).astype(np.float32) for y in outputs]
    backprop(d_outputs)
    direct = build_scalar_mix_v2(layer_norm=True)
    read = [x[:, _read(doc)] for doc, x in zip(docs, bilm.predict(docs))]
    _, direct_backprop = direct.begin_update(read)
    direct_backprop([d[_read(doc)] for doc, d in zip(docs, d_outputs)])
    for name in ("w", "gamma"):
        np.testing.assert_allclose(mix.get_grad(name), direct.get_grad(name), rtol=1e-4, atol=1e-6)


def test_the_component_pools_the_read_rows_with_any_layer():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config={
            **elmo_config(),
            "pooling": {"@layers": "spacy-elmo.ScalarMix.v2", "layer_norm": True, "trainable": False},
            "store_layers": True,
        },
    )
    nlp.initialize()
    doc = nlp(TEXTS[0])
    read = _read(doc)
    vectors = np.stack([token.vector for token in doc])
    pooling = build_scalar_mix_v2(layer_norm=True, trainable=False)
    expected = pooling.predict([doc._.elmo["layers"][:, read]])[0]
    np.testing.assert_allclose(vectors[read], expected, rtol=1e-5, atol=1e-6)
    assert not vectors[[i for i in range(len(doc)) if i not in read]].any()
    assert apply_to_read_rows(pooling, [doc], [doc._.elmo["layers"]])[0].shape == vectors.shape


def _recording_source(layers):
    """A source giving fixed `layers` (whitespace rows not zero, so a mix that ignored the read rows
    would show) and recording the gradient it is given."""
    received = []

    def forward(model, docs, is_train):
        return [x.copy() for x in layers], lambda d_layers: received.extend(d_layers) or []

    return Model("recording-source", forward), received


@pytest.mark.parametrize(
    "make_mix",
    [
        lambda: build_scalar_mix_v2(weights=[0.2, -0.1, 0.4], gamma=0.7),
        lambda: build_scalar_mix_v2(weights=[0.2, -0.1, 0.4], gamma=0.7, layer_norm=True),
        lambda: build_pooling_v1("mean"),
    ],
)
def test_whitespace_rows_neither_give_nor_get_anything(make_mix):
    docs = _docs()
    rng = np.random.default_rng(1)
    layers = [rng.normal(size=(3, len(doc), 4)).astype(np.float32) for doc in docs]
    source, received = _recording_source(layers)
    mix = make_mix()
    model = mix_read_rows(source, mix)
    model.initialize(X=docs)
    outputs, backprop = model.begin_update(docs)
    expected = make_mix().predict([x[:, _read(doc)] for doc, x in zip(docs, layers)])
    d_outputs = [rng.normal(size=y.shape).astype(np.float32) for y in outputs]
    backprop(d_outputs)
    for doc, output, want, d_layers in zip(docs, outputs, expected, received):
        spaces = [i for i in range(len(doc)) if i not in _read(doc)]
        np.testing.assert_allclose(output[_read(doc)], want, rtol=1e-5, atol=1e-6)
        assert not output[spaces].any() and not d_layers[:, spaces].any()
        assert d_layers[:, _read(doc)].any() or not _read(doc)
    assert mix.attrs[ROW_WISE] == (mix.name != "elmo-scalar-mix" or not mix.attrs["layer_norm"])
