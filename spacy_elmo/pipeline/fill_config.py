"""A config from `spacy init config` turned into one whose heads learn from an `elmo` component: what
`spacy init fill-elmo` runs, as spacy-curated-transformers' `init fill-curated-transformer` fills its
pipe in a config spaCy wrote.

Every tagger, morphologizer, parser and NER head gets an `ElmoListener` with its own scalar mix, and
the `elmo` component comes first. With `tok2vec="instead"` (the shipped `configs/*_elmo.cfg`, the
paper's `[x; ELMo]`) the head's Tok2Vec embeds each token as its mix beside the tok2vec's own
embeddings, projected to the tok2vec's width, into the tok2vec's encoder; a `tok2vec` component no
component listens to any more is removed. With `tok2vec="beside"` the head keeps its tok2vec (its
listener of the shared component, or its own model) as the listener's `extra_features`. spaCy's
`[nlp] batch_size` becomes the shipped configs' (NLP_BATCH_SIZE).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterator, List, Optional, Tuple

from confection import Config, ConfigValidationError

from ..errors import InputError
from ..models import reference_to

HEAD_FACTORIES = ("tagger", "morphologizer", "parser", "ner")
ELMO_NAME = "elmo"
TOK2VEC_LISTENER = "spacy.Tok2VecListener.v1"
ELMO_LISTENER = "spacy-elmo.ElmoListener.v1"
# The mix's own dropout, as in the shipped configs: tuned on dev for NER (projects/downstream), the
# parser taken as NER's transition-based sibling.
MIX_DROPOUT = {"tagger": 0.1, "morphologizer": 0.1, "parser": 0.0, "ner": 0.0}
MIX_L2 = 0.001
# spaCy's allocator for torch-backed pipelines: CuPy then takes its memory from torch's pool instead of
# keeping a second one; spaCy applies it only when training on a GPU, so a CPU run is unchanged.
GPU_ALLOCATOR = "pytorch"
TOK2VEC_MODES = ("instead", "beside")
# Docs per batch of `nlp.pipe`, which `spacy benchmark speed`, `apply` and `evaluate` take from [nlp]:
# spaCy's 1000 is 30 batches of the biLM's work before `benchmark speed` prints a figure; the shipped
# configs' 64 (spacy-transformers' set 128) keeps a batch to a second or two on a CPU, within a few
# per cent of the best words/s (benchmarks/bench_batch_size.py).
NLP_BATCH_SIZE = 64
SPACY_BATCH_SIZE = 1000


def fill_elmo_config(
    base: Config,
    model: Optional[str] = None,
    frozen: bool = True,
    tok2vec: str = "instead",
) -> Config:
    """`base` (uninterpolated, as `spacy init config` writes it) with an `elmo` component first and an
    ElmoListener in every head, filled with every default as `spacy init fill-config` fills.

    model: a bundled or catalogue model's name, or a model directory or archive; None: the bundled default.
    frozen: the biLM gets no gradient (False fine-tunes it through the listeners).
    tok2vec: "instead" or "beside" the heads' tok2vec (module docstring).
    """
    if tok2vec not in TOK2VEC_MODES:
        raise InputError(f"--tok2vec is 'instead' or 'beside', not {tok2vec!r}")
    config = Config(base).copy()
    components: Dict[str, Any] = config.get("components", {})
    pipeline: List[str] = list(config.get("nlp", {}).get("pipeline", []))
    if ELMO_NAME in components or any(_find_listeners(components, ELMO_LISTENER)):
        raise InputError(
            f"the config already has an `{ELMO_NAME}` component or ELMo listeners; fill-elmo fills a config "
            "from `python -m spacy init config` (leave `elmo` out of its --pipeline)"
        )
    heads = [name for name in pipeline if components.get(name, {}).get("factory") in HEAD_FACTORIES]
    if not heads:
        raise InputError(
            f"no {', '.join(HEAD_FACTORIES)} component in [nlp] pipeline ({pipeline}): ELMo feeds those heads; "
            "make the config with e.g. `python -m spacy init config config.cfg --pipeline tagger,ner`"
        )
    # Blocks copied out of a tok2vec that may go refer to it (`${components.tok2vec...}`): read them with
    # every reference already replaced by its value.
    try:
        interpolated = Config(base).interpolate()["components"]
    except ConfigValidationError as err:
        raise InputError(f"the config's references do not resolve, so it cannot be filled: {err}") from None
    for name in heads:
        dropout = MIX_DROPOUT[components[name]["factory"]]
        components[name]["model"]["tok2vec"] = _elmo_tok2vec(name, components, interpolated, tok2vec, dropout)
    if tok2vec == "instead":
        pipeline = _drop_unheard_tok2vecs(config, pipeline)
    config["nlp"]["pipeline"] = [ELMO_NAME, *pipeline]
    components[ELMO_NAME] = {"factory": "elmo", "frozen": frozen, "model": _bilm_config(model)}
    if config.get("system", {}).get("gpu_allocator") is None:
        config.setdefault("system", {})["gpu_allocator"] = GPU_ALLOCATOR
    if config["nlp"].get("batch_size", SPACY_BATCH_SIZE) == SPACY_BATCH_SIZE:  # a size of the user's own stays
        config["nlp"]["batch_size"] = NLP_BATCH_SIZE
    return _filled(config)


def _bilm_config(model: Optional[str]) -> Dict[str, Any]:
    """`spacy-elmo.BiLM.v2` naming `model` as `path`, `options` or `name`; checked now (an unknown
    name fails here, with where names come from)."""
    block: Dict[str, Any] = {"@architectures": "spacy-elmo.BiLM.v2"}
    if model is not None:
        block.update(reference_to(model).describe())
    return block


def _elmo_tok2vec(
    head: str, components: Dict[str, Any], interpolated: Dict[str, Any], mode: str, mix_dropout: float
) -> Dict[str, Any]:
    own = components[head]["model"]["tok2vec"]
    if mode == "beside":
        width = own.get("width") or own.get("encode", {}).get("width")
        if width is None:
            raise InputError(
                f"[components.{head}.model.tok2vec] ({own.get('@architectures')}) names no width to project "
                "ELMo's mix and its features to; fill a config from `spacy init config`, or use --tok2vec instead"
            )
        return _listener(copy.deepcopy(own), width, mix_dropout)
    source, where = _tok2vec_model(head, interpolated)
    if source.get("@architectures") != "spacy.Tok2Vec.v2" or "embed" not in source or "encode" not in source:
        raise InputError(
            f"[{where}] is {source.get('@architectures')!r}, not a spacy.Tok2Vec.v2 with `embed` and `encode`: "
            f"--tok2vec instead puts ELMo beside its embeddings, so {head} needs one; --tok2vec beside keeps "
            "any tok2vec as it is"
        )
    width = source["encode"]["width"]
    return {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": _listener(copy.deepcopy(source["embed"]), width, mix_dropout),
        "encode": copy.deepcopy(source["encode"]),
    }


def _listener(extra_features: Dict[str, Any], width: int, mix_dropout: float) -> Dict[str, Any]:
    return {
        "@architectures": ELMO_LISTENER,
        "upstream": ELMO_NAME,
        "width": width,
        "mix": {"@layers": "spacy-elmo.ScalarMix.v1", "dropout": mix_dropout, "l2": MIX_L2},
        "extra_features": extra_features,
    }


def _tok2vec_model(head: str, components: Dict[str, Any]) -> Tuple[Dict[str, Any], str]:
    """The model a head's tok2vec is, and its config section: its own, or the shared component's it
    listens to."""
    own = components[head]["model"]["tok2vec"]
    if own.get("@architectures") != TOK2VEC_LISTENER:
        return own, f"components.{head}.model.tok2vec"
    upstream = own.get("upstream", "*")
    shared = [
        name for name, block in components.items() if block.get("factory") == "tok2vec" and upstream in ("*", name)
    ]
    if len(shared) != 1:
        raise InputError(
            f"{head} listens to tok2vec component {upstream!r}, but the config has {len(shared)} such components "
            f"({', '.join(shared) or 'none'}); name one in [components.{head}.model.tok2vec] upstream"
        )
    return components[shared[0]]["model"], f"components.{shared[0]}.model"


def _find_listeners(block: Any, architecture: str) -> Iterator[Dict[str, Any]]:
    if isinstance(block, dict):
        if block.get("@architectures") == architecture:
            yield block
        for value in block.values():
            yield from _find_listeners(value, architecture)


def _drop_unheard_tok2vecs(config: Config, pipeline: List[str]) -> List[str]:
    """The pipeline without the tok2vec components no listener names any more (nor "*")."""
    components = config["components"]
    heard = {listener.get("upstream", "*") for listener in _find_listeners(components, TOK2VEC_LISTENER)}
    unheard = {
        name for name in pipeline if components.get(name, {}).get("factory") == "tok2vec" and not heard & {name, "*"}
    }
    for name in unheard:
        del components[name]
    training = config.get("training", {})
    for key in ("frozen_components", "annotating_components"):
        if isinstance(training.get(key), list):
            training[key] = [name for name in training[key] if name not in unheard]
    return [name for name in pipeline if name not in unheard]


def _filled(config: Config) -> Config:
    """Every default filled and the result validated, as `spacy init fill-config` does."""
    from spacy import util

    nlp = util.load_model_from_config(config, auto_fill=True, validate=False)
    return util.load_model_from_config(nlp.config).config
