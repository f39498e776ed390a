"""`fill_elmo_config` on configs as `spacy init config` writes them: every head listens to `elmo`, the
tok2vec goes or stays as asked, the model, `frozen` and the GPU allocator are what was asked."""

from typing import Any, Dict, List

import pytest
from confection import Config
from spacy.cli.init_config import init_config

from spacy_elmo.errors import ElmoError
from spacy_elmo.pipeline.fill_config import GPU_ALLOCATOR, NLP_BATCH_SIZE, fill_elmo_config
from tests.support.paths import CONFIGS, REPO, TINY_MODEL

HEADS = ["tagger", "morphologizer", "parser", "ner"]


def spacy_config(pipeline: List[str]) -> Any:
    return init_config(lang="en", pipeline=pipeline, optimize="efficiency", gpu=False, silent=True)


def embed_of(config: Any, head: str) -> Dict[str, Any]:
    return config["components"][head]["model"]["tok2vec"]["embed"]


@pytest.mark.parametrize("pipeline", [HEADS, ["ner"], ["tagger", "spancat"]])
def test_instead_gives_every_head_its_listener_beside_the_hash_embeddings(pipeline):
    base = spacy_config(pipeline)
    filled = fill_elmo_config(base)
    tok2vec = base.interpolate()["components"]["tok2vec"]["model"]
    assert filled["nlp"]["pipeline"][0] == "elmo"
    assert filled["components"]["elmo"]["factory"] == "elmo"
    heads = [name for name in pipeline if name in HEADS]
    for head in heads:
        embed = embed_of(filled, head)
        assert embed["@architectures"] == "spacy-elmo.ElmoListener.v1" and embed["upstream"] == "elmo"
        assert embed["extra_features"] == tok2vec["embed"] and embed["width"] == tok2vec["encode"]["width"]
        assert embed["mix"]["@layers"] == "spacy-elmo.ScalarMix.v1"
        assert filled["components"][head]["model"]["tok2vec"]["encode"] == tok2vec["encode"]
    # the spancat still listens to the shared tok2vec, which stays; with heads only it goes
    assert ("tok2vec" in filled["components"]) == ("spancat" in pipeline)
    assert ("tok2vec" in filled["nlp"]["pipeline"]) == ("spancat" in pipeline)


def test_beside_keeps_the_shared_tok2vec_as_the_listeners_extra_features():
    base = spacy_config(["tagger", "parser"])
    filled = fill_elmo_config(base, tok2vec="beside")
    assert filled["nlp"]["pipeline"] == ["elmo", "tok2vec", "tagger", "parser"]
    for head in ("tagger", "parser"):
        listener = filled["components"][head]["model"]["tok2vec"]
        assert listener["@architectures"] == "spacy-elmo.ElmoListener.v1"
        assert listener["extra_features"]["@architectures"] == "spacy.Tok2VecListener.v1"
        assert listener["width"] == base["components"][head]["model"]["tok2vec"]["width"]


def test_model_frozen_and_allocator():
    filled = fill_elmo_config(spacy_config(["tagger"]), model=str(TINY_MODEL), frozen=False)
    elmo = filled["components"]["elmo"]
    assert elmo["frozen"] is False and elmo["model"]["path"] == str(TINY_MODEL)
    assert filled["system"]["gpu_allocator"] == "pytorch"
    assert fill_elmo_config(spacy_config(["tagger"]), model="fixture-tiny")["components"]["elmo"]["model"]["name"] == (
        "fixture-tiny"
    )
    chosen = spacy_config(["tagger"])
    chosen["system"]["gpu_allocator"] = "cupy"
    assert fill_elmo_config(chosen)["system"]["gpu_allocator"] == "cupy"  # the user's choice stays


@pytest.mark.parametrize(
    "pipeline, options, fragment",
    [
        (["spancat"], {}, "no tagger, morphologizer, parser, ner component"),
        (["tagger"], {"model": "no-such-model"}, "no ELMo model 'no-such-model'"),
        (["tagger"], {"tok2vec": "around"}, "--tok2vec is 'instead' or 'beside', not 'around'"),
    ],
)
def test_what_cannot_be_filled_is_named(pipeline, options, fragment):
    with pytest.raises(ElmoError, match=fragment):
        fill_elmo_config(spacy_config(pipeline), **options)


def test_a_config_whose_references_do_not_resolve_is_named():
    base = spacy_config(["tagger"])
    del base["components"]["tok2vec"]["model"]["encode"]
    with pytest.raises(ElmoError, match="the config's references do not resolve"):
        fill_elmo_config(base)


def test_instead_needs_embeddings_and_an_encoder_to_put_elmo_between():
    base = spacy_config(["tagger"])
    base["components"]["tok2vec"]["model"] = {"@architectures": "spacy.HashEmbedCNN.v2", "width": 96}
    base["components"]["tagger"]["model"]["tok2vec"]["width"] = 96
    with pytest.raises(ElmoError, match=r"\[components.tok2vec.model\] is 'spacy.HashEmbedCNN.v2'.*--tok2vec beside"):
        fill_elmo_config(base)


def test_a_filled_config_is_not_filled_twice():
    with pytest.raises(ElmoError, match="already has an `elmo` component"):
        fill_elmo_config(fill_elmo_config(spacy_config(["tagger"])))


@pytest.mark.parametrize("name", ["tagger_elmo.cfg", "ner_elmo.cfg", "tagger_ner_elmo.cfg"])
def test_shipped_training_configs_use_the_same_allocator(name):
    shipped = Config().from_disk(CONFIGS / name, interpolate=False)
    assert shipped["system"]["gpu_allocator"] == GPU_ALLOCATOR == "pytorch"
    assert shipped["training"]["gpu_allocator"] == "${system.gpu_allocator}"


def test_a_filled_config_batches_as_the_shipped_ones_unless_the_user_chose():
    base = spacy_config(["tagger"])
    assert base["nlp"]["batch_size"] == 1000  # spaCy's: `spacy benchmark speed` would run 30 of them
    assert fill_elmo_config(base)["nlp"]["batch_size"] == NLP_BATCH_SIZE == 64
    base["nlp"]["batch_size"] = 256
    assert fill_elmo_config(base)["nlp"]["batch_size"] == 256


@pytest.mark.parametrize(
    "path", sorted([*CONFIGS.glob("*_elmo.cfg"), *REPO.glob("projects/*/configs/*_elmo_*.cfg")]), ids=str
)
def test_shipped_elmo_configs_batch_as_filled_ones(path):
    assert Config().from_disk(path, interpolate=False)["nlp"]["batch_size"] == NLP_BATCH_SIZE
