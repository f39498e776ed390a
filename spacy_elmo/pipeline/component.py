"""The `elmo` pipeline component: runs the shared biLM, stores its output on the Doc, feeds listeners.

Prediction writes `doc._.elmo` (see doc_data.py), installs the vector hooks (hooks.py) and, only when
asked, `doc.tensor` (a later `tok2vec` would overwrite it, and an earlier one's listeners would read it);
in a worker of `nlp.pipe(n_process=...)` an empty `doc.tensor` too, the one place spaCy's bytes carry
vectors that `token.vector` reads (hooks.carry_through_bytes).

Training follows spaCy's listener protocol (layers/listener.py): `update` runs the biLM once per batch
and hands every listening head the layers plus a gradient callback, and reports as its loss what
spaCy's tok2vec does. `frozen`, the component's attribute, alone says whether the biLM learns: when it
does not (the default, as in the paper) the biLM runs without autograd and its layers come from a cache
(pipeline/frozen_cache.py), so epochs after the first and every evaluation cost only the heads.

The cache lives from the first `update` to `finish_training()`. spaCy's loop gives a pipeline no sign
that training ended but its logger's `finalize`, where `spacy-elmo.MixLogger.v1` (training_log.py) calls
it; a loop of one's own calls it when done. Outside that, predict runs the model alone (a serving
pipeline never touches the cache, keeps nothing and shows no progress bar).

The pooling is a part of the component, saved on its own beside the biLM layer (`pooling` in its folder,
saved_model.py): a ScalarMix started from a TF-Hub module keeps the module's mix where the module is
not, and the biLM layer is the biLM alone (what `replace_listeners` copies into a head). Files are
written beside and renamed: spaCy rewrites a saved pipeline in place (`spacy train`'s model-best), and a
kill mid-write must leave the previous files whole.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import minibatch
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats3d

from ..elmo.errors import ElmoError
from .bilm_layer.thinc_bilm import check_learning_runs_exact
from .doc_data import as_layer_dtype, layer_dtype, set_doc_data
from .errors import for_spacy_commands
from .frozen_cache import FrozenLayerCache
from .hooks import carry_through_bytes, ensure_extension, install_hooks
from .layers import ElmoListener, apply_to_read_rows, load_source
from .layers.listener import (
    check_listener_width,
    feed_listeners,
    gradient_callbacks,
    no_gradient,
    replace_listener_cfg,
    standalone_bilm,
)
from .layers.pooling import build_pooling_v1
from .layers.read_rows import ROW_WISE
from .layers.scalar_mix import mixes_in
from .model_paths import check_model_paths_read
from .pieces import pooled_by_piece
from .saved_model import parts_from_bytes, parts_from_disk, parts_to_bytes, parts_to_disk
from .training_data import check_annotations, listening_heads, training_corpus

# "mean", "top", fixed weights per layer, or any List[Floats3d] -> List[Floats2d] layer (layers/pooling.py).
Pooling = Union[str, List[float], Model]


class ElmoComponent(TrainablePipe):
    """The `elmo` factory's pipe: owns the biLM layer, writes `doc._.elmo` and the vector hooks, and feeds
    the ElmoListeners of later components (see the module docstring for the training protocol and the
    cache's lifetime)."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], List[Floats3d]],
        name: str = "elmo",
        *,
        pooling: Pooling = "mean",
        store_layers: Union[bool, str] = "float16",
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
        model.attrs["replace_listener"] = standalone_bilm
        # spaCy hands this callback configs alone, so it is given `frozen` now.
        model.attrs["replace_listener_cfg"] = partial(replace_listener_cfg, frozen=frozen)
        self.name = name
        self.frozen = frozen  # whether the biLM learns: read by `update` alone
        self._check_fast_mode()
        self.cfg = {
            "pooling": pooling if not isinstance(pooling, Model) else pooling.name,
            "store_layers": store_layers,
            "set_tensor": set_tensor,
            "cache_mb": cache_mb,
        }
        self.listener_map: Dict[str, List[ElmoListener]] = {}
        self._heads: Dict[str, Model] = {}
        self.cache = FrozenLayerCache(model, int(cache_mb * 2**20))

    # Listeners ---------------------------------------------------------------------------------

    @property
    def listeners(self) -> List[ElmoListener]:
        return [m for c in self.listening_components for m in self.listener_map[c]]

    @property
    def listening_components(self) -> List[str]:
        return list(self.listener_map.keys())

    def add_listener(self, listener: ElmoListener, component_name: str) -> None:
        check_listener_width(listener, self.model, self.name, component_name)
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

    def finish_training(self) -> None:
        """Training ended: the cache's memory is released and the listeners forget their last batch.
        `spacy-elmo.MixLogger.v1` calls it when spaCy's loop returns; a loop of one's own calls it."""
        self.cache.release()
        for listener in self.listeners:
            listener.reset()

    # Prediction --------------------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> List[Floats3d]:
        """The biLM's layers of `docs`: the model's; while a pipeline trains with a frozen biLM (the cache
        is live: its evaluations), from the cache.

        docs (Iterable[Doc]): the docs, tokenized.
        RETURNS (List[Floats3d]): `[L+1, n, 2P]` per doc.
        """
        docs = list(docs)
        return self.cache.layers(docs) if self.cache.live else self.model.predict(docs)

    def __call__(self, doc: Doc) -> Doc:
        """`TrainablePipe.__call__`, annotating as `pipe` does (`_annotate`).

        doc (Doc): the doc, tokenized.
        RETURNS (Doc): the doc, annotated.
        """
        error_handler = self.get_error_handler()
        try:
            self._annotate([doc])
        except Exception as error:
            error_handler(self.name, self, [doc], error)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """`TrainablePipe.pipe`, annotating through `_annotate`; while the cache lives, the docs embedded
        because they were not yet cached (the dev text at the first evaluation) are counted on a
        progress bar.

        stream (Iterable[Doc]): the docs.
        batch_size (int): docs per call of the biLM.
        YIELDS (Doc): the docs, annotated.
        """
        error_handler = self.get_error_handler()
        with self.cache.progress(f"{self.name}: embedding text not seen before"):
            for docs in minibatch(stream, size=batch_size):
                try:
                    self._annotate(docs)
                except Exception as error:
                    error_handler(self.name, self, docs, error)
                yield from docs

    def set_annotations(self, docs: Sequence[Doc], layers: List[Floats3d]) -> None:
        """Write `doc._.elmo` (the pooled vectors and, with `store_layers`, the layers), the vector hooks
        and, with `set_tensor`, `doc.tensor`.

        docs (Sequence[Doc]): the docs.
        layers (List[Floats3d]): their layers, from `predict`.
        """
        pooled = apply_to_read_rows(self.pooling, list(docs), list(layers))
        dtype = layer_dtype(self.cfg["store_layers"])
        for doc, doc_layers, doc_vectors in zip(docs, layers, pooled):
            # The Doc keeps host arrays (they serialize and outlive the batch); on a GPU this is the
            # one copy to the host.
            vectors = self.model.ops.to_numpy(doc_vectors).astype(np.float32, copy=False)
            host_layers = None if dtype is None else as_layer_dtype(self.model.ops.to_numpy(doc_layers), dtype)
            self._annotate_doc(doc, vectors, host_layers)

    def _annotate(self, docs: List[Doc]) -> None:
        """`set_annotations(docs, predict(docs))`, or the same piece by piece: each piece of layers the
        biLM gives is pooled and stored (float16 with the default `store_layers`) as its batch is done,
        so that a long doc's float32 layers are never whole in memory, beside the float16 copy kept.
        Where pieces cannot be used: a live cache (training: it keeps whole layers), a pooling that
        looks across rows (a ScalarMix with layer norm), a GPU (one copy to the host per doc, not per
        piece)."""
        if self.cache.live or not self.pooling.attrs.get(ROW_WISE) or self.model.ops.xp is not np:
            self.set_annotations(docs, self.predict(docs))
            return
        pooled = pooled_by_piece(self.model, self.pooling, docs, layer_dtype(self.cfg["store_layers"]))
        for doc, (doc_vectors, doc_layers) in zip(docs, pooled):
            self._annotate_doc(doc, doc_vectors, doc_layers)

    def _annotate_doc(self, doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray]) -> None:
        set_doc_data(doc, vectors, layers)
        install_hooks(doc)
        if self.cfg["set_tensor"]:
            doc.tensor = vectors
        else:
            carry_through_bytes(doc, vectors)

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
        their gradient: with a fine-tuned biLM the last listener's callback backpropagates the sum of all
        listeners' gradients and, given `sgd`, updates the biLM. A frozen biLM's layers come from the
        cache, which the first update starts.

        examples (Iterable[Example]): the batch; the biLM reads `eg.predicted`.
        drop (float): unused: dropout belongs to the listening heads' mixes.
        sgd (Optional[Optimizer]): updates a fine-tuned biLM after the last listener's backprop; None
            leaves that to `finish_update` (as `spacy train` does).
        losses (Optional[Dict[str, float]]): the losses so far, by component; this component's name
            gets the sum of the squared gradients its listeners send back (0.0 with a frozen biLM), as
            spaCy's tok2vec reports.
        RETURNS (Dict[str, float]): `losses`.
        """
        if losses is None:
            losses = {}
        validate_examples(examples, "ElmoComponent.update")
        docs = [eg.predicted for eg in examples]
        losses.setdefault(self.name, 0.0)
        if self.frozen:
            self.cache.start()
            layers = self.cache.layers(docs, top_up=True)
            accumulate = backprop = no_gradient
        else:
            self._check_fast_mode()  # `frozen` may have been set false since
            self.cache.release()  # a biLM that learns (`frozen` set false mid-run) makes cached layers stale
            layers, bp_layers = self.model.begin_update(docs)
            after = partial(self.finish_update, sgd) if sgd is not None else None
            accumulate, backprop = gradient_callbacks(self.model.ops, layers, bp_layers, losses, self.name, after)
        feed_listeners(self.listeners, docs, layers, accumulate, backprop)
        return losses

    def _check_fast_mode(self) -> None:
        """A biLM that learns runs exact (check_learning_runs_exact), said as one message by spaCy's
        commands, which build the component (`spacy train`)."""
        try:
            check_learning_runs_exact(self.model, self.frozen)
        except ElmoError as error:
            raise for_spacy_commands(error) from None

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
        release the cache (training starts over). A frozen biLM embeds the examples as training meets them.

        get_examples (Callable[[], Iterable[Example]]): the training examples.
        nlp (Optional[Language]): the pipeline; with it, the enabled listening heads (and those of a
            listening `tok2vec`) are checked to find their annotation in the examples, and a `--paths.elmo_*`
            override the config does not read is refused (check_model_paths_read).
        options (Optional[str]): an options.json, or a model folder or archive; from
            [initialize.components.<name>] (BiLM.v2 configs), it wins over the model config.
        weights (Optional[str]): the weights file for `options`.
        """
        try:
            if nlp is not None:
                check_model_paths_read(nlp)
                heads = listening_heads(nlp, self.listening_components)
                check_annotations(heads, get_examples(), training_corpus(nlp))
            load_source(self.model, options, weights)
            self.model.initialize()
            self.pooling.initialize()  # a ScalarMix reads its `start_from` module now, not at the first doc
        except ElmoError as error:  # under `spacy train`, one message instead of a traceback
            raise for_spacy_commands(error) from None
        self.finish_training()
        self.cache.fill_from(lambda: (eg.predicted for eg in get_examples()))

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The biLM is loaded first (before `initialize` or first use it is only a recorded source), so
        the bytes carry its options and weights, and the pooling's parameters beside them, each part with
        its digest (saved_model.py)."""
        self._validate_serialization_attrs()
        return parts_to_bytes(self, exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """As to_bytes; each part is written beside and renamed (module docstring)."""
        self._validate_serialization_attrs()
        parts_to_disk(self, path, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        """The weights from the bytes, the settings from the config the component was built with: the
        saved `cfg` is a record, never read back (spaCy's rule: config.cfg is the truth at load)."""
        self.cache.release()  # new weights: cached layers would be stale
        parts_from_bytes(self, bytes_data, exclude)
        return self

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        """As from_bytes; a part that is refused is named by its file."""
        self.cache.release()
        self._validate_serialization_attrs()
        parts_from_disk(self, path, exclude)
        return self

    def add_label(self, label: str) -> int:
        raise NotImplementedError(f"the {self.name!r} component has no labels")
