"""`fill_elmo_config` on configs as `spacy init config` writes them: every head with a tok2vec listens to
`elmo` (or the shared tok2vec does), the tok2vec goes or stays as asked, the model, `frozen` and the GPU
allocator are what was asked."""

import inspect
from typing import Any, Dict, Iterator, List

import pytest
from confection import Config
from spacy.cli.benchmark_speed import benchmark_speed_cli
from spacy.cli.init_config import init_config
from spacy.util import registry
from thinc.api import Model

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.sources import DEFAULT_MODEL
from spacy_elmo.pipeline.fill_config import (
    GPU_ALLOCATOR,
    MIX_DROPOUT,
    MIX_LOGGER,
    NLP_BATCH_SIZE,
    config_text,
    fill_elmo_config,
    untouched_components,
)
from tests.support.paths import CONFIGS, REPO, TINY_MODEL
from tests.support.pipelines import textcat_of

HEADS = ["tagger", "morphologizer", "parser", "ner"]


def spacy_config(pipeline: List[str], optimize: str = "efficiency") -> Any:
    return init_config(lang="en", pipeline=pipeline, optimize=optimize, gpu=False, silent=True)


def embed_of(config: Any, head: str) -> Dict[str, Any]:
    return config["components"][head]["model"]["tok2vec"]["embed"]


@pytest.mark.parametrize(
    "pipeline",
    [HEADS, ["ner"], ["tagger", "spancat"], ["span_finder", "trainable_lemmatizer"], ["entity_linker"]],
)
def test_instead_gives_every_head_its_listener_beside_the_hash_embeddings(pipeline):
    base = spacy_config(pipeline)
    filled = fill_elmo_config(base)
    tok2vec = base.interpolate()["components"]["tok2vec"]["model"]
    assert filled["nlp"]["pipeline"] == ["elmo", *pipeline]
    assert filled["components"]["elmo"]["factory"] == "elmo"
    for head in pipeline:
        embed = embed_of(filled, head)
        assert embed["@architectures"] == "spacy-elmo.ElmoListener.v1" and embed["upstream"] == "elmo"
        assert embed["extra_features"] == tok2vec["embed"] and embed["width"] == tok2vec["encode"]["width"]
        assert embed["mix"]["@layers"] == "spacy-elmo.ScalarMix.v2"
        assert embed["mix"]["dropout"] == MIX_DROPOUT.get(head, 0.0)
        assert filled["components"][head]["model"]["tok2vec"]["encode"] == tok2vec["encode"]
    assert "tok2vec" not in filled["components"]  # nothing listens to it any more


@pytest.mark.parametrize("architecture", ["spacy.TextCatEnsemble.v2", "spacy.TextCatCNN.v2", "spacy.TextCatReduce.v1"])
@pytest.mark.parametrize("factory", ["textcat", "textcat_multilabel"])
def test_a_textcat_of_any_architecture_with_a_tok2vec_is_found_by_walking_its_model(factory, architecture):
    base = spacy_config([factory], optimize="accuracy")
    textcat_of(architecture, factory)(base)
    filled = fill_elmo_config(base, tok2vec="beside")
    assert filled["components"][factory]["model"]["@architectures"] == architecture
    listener = filled["components"][factory]["model"]["tok2vec"]
    assert listener["@architectures"] == "spacy-elmo.ElmoListener.v1"
    assert listener["extra_features"]["@architectures"] == "spacy.Tok2VecListener.v1"


@registry.architectures("spacy-elmo-tests.Wrapped.v1")
def wrapped(inner: Model) -> Model:
    """A head's model one level down in another block, as a new or custom architecture may hold it."""
    return inner


def test_a_tok2vec_anywhere_in_a_heads_model_is_found():
    base = spacy_config(["tagger"])
    model = base["components"]["tagger"]["model"]
    base["components"]["tagger"]["model"] = {"@architectures": "spacy-elmo-tests.Wrapped.v1", "inner": model}
    filled = fill_elmo_config(base)
    assert filled["components"]["tagger"]["model"]["inner"]["tok2vec"]["embed"]["upstream"] == "elmo"


def test_a_component_without_a_tok2vec_stays_as_it_is_and_is_named():
    base = spacy_config(["tagger", "textcat"])  # efficiency: the textcat is a TextCatBOW alone
    filled = fill_elmo_config(base)
    assert filled["components"]["textcat"]["model"] == base["components"]["textcat"]["model"]
    assert untouched_components(base) == {"textcat": "spacy.TextCatBOW.v3"}
    assert untouched_components(spacy_config(["tagger"])) == {}
    base["components"]["sentencizer"] = {"factory": "sentencizer"}
    base["nlp"]["pipeline"].append("sentencizer")
    assert untouched_components(base) == {"textcat": "spacy.TextCatBOW.v3"}  # rule-based: not named


def test_a_hash_embed_cnn_becomes_the_tok2vec_spacy_builds_from_it_with_elmo_inside():
    base = spacy_config(["senter"])  # not in spaCy's template: its default model, a HashEmbedCNN.v2
    cnn = base["components"]["senter"]["model"]["tok2vec"]
    assert cnn["@architectures"] == "spacy.HashEmbedCNN.v2"
    filled = fill_elmo_config(base)
    tok2vec = filled["components"]["senter"]["model"]["tok2vec"]
    assert tok2vec["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    rebuilt = {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": tok2vec["embed"]["extra_features"],
        "encode": tok2vec["encode"],
    }
    original, converted = (registry.resolve({"model": block})["model"] for block in (cnn, rebuilt))
    original.initialize(), converted.initialize()
    assert [(node.name, node.get_dim("nO")) for node in original.walk() if node.has_dim("nO")] == [
        (node.name, node.get_dim("nO")) for node in converted.walk() if node.has_dim("nO")
    ]
    assert [p.shape for node in original.walk() for p in map(node.get_param, node.param_names)] == [
        p.shape for node in converted.walk() for p in map(node.get_param, node.param_names)
    ]


def test_shared_feeds_the_tok2vec_component_the_heads_listen_to():
    base = spacy_config(["tagger", "ner", "spancat"])
    filled = fill_elmo_config(base, shared=True)
    assert filled["nlp"]["pipeline"] == ["elmo", "tok2vec", "tagger", "ner", "spancat"]
    shared = filled["components"]["tok2vec"]["model"]
    original = base.interpolate()["components"]["tok2vec"]["model"]
    assert shared["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    assert shared["embed"]["extra_features"] == original["embed"] and shared["encode"] == original["encode"]
    for head in ("tagger", "ner", "spancat"):
        assert filled["components"][head]["model"]["tok2vec"] == base["components"][head]["model"]["tok2vec"]
    assert len(list(_find(filled["components"], "spacy-elmo.ElmoListener.v1"))) == 1
    beside = fill_elmo_config(base, shared=True, tok2vec="beside")["components"]["tok2vec"]["model"]
    assert beside["@architectures"] == "spacy-elmo.ElmoListener.v1" and beside["extra_features"] == original


def test_shared_gives_a_head_with_its_own_tok2vec_its_own_mix():
    base = spacy_config(["tagger", "senter"])
    filled = fill_elmo_config(base, shared=True)
    assert filled["components"]["tok2vec"]["model"]["embed"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    assert embed_of(filled, "senter")["@architectures"] == "spacy-elmo.ElmoListener.v1"


def _find(block: Any, architecture: str) -> Iterator[Any]:
    if isinstance(block, dict):
        if block.get("@architectures") == architecture:
            yield block
        for value in block.values():
            yield from _find(value, architecture)


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
    assert elmo["frozen"] is False and filled.interpolate()["components"]["elmo"]["model"]["model"] == str(TINY_MODEL)
    assert filled["system"]["gpu_allocator"] == "pytorch"
    named = fill_elmo_config(spacy_config(["tagger"]), model="hf:org/tiny@v1")
    assert named["paths"]["elmo_model"] == "hf:org/tiny@v1"
    assert fill_elmo_config(spacy_config(["tagger"]))["paths"]["elmo_model"] == DEFAULT_MODEL


def test_the_model_is_named_as_in_the_shipped_configs():
    """One BiLM.v3 `model` read from `[paths] elmo_model`, so `--paths.elmo_model` works on both."""
    shipped = Config().from_disk(CONFIGS / "tagger_elmo.cfg", interpolate=False)["components"]["elmo"]["model"]
    filled = fill_elmo_config(spacy_config(["tagger"]))["components"]["elmo"]["model"]
    assert filled["@architectures"] == shipped["@architectures"] == "spacy-elmo.BiLM.v3"
    assert filled["model"] == shipped["model"] == "${paths.elmo_model}"
    chosen = spacy_config(["tagger"])
    chosen["system"]["gpu_allocator"] = "cupy"
    assert fill_elmo_config(chosen)["system"]["gpu_allocator"] == "cupy"  # the user's choice stays


@pytest.mark.parametrize(
    "pipeline, options, fragment",
    [
        (["textcat"], {}, "no component in .nlp. pipeline .* has a tok2vec .*: tagger, morphologizer, parser"),
        (["tagger"], {"model": "no-such-model"}, "no ELMo model 'no-such-model'"),
        (["tagger"], {"model": "hf:no-repo"}, "hf:ORG/REPO"),
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
    base["components"]["tok2vec"]["model"] = {"@architectures": "spacy.Tok2Vec.v2", "embed": {}, "width": 96}
    base["components"]["tagger"]["model"]["tok2vec"]["width"] = 96
    with pytest.raises(ElmoError, match=r"\[components.tok2vec.model\] is 'spacy.Tok2Vec.v2', not .*--tok2vec beside"):
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
    assert fill_elmo_config(base)["nlp"]["batch_size"] == NLP_BATCH_SIZE
    base["nlp"]["batch_size"] = 256
    assert fill_elmo_config(base)["nlp"]["batch_size"] == 256


def test_spacy_benchmark_speed_with_its_defaults_embeds_a_few_minutes_of_docs():
    """`spacy benchmark speed` embeds its default count of batches of `[nlp] batch_size` docs; 1,600 docs
    of 10 EWT sentences are a few minutes on 2 busy cores (docs/results.md)."""
    batches = inspect.signature(benchmark_speed_cli).parameters["n_batches"].default.default
    assert batches * NLP_BATCH_SIZE <= 1600


@pytest.mark.parametrize(
    "logger, progress",
    [
        ({"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}, None),
        ({"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": True}, "train"),
        ({"@loggers": "spacy.ConsoleLogger.v3", "progress_bar": "eval"}, "eval"),
    ],
)
def test_the_console_logger_becomes_the_mix_logger_that_releases_the_cache(logger, progress):
    base = spacy_config(["tagger"])
    base["training"]["logger"] = logger
    assert fill_elmo_config(base)["training"]["logger"] == {"@loggers": MIX_LOGGER, "progress_bar": progress}


def test_a_logger_of_another_kind_stays():
    base = spacy_config(["tagger"])
    base["training"]["logger"] = {"@loggers": "spacy.ChainLogger.v1", "logger1": None}
    assert fill_elmo_config(base)["training"]["logger"]["@loggers"] == "spacy.ChainLogger.v1"


@pytest.mark.parametrize(
    "path", sorted([*CONFIGS.glob("*_elmo.cfg"), *REPO.glob("projects/*/configs/*_elmo_*.cfg")]), ids=str
)
def test_shipped_elmo_configs_batch_as_filled_ones(path):
    assert Config().from_disk(path, interpolate=False)["nlp"]["batch_size"] == NLP_BATCH_SIZE


def test_config_text_writes_sections_in_spacys_order_each_before_its_subsections():
    config = fill_elmo_config(spacy_config(["tagger", "ner"]), model=str(TINY_MODEL))
    text = config_text(config)
    assert Config().from_str(text, interpolate=False) == config
    sections = [line[1:-1] for line in text.splitlines() if line.startswith("[")]
    tops = [section for section in sections if "." not in section]
    assert tops == ["paths", "system", "nlp", "components", "corpora", "training", "pretraining", "initialize"]
    for i, section in enumerate(sections[1:], 1):  # a subsection comes right after its parent's block
        parent = section.rpartition(".")[0]
        assert not parent or sections[i - 1] == parent or sections[i - 1].startswith(parent + "."), section
