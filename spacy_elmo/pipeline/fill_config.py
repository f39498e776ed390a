"""A config from `spacy init config` turned into one whose heads learn from an `elmo` component: what
`spacy init fill-elmo` runs, as spacy-curated-transformers' `init fill-curated-transformer` fills its
pipe in a config spaCy wrote.

A head is any component whose model holds a tok2vec (a block of one of `TOK2VEC_ARCHITECTURES`), found
by walking its model's config, so heads spaCy adds later are filled too; a component with none (e.g.
a textcat of `spacy.TextCatBOW.v3` alone) stays as it is (`untouched_components`). The `elmo`
component comes first. Per head (the paper's task-specific s_j, gamma), every head's tok2vec gets an
`ElmoListener` with its own scalar mix. `shared` (spaCy's default shape, as spacy-transformers' one
transformer the heads listen to) gives the mix to the `tok2vec` component instead, and its listening
heads stay as they are.

With `tok2vec="instead"` (the shipped `configs/*_elmo.cfg`, the paper's `[x; ELMo]`) the tok2vec
embeds each token as its mix beside its own embeddings, projected to its width, into its encoder (a
`spacy.HashEmbedCNN.v2` is first written as the `spacy.Tok2Vec.v2` it builds); per head, a `tok2vec`
component no component listens to any more is removed. With `tok2vec="beside"` the tok2vec stays as
the listener's `extra_features`. spaCy's `[nlp] batch_size` becomes the shipped
configs' (NLP_BATCH_SIZE).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from confection import Config, ConfigValidationError

from ..elmo.errors import InputError
from ..elmo.sources import DEFAULT_MODEL, reference_to

ELMO_NAME = "elmo"
BILM = "spacy-elmo.BiLM.v3"
MODEL_PATH = "elmo_model"  # `[paths]`' key for the biLM's `model`, in the shipped configs too
TOK2VEC_LISTENER = "spacy.Tok2VecListener.v1"
HASH_EMBED_CNN = "spacy.HashEmbedCNN.v2"
HASH_EMBED_CNN_SETTINGS = (
    "width",
    "depth",
    "embed_size",
    "window_size",
    "maxout_pieces",
    "subword_features",
    "pretrained_vectors",
)
TOK2VEC = "spacy.Tok2Vec.v2"
# The blocks a head's tok2vec may be: what the walk looks for.
TOK2VEC_ARCHITECTURES = (TOK2VEC_LISTENER, TOK2VEC, HASH_EMBED_CNN)
# The factories `spacy init config` gives a tok2vec, named when a config has no head.
SUPPORTED_HEADS = (
    "tagger, morphologizer, parser, ner, senter, textcat and textcat_multilabel (TextCatEnsemble, TextCatCNN, "
    "TextCatReduce), spancat, spancat_singlelabel, span_finder, trainable_lemmatizer, entity_linker"
)
ELMO_LISTENER = "spacy-elmo.ElmoListener.v1"
# The mix's own dropout, as in the shipped configs: tuned on dev for NER (projects/downstream), the
# parser taken as NER's transition-based sibling, senter and the lemmatizer as the tagger's (the same
# Tagger.v2 model). Other heads and the shared tok2vec: none beyond their own dropout.
MIX_DROPOUT = {"tagger": 0.1, "morphologizer": 0.1, "senter": 0.1, "trainable_lemmatizer": 0.1}
MIX_L2 = 0.001
# spaCy's allocator for torch-backed pipelines: CuPy then takes its memory from torch's pool instead of
# keeping a second one; spaCy applies it only when training on a GPU, so a CPU run is unchanged.
GPU_ALLOCATOR = "pytorch"
TOK2VEC_MODES = ("instead", "beside")
# Docs per batch of `nlp.pipe`, which `spacy benchmark speed` and `evaluate` take from [nlp].
# `benchmark speed` embeds 50 batches of that many docs (after 3 passes over the data) before it prints
# anything: with 128 (spacy-transformers' value) that ran for more than 12 minutes on 2 cores; 32 is a
# quarter of the work for a little over half the words/s of 128 (docs/results.md).
NLP_BATCH_SIZE = 32
MIX_LOGGER = "spacy-elmo.MixLogger.v1"
SPACY_BATCH_SIZE = 1000
# The top sections in the order of spaCy's documented configs (and the shipped ones), each followed by
# its subsections; confection writes sections breadth-first, a head's model far from its component.
SECTION_ORDER = ("paths", "system", "nlp", "components", "corpora", "training", "pretraining", "initialize")
# A key path from a component's section to a tok2vec block in it.
Path = Tuple[str, ...]


def fill_elmo_config(
    base: Config,
    model: Optional[str] = None,
    frozen: bool = True,
    tok2vec: str = "instead",
    shared: bool = False,
) -> Config:
    """`base` (uninterpolated, as `spacy init config` writes it) with an `elmo` component first and an
    ElmoListener in every head's tok2vec, or in the shared one, filled with every default as `spacy init
    fill-config` fills.

    model: a bundled or catalogue model's name, a model directory or archive, or hf:ORG/REPO[@REVISION]
        (`--model`'s reference); None: the bundled default.
    frozen: the biLM gets no gradient (False fine-tunes it through the listeners).
    tok2vec: "instead" or "beside" the heads' tok2vec (module docstring).
    shared: one mix in the `tok2vec` component the heads listen to, instead of one per head.
    """
    if tok2vec not in TOK2VEC_MODES:
        raise InputError(f"--tok2vec is 'instead' or 'beside', not {tok2vec!r}")
    config = Config(base).copy()
    components: Dict[str, Any] = config.get("components", {})
    pipeline: List[str] = list(config.get("nlp", {}).get("pipeline", []))
    if ELMO_NAME in components or any(_find_blocks(components, (ELMO_LISTENER,))):
        raise InputError(
            f"the config already has an `{ELMO_NAME}` component or ELMo listeners; fill-elmo fills a config "
            "from `python -m spacy init config` (leave `elmo` out of its --pipeline)"
        )
    heads = {name: paths for name, paths in _heads(components, pipeline).items() if paths}
    if not heads:
        raise InputError(
            f"no component in [nlp] pipeline ({pipeline}) has a tok2vec for ELMo to feed; the kinds that have "
            f"one: {SUPPORTED_HEADS}. Make the config with e.g. `python -m spacy init config config.cfg "
            "--pipeline tagger,ner`"
        )
    # Blocks copied out of a tok2vec that may go refer to it (`${components.tok2vec...}`): read them with
    # every reference already replaced by its value.
    try:
        interpolated = Config(base).interpolate()["components"]
    except ConfigValidationError as err:
        raise InputError(f"the config's references do not resolve, so it cannot be filled: {err}") from None
    fed = set()
    for name, paths in heads.items():
        for path in paths:
            where = ".".join(("components", name, "model", *path))
            own = _get(components[name]["model"], path)
            if shared and own.get("@architectures") == TOK2VEC_LISTENER:
                upstream = _shared_tok2vec(where, own, components)
                if upstream not in fed:
                    fed.add(upstream)
                    source = interpolated[upstream]["model"]
                    model_where = f"components.{upstream}.model"
                    components[upstream]["model"] = _elmo_tok2vec(source, source, model_where, tok2vec, 0.0)
                if tok2vec == "beside":  # its width may refer into the model that is now extra_features
                    _set(components[name]["model"], path, copy.deepcopy(_get(interpolated[name]["model"], path)))
                continue
            dropout = MIX_DROPOUT.get(components[name]["factory"], 0.0)
            source, source_where = _tok2vec_model(where, _get(interpolated[name]["model"], path), interpolated)
            _set(components[name]["model"], path, _elmo_tok2vec(own, source, source_where, tok2vec, dropout))
    if tok2vec == "instead" and not shared:
        pipeline = _drop_unheard_tok2vecs(config, pipeline)
    config["nlp"]["pipeline"] = [ELMO_NAME, *pipeline]
    components[ELMO_NAME] = {"factory": "elmo", "frozen": frozen, "model": _bilm_config(config, model)}
    if config.get("system", {}).get("gpu_allocator") is None:
        config.setdefault("system", {})["gpu_allocator"] = GPU_ALLOCATOR
    if config["nlp"].get("batch_size", SPACY_BATCH_SIZE) == SPACY_BATCH_SIZE:  # a size of the user's own stays
        config["nlp"]["batch_size"] = NLP_BATCH_SIZE
    _log_mixes(config)
    return _filled(config)


def _log_mixes(config: Config) -> None:
    """spaCy's console logger becomes `spacy-elmo.MixLogger.v1`, the same table plus each mix, whose
    `finalize` releases the frozen-layer cache when the training loop returns (a `spacy.training.loop.train`
    call would otherwise keep it); any other logger (W&B, MLflow, ...) stays."""
    logger = config.setdefault("training", {}).get("logger") or {"@loggers": "spacy.ConsoleLogger.v1"}
    progress = logger.get("progress_bar")
    if logger.get("@loggers") == "spacy.ConsoleLogger.v1":  # progress_bar a bool: True meant the train bar
        progress = "train" if progress else None
    elif logger.get("@loggers") != "spacy.ConsoleLogger.v3":
        return
    config["training"]["logger"] = {"@loggers": MIX_LOGGER, "progress_bar": progress}


def untouched_components(base: Config) -> Dict[str, str]:
    """The trained components of `base`'s pipeline that have no tok2vec for ELMo to feed (nor are one),
    each with its model's architecture: fill-elmo names them, as they stay as they are. Rule-based
    components (no model) are not named: ELMo was never theirs."""
    components: Dict[str, Any] = base.get("components", {})
    pipeline: List[str] = list(base.get("nlp", {}).get("pipeline", []))
    return {
        name: str(components[name]["model"].get("@architectures"))
        for name, paths in _heads(components, pipeline).items()
        if not paths and isinstance(components[name].get("model"), dict)
    }


def _heads(components: Dict[str, Any], pipeline: List[str]) -> Dict[str, List[Path]]:
    """Each pipeline component but the shared tok2vecs -> the paths to the tok2vecs in its model."""
    return {
        name: list(_tok2vec_paths(components[name].get("model", {}), ()))
        for name in pipeline
        if name in components and components[name].get("factory") != "tok2vec"
    }


def _tok2vec_paths(block: Any, path: Path) -> Iterator[Path]:
    """Where `block` holds a tok2vec, outermost first; nothing inside a tok2vec is another one."""
    if not isinstance(block, dict):
        return
    for key, value in block.items():
        if isinstance(value, dict) and value.get("@architectures") in TOK2VEC_ARCHITECTURES:
            yield (*path, key)
        else:
            yield from _tok2vec_paths(value, (*path, key))


def _get(block: Dict[str, Any], path: Path) -> Dict[str, Any]:
    for key in path:
        block = block[key]
    return block


def _set(block: Dict[str, Any], path: Path, value: Dict[str, Any]) -> None:
    _get(block, path[:-1])[path[-1]] = value


def _bilm_config(config: Config, model: Optional[str]) -> Dict[str, Any]:
    """`spacy-elmo.BiLM.v3` reading `model` from `[paths] elmo_model`, as the shipped configs do (so that
    `--paths.elmo_model` works on both); checked now, where the user is (an unknown name fails here,
    with where names come from)."""
    model = DEFAULT_MODEL if model is None else model
    reference_to(model)
    config.setdefault("paths", {})[MODEL_PATH] = model
    return {"@architectures": BILM, "model": f"${{paths.{MODEL_PATH}}}"}


def _elmo_tok2vec(
    own: Dict[str, Any], source: Dict[str, Any], where: str, mode: str, mix_dropout: float
) -> Dict[str, Any]:
    """The tok2vec `own` fed by ELMo: beside it as it is, or inside `source` (the model it is, read
    with its references resolved) between its embeddings and its encoder."""
    if mode == "beside":
        width = own.get("width") or own.get("encode", {}).get("width")
        if width is None:
            raise InputError(
                f"[{where}] ({own.get('@architectures')}) names no width to project ELMo's mix and its features "
                "to; fill a config from `spacy init config`, or use --tok2vec instead"
            )
        return _listener(copy.deepcopy(own), width, mix_dropout)
    if source.get("@architectures") == HASH_EMBED_CNN:
        source = _as_tok2vec(source, where)
    if source.get("@architectures") != TOK2VEC or "embed" not in source or "encode" not in source:
        raise InputError(
            f"[{where}] is {source.get('@architectures')!r}, not a {TOK2VEC} with `embed` and `encode` nor a "
            f"{HASH_EMBED_CNN}: --tok2vec instead puts ELMo beside its embeddings, so it needs them; "
            "--tok2vec beside keeps any tok2vec as it is"
        )
    width = source["encode"]["width"]
    return {
        "@architectures": TOK2VEC,
        "embed": _listener(copy.deepcopy(source["embed"]), width, mix_dropout),
        "encode": copy.deepcopy(source["encode"]),
    }


def _as_tok2vec(cnn: Dict[str, Any], where: str) -> Dict[str, Any]:
    """A `spacy.HashEmbedCNN.v2` block as the `spacy.Tok2Vec.v2` spaCy builds from it
    (`build_hash_embed_cnn_tok2vec`): the same embeddings and encoder, now with a place between them."""
    missing = [key for key in HASH_EMBED_CNN_SETTINGS if key not in cnn]
    if missing:
        raise InputError(
            f"[{where}] ({HASH_EMBED_CNN}) lacks {', '.join(missing)}: fill it with spacy init fill-config"
        )
    size, subwords = cnn["embed_size"], cnn["subword_features"]
    return {
        "@architectures": TOK2VEC,
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": cnn["width"],
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"] if subwords else ["NORM"],
            "rows": [size, size // 2, size // 2, size // 2] if subwords else [size],
            "include_static_vectors": bool(cnn["pretrained_vectors"]),
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            **{key: cnn[key] for key in ("width", "depth", "window_size", "maxout_pieces")},
        },
    }


def _listener(extra_features: Dict[str, Any], width: int, mix_dropout: float) -> Dict[str, Any]:
    return {
        "@architectures": ELMO_LISTENER,
        "upstream": ELMO_NAME,
        "width": width,
        "mix": {"@layers": "spacy-elmo.ScalarMix.v2", "dropout": mix_dropout, "l2": MIX_L2},
        "extra_features": extra_features,
    }


def _shared_tok2vec(where: str, listener: Dict[str, Any], components: Dict[str, Any]) -> str:
    """The one `tok2vec` component a listener's upstream names (or "*" finds)."""
    upstream = listener.get("upstream", "*")
    shared = [
        name for name, block in components.items() if block.get("factory") == "tok2vec" and upstream in ("*", name)
    ]
    if len(shared) != 1:
        raise InputError(
            f"[{where}] listens to tok2vec component {upstream!r}, but the config has {len(shared)} such "
            f"components ({', '.join(shared) or 'none'}); name one in its upstream"
        )
    return shared[0]


def _tok2vec_model(where: str, own: Dict[str, Any], components: Dict[str, Any]) -> Tuple[Dict[str, Any], str]:
    """The model a head's tok2vec is, and its config section: its own, or the shared component's it
    listens to."""
    if own.get("@architectures") != TOK2VEC_LISTENER:
        return own, where
    upstream = _shared_tok2vec(where, own, components)
    return components[upstream]["model"], f"components.{upstream}.model"


def _find_blocks(block: Any, architectures: Tuple[str, ...]) -> Iterator[Dict[str, Any]]:
    if isinstance(block, dict):
        if block.get("@architectures") in architectures:
            yield block
        for value in block.values():
            yield from _find_blocks(value, architectures)


def _drop_unheard_tok2vecs(config: Config, pipeline: List[str]) -> List[str]:
    """The pipeline without the tok2vec components no listener names any more (nor "*")."""
    components = config["components"]
    heard = {listener.get("upstream", "*") for listener in _find_blocks(components, (TOK2VEC_LISTENER,))}
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


def config_text(config: Config) -> str:
    """`config` as confection writes it uninterpolated, its sections reordered as spaCy's configs read:
    the top sections in `SECTION_ORDER`, each section followed by its subsections in their order in the
    config (a component's model right after the component)."""
    blocks: Dict[Path, List[str]] = {}
    lines: List[str] = []
    for line in config.to_str(interpolate=False).splitlines():
        if line.startswith("[") and line.rstrip().endswith("]"):
            lines = blocks.setdefault(tuple(line.strip()[1:-1].split(".")), [])
        lines.append(line)
    ordered = sorted(blocks, key=_section_rank(config))
    return "\n\n".join("\n".join(blocks[path]).strip() for path in ordered) + "\n"


def _section_rank(config: Config) -> Callable[[Path], Tuple[int, ...]]:
    """A section's path -> its place: per level, the key's index among its siblings (top: SECTION_ORDER)."""

    def rank(path: Path) -> Tuple[int, ...]:
        first = SECTION_ORDER.index(path[0]) if path[0] in SECTION_ORDER else len(SECTION_ORDER)
        places = [first]
        block: Any = config[path[0]]
        for key in path[1:]:
            places.append(list(block).index(key))
            block = block[key]
        return tuple(places)

    return rank
