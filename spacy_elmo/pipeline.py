"""The `elmo` pipeline component: runs the shared biLM, stores its output on the Doc, feeds listeners.

Prediction writes `doc._.elmo` (see doc_data.py), installs the vector hooks (hooks.py) and, only when
asked, `doc.tensor` (a later `tok2vec` would overwrite it, and an earlier one's listeners would read it).

Training follows spaCy's listener protocol: `update` runs the biLM once per batch and hands every
listening head the layers plus a gradient callback; all but the last callback accumulate, the last one
backpropagates into the biLM and updates it. With `frozen = true` (the default, as in the paper) there
is no gradient to pass on, so the biLM runs without autograd and each training doc's layers are kept in
a byte-bounded LRU cache: epochs after the first cost only the heads. When all the training docs fit in
that cache, the first update embeds them in large batches before it trains (see `_prefill_cache`).
"""

from __future__ import annotations

import logging
import time
import weakref
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np
import srsly
from spacy.attrs import ORTH, SENT_START
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import to_disk as write_fields
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats3d

from .doc_data import ensure_extension, set_doc_data
from .errors import ElmoError
from .hooks import install_hooks
from .io import atomic_output
from .layers import ActivationCache, ElmoListener, load_source, mix_summary, set_frozen
from .layers.pooling import check_pooling, pooling_layer, pooling_weights
from .layers.thinc_bilm import declared_layers, ensure_loaded, get_bilm

# "mean", "top", fixed weights per layer, or any List[Floats3d] -> List[Floats2d] layer (layers/pooling.py).
Pooling = Union[str, List[float], Model]

# No source given: the default bundled model (spaCy merges these keys into a user's model config, so
# naming a model here would clash with user-given options paths).
DEFAULT_MODEL_CONFIG = {"@architectures": "spacy-elmo.BiLM.v2"}
MIX_NODE = "elmo-scalar-mix"
# Docs per biLM call when the training docs are embedded ahead of the first step.
PREFILL_BATCH_DOCS = 1000

logger = logging.getLogger(__name__)


@Language.factory(
    "elmo",
    default_config={
        "model": DEFAULT_MODEL_CONFIG,
        "pooling": "mean",
        "store_layers": True,
        "frozen": True,
        "set_tensor": False,
        "cache_mb": 1024,
    },
)
def make_elmo(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats3d]],
    pooling: Pooling,
    store_layers: bool,
    frozen: bool,
    set_tensor: bool,
    cache_mb: int,
) -> "ElmoComponent":
    if isinstance(pooling, list):
        # Checked when the pipeline is built (spacy debug config, spacy train), not at the first doc.
        check_pooling(pooling)
        n_layers = declared_layers(model)
        if n_layers is not None:
            pooling_weights(pooling, n_layers)
    return ElmoComponent(
        nlp.vocab,
        model,
        name,
        pooling=pooling,
        store_layers=store_layers,
        frozen=frozen,
        set_tensor=set_tensor,
        cache_mb=cache_mb,
    )


def mixes_in(model: Model) -> List[Dict[str, object]]:
    """The normalised weights and gamma of every ScalarMix inside `model`."""
    return [mix_summary(node) for node in model.walk() if node.name == MIX_NODE]


def _find_listener_cfg(cfg: Any) -> Optional[Dict[str, Any]]:
    """The ElmoListener section in a head's `tok2vec` config: itself, or nested (a Tok2Vec's `embed`)."""
    if not isinstance(cfg, dict):
        return None
    if cfg.get("@architectures") == "spacy-elmo.ElmoListener.v1":
        return cfg
    for value in cfg.values():
        found = _find_listener_cfg(value)
        if found is not None:
            return found
    return None


def _replace_listener_cfg(
    tok2vec_model_cfg: Dict[str, Any], listener_cfg: Dict[str, Any], frozen: bool
) -> Dict[str, Any]:
    """spaCy passes the head's whole `model.tok2vec` section and writes the result at the listener's path;
    the listener may sit inside it (the shipped configs: `model.tok2vec.embed`)."""
    found = _find_listener_cfg(listener_cfg)
    if found is None:
        raise ElmoError(f"replace_listeners found no spacy-elmo.ElmoListener.v1 in {listener_cfg!r}")
    kept = {k: v for k, v in found.items() if k not in ("@architectures", "upstream")}
    return {"@architectures": "spacy-elmo.ElmoTok2Vec.v1", "bilm": tok2vec_model_cfg, "frozen": frozen, **kept}


class ElmoComponent(TrainablePipe):
    """The `elmo` factory's pipe: owns the biLM layer, writes `doc._.elmo` and the vector hooks, and feeds
    the ElmoListeners of later components (see the module docstring for the training protocol)."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], List[Floats3d]],
        name: str = "elmo",
        *,
        pooling: Pooling = "mean",
        store_layers: bool = True,
        frozen: bool = True,
        set_tensor: bool = False,
        cache_mb: int = 1024,
    ) -> None:
        # Strings and lists are shorthands for spacy-elmo.Pooling.v1; any List[Floats3d] -> List[Floats2d]
        # layer works (a ScalarMix with trainable = false, say).
        self.pooling: Model = pooling if isinstance(pooling, Model) else pooling_layer(pooling)
        ensure_extension()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {
            "pooling": pooling if not isinstance(pooling, Model) else pooling.name,
            "store_layers": store_layers,
            "frozen": frozen,
            "set_tensor": set_tensor,
            "cache_mb": cache_mb,
        }
        self.listener_map: Dict[str, List[ElmoListener]] = {}
        self._heads: Dict[str, Model] = {}
        self.cache = ActivationCache(int(cache_mb * 2**20))
        self._training = False  # set by the first update: only then does predict use the cache
        self._cache_source: Optional[weakref.ref] = None  # the biLM whose layers the cache holds
        # The training examples given to `initialize`, embedded at the first frozen update.
        self._prefill_examples: Optional[Callable[[], Iterable[Example]]] = None
        set_frozen(model, frozen)
        model.attrs["replace_listener_cfg"] = partial(_replace_listener_cfg, frozen=frozen)

    # Listeners ---------------------------------------------------------------------------------

    @property
    def listeners(self) -> List[ElmoListener]:
        return [m for c in self.listening_components for m in self.listener_map[c]]

    @property
    def listening_components(self) -> List[str]:
        return list(self.listener_map.keys())

    def add_listener(self, listener: ElmoListener, component_name: str) -> None:
        self.listener_map.setdefault(component_name, [])
        if listener not in self.listener_map[component_name]:
            self.listener_map[component_name].append(listener)
        listener.bind(self)

    def remove_listener(self, listener: ElmoListener, component_name: str) -> bool:
        if listener in self.listener_map.get(component_name, []):
            self.listener_map[component_name].remove(listener)
            if not self.listener_map[component_name]:
                del self.listener_map[component_name]
            return True
        return False

    def find_listeners(self, component: Any) -> None:
        """Bind the listeners in a later component whose upstream is this one (or "*")."""
        model = getattr(component, "model", None)
        if not isinstance(model, Model):
            return
        for node in model.walk():
            if isinstance(node, ElmoListener) and node.upstream_name in ("*", self.name):
                self.add_listener(node, component.name)
                self._heads[component.name] = model

    def mix_weights(self) -> Dict[str, List[Dict[str, object]]]:
        """Per listening component, each of its mixes' softmaxed weights s_j and gamma."""
        return {name: mixes_in(self._heads[name]) for name in self.listening_components}

    # Prediction --------------------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> List[Floats3d]:
        """The layers of `docs`. While this process trains with a frozen biLM, from the activation cache:
        `spacy train` evaluates the same dev docs again and again, and their layers cannot change.
        Outside training nothing is kept, so a serving pipeline does not grow."""
        docs = list(docs)
        if self.cfg["frozen"] and self._training:
            return self._frozen_layers(docs)
        return self.model.predict(docs)

    def set_annotations(self, docs: Sequence[Doc], layers: List[Floats3d]) -> None:
        pooled = self.pooling.predict(list(layers))
        for doc, doc_layers, doc_vectors in zip(docs, layers, pooled):
            # The Doc keeps host arrays (they serialize and outlive the batch); on a GPU this is the
            # one copy to the host.
            vectors = self.model.ops.to_numpy(doc_vectors).astype(np.float32, copy=False)
            host_layers = self.model.ops.to_numpy(doc_layers).astype(np.float32, copy=False)
            set_doc_data(doc, vectors, host_layers if self.cfg["store_layers"] else None)
            install_hooks(doc)
            if self.cfg["set_tensor"]:
                doc.tensor = vectors

    # Training ----------------------------------------------------------------------------------

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        validate_examples(examples, "ElmoComponent.update")
        self._training = True
        docs = [eg.predicted for eg in examples]
        losses.setdefault(self.name, 0.0)
        if self.cfg["frozen"]:
            self._prefill_cache()
            layers = self._frozen_layers(docs)

            def accumulate(d_layers: List[Floats3d]) -> List[Doc]:
                return []  # a frozen biLM takes no gradient

            backprop: Callable = accumulate
        else:
            layers, bp_layers = self.model.begin_update(docs)
            d_total = [self.model.ops.xp.zeros_like(x) for x in layers]

            def accumulate(d_layers: List[Floats3d]) -> List[Doc]:
                for total, d in zip(d_total, d_layers):
                    total += d
                return []

            def backprop(d_layers: List[Floats3d]) -> List[Doc]:
                accumulate(d_layers)
                bp_layers(d_total)
                if sgd is not None:
                    self.finish_update(sgd)
                return []

        batch_id = ElmoListener.get_batch_id(docs)
        for listener in self.listeners[:-1]:
            listener.receive(batch_id, layers, accumulate)
        if self.listeners:
            self.listeners[-1].receive(batch_id, layers, backprop)
        return losses

    def _frozen_layers(self, docs: List[Doc]) -> List[Floats3d]:
        """Layers from the cache where possible; a stateful biLM's output depends on history, so never."""
        if self.model.attrs["stateful"] or self.cache.max_bytes == 0:
            return self.model.predict(docs)
        bilm = get_bilm(self.model)
        if self._cache_source is None or self._cache_source() is not bilm:  # e.g. after set_bilm
            self.cache.clear()
            self._cache_source = None if bilm is None else weakref.ref(bilm)
        # The layers depend on the tokens and, when the doc is split per sentence, on where they start.
        # Arrays of string hashes, not Token objects: the keys are built for every doc of every step.
        keys = [
            (
                doc.to_array(ORTH).tobytes(),
                doc.to_array(SENT_START).tobytes() if doc.has_annotation("SENT_START") else None,
            )
            for doc in docs
        ]
        layers: List[Any] = [self.cache.get(key) for key in keys]
        missing = [i for i, value in enumerate(layers) if value is None]
        if missing:
            for i, value in zip(missing, self.model.predict([docs[i] for i in missing])):
                layers[i] = value
                self.cache.put(keys[i], value)
        return layers

    def _prefill_cache(self) -> None:
        """Embed the training docs from `initialize` in batches of PREFILL_BATCH_DOCS, once. Early training
        batches are small (spaCy's batch sizes start at 100 words) and the biLM runs at half its speed
        on a few sentences (benchmarks/downstream/README.md); every training doc is embedded in the
        first epoch anyway. Done only if all of them fit in the cache (the LRU would evict the first
        ones before their turn) and only at the first update, so that a pipeline that is initialized
        and then serves keeps nothing. With an augmenter the docs differ from epoch to epoch, and
        the prefilled layers are rarely used: `cache_mb = 0` turns caching off."""
        get_examples, self._prefill_examples = self._prefill_examples, None
        bilm = get_bilm(self.model)
        if get_examples is None or bilm is None or self.model.attrs["stateful"] or self.cache.max_bytes == 0:
            return
        bytes_per_token = 4 * bilm.n_layers * bilm.output_dim  # float32 [L+1, n, 2P] per doc
        docs: List[Doc] = []
        n_tokens = 0
        for eg in get_examples():
            docs.append(eg.predicted)
            n_tokens += len(eg.predicted)
            if n_tokens * bytes_per_token > self.cache.max_bytes:
                logger.info(
                    "%s: the training docs' layers need more than cache_mb = %d; they are computed as the batches come",
                    self.name,
                    self.cfg["cache_mb"],
                )
                return
        started = time.perf_counter()
        for i in range(0, len(docs), PREFILL_BATCH_DOCS):
            self._frozen_layers(docs[i : i + PREFILL_BATCH_DOCS])
        logger.info("%s: embedded %d training tokens in %.1f s", self.name, n_tokens, time.perf_counter() - started)

    def get_loss(self, examples: Iterable[Example], scores: Any) -> None:
        """The component has no loss of its own: its gradients come from the listening heads."""

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        options: Optional[str] = None,
        weights: Optional[str] = None,
    ) -> None:
        """Load the biLM: `options`/`weights` from [initialize.components.<name>] win over the model config.
        Nothing about the biLM depends on the training data; a frozen biLM embeds the examples at the
        first update (`_prefill_cache`)."""
        if weights is not None and options is None:
            raise ElmoError(f"[initialize.components.{self.name}] gives weights {weights} without options")
        load_source(self.model, options, weights)
        self.model.initialize()
        self.cache.clear()
        self._prefill_examples = get_examples

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The biLM is loaded first (before `initialize` or first use it is only a recorded source), so
        the bytes carry its options and weights."""
        ensure_loaded(self.model)
        return super().to_bytes(exclude=exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """As TrainablePipe's, with the biLM loaded first (see to_bytes), and `model` and `cfg` written
        beside and renamed: spaCy rewrites a saved pipeline in place (`spacy train`'s model-best and
        model-last), and a kill mid-write must leave the previous files whole."""
        self._validate_serialization_attrs()
        ensure_loaded(self.model)
        serialize = {
            "cfg": lambda p: _replace_file(p, (srsly.json_dumps(self.cfg, indent=2) + "\n").encode("utf8")),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: _replace_file(p, self.model.to_bytes()),
        }
        write_fields(path, serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        self.cache.clear()  # new weights: cached layers would be stale
        return super().from_bytes(bytes_data, exclude=exclude)

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        self.cache.clear()
        try:
            return super().from_disk(path, exclude=exclude)
        except ElmoError as err:  # a saved biLM that is refused: say which folder holds it
            raise type(err)(f"pipeline component {path}: {err}") from None

    def add_label(self, label: str) -> int:
        raise NotImplementedError(f"the {self.name!r} component has no labels")


def _replace_file(path: Path, data: bytes) -> None:
    """`path` holds `data` or, if writing is cut short, what it held before."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
