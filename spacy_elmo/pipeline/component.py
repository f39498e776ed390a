"""The `elmo` pipeline component: runs the shared biLM, stores its output on the Doc, feeds listeners.

Prediction writes `doc._.elmo` (see doc_data.py), installs the vector hooks (hooks.py) and, only when
asked, `doc.tensor` (a later `tok2vec` would overwrite it, and an earlier one's listeners would read it).

Training follows spaCy's listener protocol (layers/listener.py): `update` runs the biLM once per batch
and hands every listening head the layers plus a gradient callback; all but the last callback
accumulate, the last one backpropagates into the biLM and updates it. With `frozen = true` (the
default, as in the paper) there is no gradient to pass on, so the biLM runs without autograd and its
layers come from a cache (pipeline/frozen_cache.py): epochs after the first and every evaluation cost
only the heads.

The component is in one of two phases. It serves (predict runs the biLM and keeps nothing, so a serving
pipeline does not grow) until its first `update` or `start_training()`; it then trains (a frozen biLM's
layers are cached, and the training docs given to `initialize` are embedded before the first step)
until `finish_training()`, the next `initialize`, or the first call from outside `Language.update` and
`Language.evaluate` (training_calls.py): a pipeline served once its training loop returns caches
nothing. While it trains, long embeddings (the training text from PROGRESS_MIN_TOKENS, other text once
it has run PROGRESS_DELAY_S; pipeline/frozen_cache.py) show a progress bar on stderr; serving shows none.

The pooling layer is a node of the biLM layer's model (after its torch wrapper, which alone runs), so
spaCy's serialization of `model` carries its parameters: a ScalarMix started from a TF-Hub module keeps
the module's mix where the module is not. `replace_listeners` copies the biLM without it. A pipeline saved
by 0.1 holds the biLM alone in `model` and the pooling in a file of its own (or, before that, nowhere: the
config's pooling stays); both load. Files are written beside and renamed: spaCy rewrites a saved pipeline
in place (`spacy train`'s model-best), and a kill mid-write must leave the previous files whole.
"""

from __future__ import annotations

import contextlib
import enum
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import from_bytes, from_disk, to_disk
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats3d

from ..errors import ElmoError
from ..nn.pooling_weights import check_pooling, pooling_weights
from ..util.io import atomic_output
from .bilm_layer.thinc_bilm import declared_layers, ensure_loaded
from .doc_data import ensure_extension, set_doc_data
from .frozen_cache import FrozenLayerCache
from .hooks import install_hooks
from .layers import ElmoListener, apply_to_read_rows, load_source, set_frozen
from .layers.listener import replace_listener_cfg
from .layers.pooling import build_pooling_v1
from .layers.scalar_mix import mixes_in
from .training_calls import called_by_training
from .training_data import check_annotations, listening_heads, training_corpus

# "mean", "top", fixed weights per layer, or any List[Floats3d] -> List[Floats2d] layer (layers/pooling.py).
Pooling = Union[str, List[float], Model]

# Where a pipeline saved by 0.1 kept the pooling layer's bytes, beside `model`.
LEGACY_POOLING = "pooling"

# No source given: the default bundled model (spaCy merges these keys into a user's model config, so
# naming a model here would clash with user-given options paths).
DEFAULT_MODEL_CONFIG = {"@architectures": "spacy-elmo.BiLM.v2"}


# What every `elmo` component writes. spaCy keeps one `assigns` per factory, not per component, so
# `doc.tensor`, written only with `set_tensor = true`, is not declared: a declared attribute is always set.
@Language.factory(
    "elmo",
    assigns=["doc._.elmo", "doc.user_hooks", "doc.user_span_hooks", "doc.user_token_hooks"],
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
    """Create the `elmo` component: the shared biLM of a pipeline, whose layers later components read
    through `spacy-elmo.ElmoListener.v1`. A list of pooling weights is checked against the biLM's
    layers here, when the pipeline is built (`spacy debug config`, `spacy train`), not at the first doc.

    nlp (Language): the pipeline the component is added to.
    name (str): the component's name; listeners name it as their `upstream`.
    model (Model[List[Doc], List[Floats3d]]): the biLM layer (`spacy-elmo.BiLM.v2`); it gives every doc
        its `[L+1, n, 2P]` layers.
    pooling (Union[str, List[float], Model]): how the token vectors of `doc._.elmo["vectors"]` and
        `token.vector` are made from the layers: "mean", "top", one weight per layer, or any
        `List[Floats3d] -> List[Floats2d]` layer (`spacy-elmo.Pooling.v1`, a non-trainable ScalarMix).
    store_layers (bool): keep all layers in `doc._.elmo["layers"]`, where listeners read them at
        prediction; with False only the pooled vectors are kept and listeners run the biLM again.
    frozen (bool): the biLM gets no gradient (the paper's setting); False fine-tunes it through the
        listeners.
    set_tensor (bool): also write the pooled vectors to `doc.tensor`.
    cache_mb (int): the budget, in MiB, of the frozen biLM's layer cache while training; 0 turns it off.
    RETURNS (ElmoComponent): the component.
    """
    if isinstance(pooling, list):
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


class Phase(enum.Enum):
    """Whether `predict` may serve a frozen biLM's layers from the cache."""

    SERVING = "serving"  # the biLM runs on every doc; nothing is kept
    TRAINING = "training"  # a frozen biLM's layers are cached (`spacy train` evaluates the same dev docs)


class ElmoComponent(TrainablePipe):
    """The `elmo` factory's pipe: owns the biLM layer, writes `doc._.elmo` and the vector hooks, and feeds
    the ElmoListeners of later components (see the module docstring for the training protocol and the
    two phases)."""

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
        """Arguments as in `make_elmo`; `vocab` is the pipeline's vocab."""
        # Strings and lists are shorthands for spacy-elmo.Pooling.v1; any List[Floats3d] -> List[Floats2d]
        # layer works (a ScalarMix with trainable = false, say).
        self.pooling: Model = pooling if isinstance(pooling, Model) else build_pooling_v1(pooling)
        ensure_extension()
        self.vocab = vocab
        self.model = model
        model.layers[1:] = [self.pooling]  # serialized with the biLM; only the wrapper, layers[0], runs
        model.attrs["replace_listener"] = _bilm_alone
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
        self.cache = FrozenLayerCache(model, int(cache_mb * 2**20))
        self.phase = Phase.SERVING
        set_frozen(model, frozen)
        model.attrs["replace_listener_cfg"] = partial(replace_listener_cfg, frozen=frozen)

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
        """Bind the listeners in a later component whose upstream is this one (or "*"); spaCy calls it
        for every component after this one when the pipeline is linked.

        component (Any): a pipeline component; those without a thinc model are skipped.
        """
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

    # Phases ------------------------------------------------------------------------------------

    @property
    def is_training(self) -> bool:
        """Whether the component is in the training phase (`start_training` to `finish_training`)."""
        return self.phase is Phase.TRAINING

    def start_training(self) -> None:
        """Enter the training phase (the first `update` does it): from now on a frozen biLM's layers are
        cached, and the training docs given to `initialize` are embedded now, in large batches."""
        self.phase = Phase.TRAINING
        if self.cfg["frozen"]:
            self.cache.prefill(f"{self.name}: embedding the training text (once)")

    def finish_training(self) -> None:
        """Back to serving: the cache is emptied and the listeners forget their last batch."""
        self.phase = Phase.SERVING
        self.cache.clear()
        for listener in self.listeners:
            listener.reset()

    def _end_training_when_served(self) -> None:
        """A call from outside the training loop's update and evaluation ends the training phase."""
        if self.is_training and not called_by_training():
            self.finish_training()

    # Prediction --------------------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> List[Floats3d]:
        """The biLM's layers of `docs`; while training with a frozen biLM, from the cache.

        docs (Iterable[Doc]): the docs, tokenized.
        RETURNS (List[Floats3d]): `[L+1, n, 2P]` per doc.
        """
        docs = list(docs)
        self._end_training_when_served()
        if self.cfg["frozen"] and self.is_training:
            return self.cache.layers(docs)
        return self.model.predict(docs)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """`TrainablePipe.pipe`; while training with a frozen biLM, the docs embedded because they were
        not yet cached (the dev text at the first evaluation) are counted on a progress bar.

        stream (Iterable[Doc]): the docs.
        batch_size (int): docs per call of `predict`.
        YIELDS (Doc): the docs, annotated.
        """
        self._end_training_when_served()
        if not (self.cfg["frozen"] and self.is_training):
            yield from super().pipe(stream, batch_size=batch_size)
            return
        with self.cache.progress(f"{self.name}: embedding text not seen before"):
            yield from super().pipe(stream, batch_size=batch_size)

    def set_annotations(self, docs: Sequence[Doc], layers: List[Floats3d]) -> None:
        """Write `doc._.elmo` (the pooled vectors and, with `store_layers`, the layers), the vector hooks
        and, with `set_tensor`, `doc.tensor`.

        docs (Sequence[Doc]): the docs.
        layers (List[Floats3d]): their layers, from `predict`.
        """
        pooled = apply_to_read_rows(self.pooling, list(docs), list(layers))
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
        """Run the biLM once on the batch and hand its layers to every listener, with a callback for
        their gradient. The component has no loss of its own: with a fine-tuned biLM the last listener's
        callback backpropagates the sum of all listeners' gradients and, given `sgd`, updates the biLM.
        The first update starts the training phase (`start_training`).

        examples (Iterable[Example]): the batch; the biLM reads `eg.predicted`.
        drop (float): unused: dropout belongs to the listening heads' mixes.
        sgd (Optional[Optimizer]): updates a fine-tuned biLM after the last listener's backprop; None
            leaves that to `finish_update` (as `spacy train` does).
        losses (Optional[Dict[str, float]]): the losses so far, by component; gets this component's
            name with 0.0.
        RETURNS (Dict[str, float]): `losses`.
        """
        if losses is None:
            losses = {}
        validate_examples(examples, "ElmoComponent.update")
        if not self.is_training:
            self.start_training()
        docs = [eg.predicted for eg in examples]
        losses.setdefault(self.name, 0.0)
        if self.cfg["frozen"]:
            layers = self.cache.layers(docs)

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
        """Load the biLM, check that every listening head finds its annotation in the training data, and
        start over in the serving phase. A frozen biLM embeds the examples at the first update.

        get_examples (Callable[[], Iterable[Example]]): the training examples.
        nlp (Optional[Language]): the pipeline; with it, the enabled listening heads (and those of a
            listening `tok2vec`) are checked to find their annotation in the examples.
        options (Optional[str]): an options.json; from [initialize.components.<name>], it wins over
            the model config.
        weights (Optional[str]): the weights file for `options`.
        """
        if nlp is not None:
            heads = listening_heads(nlp, self.listening_components)
            check_annotations(heads, get_examples(), training_corpus(nlp))
        load_source(self.model, options, weights)
        self.model.initialize()
        self.pooling.initialize()  # a ScalarMix reads its `start_from` module now, not at the first doc
        self.finish_training()
        self.cache.prefill_from(lambda: (eg.predicted for eg in get_examples()))

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The biLM is loaded first (before `initialize` or first use it is only a recorded source), so
        the bytes carry its options and weights, and the pooling layer's parameters with them."""
        ensure_loaded(self.model)
        return super().to_bytes(exclude=exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """As to_bytes; `cfg` and `model` are each written beside and renamed (module docstring)."""
        self._validate_serialization_attrs()
        ensure_loaded(self.model)
        fields: Dict[str, Callable[[Path], Any]] = {
            "cfg": lambda p: _replace_file(p, (srsly.json_dumps(self.cfg, indent=2) + "\n").encode("utf8")),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: _replace_file(p, self.model.to_bytes()),
        }
        to_disk(path, fields, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        self.cache.clear()  # new weights: cached layers would be stale
        fields: Dict[str, Callable[[bytes], Any]] = {
            "cfg": lambda b: self.cfg.update(srsly.json_loads(b)),
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "model": self._load_model,
            LEGACY_POOLING: self.pooling.from_bytes,  # only in the bytes of 0.1
        }
        from_bytes(bytes_data, fields, exclude)
        return self

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        self.cache.clear()
        self._validate_serialization_attrs()
        fields: Dict[str, Callable[[Path], Any]] = {
            "cfg": lambda p: self.cfg.update(srsly.read_json(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": lambda p: self._load_model(p.read_bytes()),
            LEGACY_POOLING: lambda p: self.pooling.from_bytes(p.read_bytes()) if p.is_file() else None,
        }
        try:
            from_disk(path, fields, exclude)
        except ElmoError as err:  # a saved biLM that is refused: say which folder holds it
            raise type(err)(f"pipeline component {path}: {err}") from None
        return self

    def _load_model(self, data: bytes) -> None:
        """The model's bytes: the biLM and the pooling, or the biLM alone where a pipeline saved by 0.1
        (or earlier) holds it so, the pooling then from its own file, if any."""
        if len(srsly.msgpack_loads(data)["nodes"]) == len(list(self.model.walk())):
            self.model.from_bytes(data)
            return
        with _pooling_detached(self.model):
            self.model.from_bytes(data)

    def add_label(self, label: str) -> int:
        raise NotImplementedError(f"the {self.name!r} component has no labels")


def _bilm_alone(copy: Model) -> Model:
    """The copy of the component's model that `replace_listeners` puts in a head: the biLM, whose config
    (BiLM.v2) builds no pooling node."""
    copy.layers[1:] = []
    return copy


@contextlib.contextmanager
def _pooling_detached(model: Model) -> Iterator[None]:
    """The biLM layer's model without its pooling node for the block, as 0.1 saved it."""
    carried = model.layers[1:]
    model.layers[1:] = []
    try:
        yield
    finally:
        model.layers[1:] = carried


def _replace_file(path: Path, data: bytes) -> None:
    """`path` holds `data` or, if writing is cut short, what it held before."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
