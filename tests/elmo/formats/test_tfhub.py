"""TF-Hub ELMo modules made by TensorFlow Hub with both signatures, as the published ones are
(tests/fixtures/elmo-tfhub, see its script): `load_bilm(DIR)` and a spaCy pipeline with `BiLM.v2 path = DIR`
give the module's own outputs (with both clips active), and its trained mix, a part of the loaded biLM
that a saved pipeline keeps, started by `ScalarMix.v2 start_from`, gives its `elmo` and `default`."""

import dataclasses
import json
import shutil
import tarfile

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.formats import model_layout, model_options
from spacy_elmo.elmo.formats.detect import TFHUB_FILES
from spacy_elmo.elmo.formats.tensor_bundle import TensorBundle
from spacy_elmo.elmo.formats.tfhub import InputFileError, bilm_from_bundle, options_from_bundle, published_mix_of
from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.nn.tfhub import TfHubBiLM
from spacy_elmo.pipeline.architectures import build_scalar_mix_v2
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import get_bilm
from spacy_elmo.pipeline.layers.scalar_mix import mix_summary, softmax
from tests.support.paths import FIXTURES
from tests.support.pipelines import EXACT_LAYERS

ROOT = FIXTURES / "elmo-tfhub"
MODULES = ["dp-1shard", "google-2shards"]
SENTENCES = json.loads((ROOT / "sentences.json").read_text(encoding="utf8"))
ATOL = 1e-4


def _reference(name):
    return np.load(ROOT / f"{name}-outputs.npz")


def _assert_layers(layers_per_sentence, ref, n_proj):
    for k, (sentence, layers) in enumerate(zip(SENTENCES, layers_per_sentence)):
        n = len(sentence)
        np.testing.assert_allclose(layers[0, :, :n_proj], ref["word_emb"][k, :n], rtol=0, atol=ATOL)
        np.testing.assert_allclose(layers[0, :, n_proj:], ref["word_emb"][k, :n], rtol=0, atol=ATOL)
        np.testing.assert_allclose(layers[1], ref["lstm_outputs1"][k, :n], rtol=0, atol=ATOL)
        np.testing.assert_allclose(layers[2], ref["lstm_outputs2"][k, :n], rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", MODULES)
def test_load_bilm_gives_the_modules_layers(name):
    bilm = load_bilm(ROOT / name)
    assert model_layout(ROOT / name).format == TFHUB_FILES.name
    assert model_options(ROOT / name) == bilm.options
    _assert_layers(bilm.embed(SENTENCES), _reference(name), bilm.options.projection_dim)


@pytest.mark.parametrize("file_name", ["elmo_ru-news.tar.gz", "3"])
def test_a_module_as_its_publishers_tar_gz_loads(tmp_path, file_name):
    """TF-Hub modules are distributed as tar.gz (Google's compressed URL gives a file without a suffix)."""
    archive = tmp_path / file_name
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ROOT / "dp-1shard", arcname="module")
    bilm = load_bilm(archive)
    assert model_layout(archive).format == TFHUB_FILES.name
    _assert_layers(bilm.embed(SENTENCES), _reference("dp-1shard"), bilm.options.projection_dim)


@pytest.mark.parametrize("clip", ["cell_clip", "proj_clip"])
def test_the_fixtures_clip(clip):
    """Without either clip the same weights give other layers: both clips are exercised above."""
    bilm = load_bilm(ROOT / MODULES[0])
    options = dataclasses.replace(bilm.options, lstm=dataclasses.replace(bilm.options.lstm, **{clip: None}))
    unclipped = BiLM(options)
    unclipped.load_state_dict(bilm.state_dict())
    top = [layers[2] for layers in unclipped.eval().embed(SENTENCES)]
    ref = _reference(MODULES[0])["lstm_outputs2"]
    assert max(np.abs(t - ref[k, : len(t)]).max() for k, t in enumerate(top)) > 0.1


@pytest.mark.parametrize("name", MODULES)
def test_the_published_mix_gives_elmo_and_default(name):
    bilm = load_bilm(ROOT / name)
    mix = bilm.published_mix
    assert mix == published_mix_of(ROOT / name) and len(mix.weights) == 3
    ref = _reference(name)
    s = softmax(np.asarray(mix.weights))
    for k, layers in enumerate(bilm.embed(SENTENCES)):
        mixed = np.tensordot(s, layers, axes=1)
        np.testing.assert_allclose(mix.gamma * mixed, ref["elmo"][k, : len(SENTENCES[k])], rtol=0, atol=ATOL)
        np.testing.assert_allclose(mixed.mean(axis=0), ref["default"][k], rtol=0, atol=ATOL)


def _assert_elmo(docs, ref):
    for k, doc in enumerate(docs):
        np.testing.assert_allclose(doc._.elmo["vectors"], ref["elmo"][k, : len(doc)], rtol=0, atol=ATOL)


def test_a_spacy_pipeline_reads_the_module_and_keeps_its_mix_when_saved(tmp_path):
    """`BiLM.v2 path = DIR`, the mix started from the module; the module's mix is saved with the biLM,
    so the loaded pipeline has it where the module is gone, and DocBin keeps the mixed vectors."""
    module = shutil.copytree(ROOT / "google-2shards", tmp_path / "module")
    nlp = spacy.blank("xx")
    nlp.add_pipe(
        "elmo",
        config={
            "model": {"@architectures": "spacy-elmo.BiLM.v2", "path": str(module)},
            "pooling": {"@layers": "spacy-elmo.ScalarMix.v2", "start_from": str(module), "trainable": False},
            **EXACT_LAYERS,
        },
    )
    nlp.initialize()
    ref = _reference("google-2shards")
    published = published_mix_of(module)
    docs = [nlp(Doc(nlp.vocab, words=words)) for words in SENTENCES]
    _assert_layers([doc._.elmo["layers"] for doc in docs], ref, 16)
    _assert_elmo(docs, ref)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(module)
    loaded = spacy.load(tmp_path / "pipeline")
    bilm = get_bilm(loaded.get_pipe("elmo").model)
    assert isinstance(bilm, TfHubBiLM) and bilm.published_mix == published
    docs = [loaded(Doc(loaded.vocab, words=words)) for words in SENTENCES]
    _assert_elmo(docs, ref)
    restored = DocBin(store_user_data=True, docs=docs).to_bytes()
    _assert_elmo(list(DocBin().from_bytes(restored).get_docs(loaded.vocab)), ref)


def test_a_serialized_mix_does_not_read_the_module_again(tmp_path):
    """A head's mix is saved with the head's model: loading it needs the module no more."""
    module = shutil.copytree(ROOT / "dp-1shard", tmp_path / "module")
    layers = load_bilm(module).embed(SENTENCES)
    mix = build_scalar_mix_v2(start_from=str(module))
    mix.initialize(X=layers)
    expected = mix.predict(layers)
    shutil.rmtree(module)
    loaded = build_scalar_mix_v2(start_from=str(module)).from_bytes(mix.to_bytes())
    for got, want in zip(loaded.predict(layers), expected):
        np.testing.assert_array_equal(got, want)


def test_start_from_is_exclusive_with_weights_and_needs_a_module(tmp_path):
    with pytest.raises(ElmoError, match="either `weights` or `start_from`"):
        build_scalar_mix_v2(weights=[0.0, 0.0, 0.0], start_from=str(ROOT / MODULES[0]))
    with pytest.raises(InputFileError, match="is neither a TF-Hub module directory .* nor an archive of one"):
        published_mix_of(tmp_path)


def test_start_from_takes_a_modules_archive(tmp_path):
    """As its publishers distribute it: a tar.gz with the module in a folder."""
    archive = tmp_path / "elmo_ru-news.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ROOT / "dp-1shard", arcname="module")
    mix = build_scalar_mix_v2(start_from=str(archive))
    mix.initialize()
    published = published_mix_of(ROOT / "dp-1shard")
    assert mix_summary(mix)["gamma"] == pytest.approx(published.gamma)
    np.testing.assert_allclose(mix_summary(mix)["weights"], softmax(np.asarray(published.weights)), rtol=1e-6)


def test_start_from_a_model_without_a_mix_fails_at_initialize():
    """Not at the first doc: `nlp.initialize()` reads the module's mix."""
    nlp = spacy.blank("xx")
    nlp.add_pipe(
        "elmo",
        config={
            "model": {"@architectures": "spacy-elmo.BiLM.v2", "path": str(ROOT / "dp-1shard")},
            "pooling": {"@layers": "spacy-elmo.ScalarMix.v2", "start_from": str(FIXTURES / "elmo-bilm-tf")},
        },
    )
    with pytest.raises(InputFileError, match="only TF-Hub modules publish a trained layer mix"):
        nlp.initialize()


@pytest.mark.parametrize("name", MODULES)
def test_the_fixtures_have_both_signatures_graph_states(name):
    """Each signature's copy of the biLM graph keeps its LSTM states (`bilm/` and `bilm_1/`)."""
    entries = TensorBundle(ROOT / name / "variables" / "variables.index").entries
    assert {"bilm/Variable", "bilm_1/Variable"} <= set(entries)


@pytest.mark.parametrize(
    "extra, accepted",
    [("bilm_2/Variable_3", True), ("bilm_1/Variable_x", False), ("bilm_1/Unknown", False), ("Unknown", False)],
)
def test_only_the_graph_copies_states_are_accepted_beside_the_weights(extra, accepted):
    bundle = TensorBundle(ROOT / "dp-1shard" / "variables" / "variables.index")
    bundle.entries[extra] = dataclasses.replace(bundle.entries["bilm/Variable"], name=extra)
    if accepted:
        assert isinstance(bilm_from_bundle(bundle), TfHubBiLM)
    else:
        with pytest.raises(InputFileError, match=f"variables this reader does not use: {extra}"):
            bilm_from_bundle(bundle)


def test_a_module_without_the_bilm_names_the_variable(tmp_path):
    module = shutil.copytree(ROOT / "dp-1shard", tmp_path / "module")
    shutil.copy(ROOT / "dtypes" / "variables.index", module / "variables" / "variables.index")
    with pytest.raises(InputFileError, match="has no variable 'bilm/char_embed'"):
        load_bilm(module)


def test_shapes_no_biLM_can_have_are_refused_as_an_options_file_would_be():
    bundle = TensorBundle(ROOT / "dp-1shard" / "variables" / "variables.index")
    entry = bundle.entries["bilm/char_embed"]
    bundle.entries["bilm/char_embed"] = dataclasses.replace(entry, shape=(300, *entry.shape[1:]))
    with pytest.raises(InputFileError, match=r"TF-Hub module .*dp-1shard: .*n_characters"):
        options_from_bundle(bundle)
