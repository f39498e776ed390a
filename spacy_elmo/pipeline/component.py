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
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import numpy as np
import srsly
from pydantic import SkipValidation
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import from_bytes, from_disk, minibatch, to_bytes, to_disk
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer
from thinc.types import Floats3d
from typing_extensions import Annotated

from ..elmo.errors import ElmoError, InputError
from ..elmo.nn.pooling_weights import check_pooling, pooling_weights
from ..elmo.util.validation import must_be, validate_arguments
from .bilm_layer.thinc_bilm import declared_layers, ensure_loaded, predict_pieces
from .doc_data import layer_dtype, set_doc_data
from .errors import SavedWeightsError, for_spacy_commands
from .frozen_cache import FrozenLayerCache
from .hooks import carry_through_bytes, ensure_extension, install_hooks
from .layers import ElmoListener, apply_to_read_rows, load_source
from .layers.listener import feed_listeners, gradient_callbacks, no_gradient, replace_listener_cfg, standalone_bilm
from .layers.pooling import build_pooling_v1
from .layers.read_rows import ROW_WISE
from .layers.scalar_mix import mixes_in
from .saved_model import load_model_bytes, load_pooling_bytes, model_bytes, read_part, replace_file
from .training_data import check_annotations, listening_heads, training_corpus

# "mean", "top", fixed weights per layer, or any List[Floats3d] -> List[Floats2d] layer (layers/pooling.py).
Pooling = Union[str, List[float], Model]

# No model given: BiLM.v3's default, the bundled default model (spaCy fills it in from the signature).
DEFAULT_MODEL_CONFIG = {"@architectures": "spacy-elmo.BiLM.v3"}
# The `[paths]` keys that name the biLM: the shipped configs' (BiLM.v3's `model`), and v2 configs' files.
MODEL_PATHS = ("elmo_model", "elmo_options", "elmo_weights")


# What every `elmo` component writes. spaCy keeps one `assigns` per factory, not per component, so
# `doc.tensor`, written only with `set_tensor = true`, is not declared: a declared attribute is always set.
@Language.factory(
    "elmo",
    assigns=["doc._.elmo", "doc.user_hooks", "doc.user_span_hooks", "doc.user_token_hooks"],
    default_config={
        "model": DEFAULT_MODEL_CONFIG,
        "pooling": "mean",
        "store_layers": "float16",
        "frozen": True,
        "set_tensor": False,
        "cache_mb": 1024,
    },
)
@validate_arguments("the elmo component")
def make_elmo(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats3d]],
    pooling: SkipValidation[Pooling],
    store_layers: Union[bool, str],
    frozen: bool,
    set_tensor: bool,
    cache_mb: Annotated[int, must_be("a whole number of MiB, 0 (no cache) or more", ge=0)],
) -> "ElmoComponent":
    """Create the `elmo` component: the shared biLM of a pipeline, whose layers later components read
    through `spacy-elmo.ElmoListener.v1`. A list of pooling weights is checked against the biLM's
    layers here, when the pipeline is built (`spacy debug config`, `spacy train`), not at the first doc.

    nlp (Language): the pipeline the component is added to.
    name (str): the component's name; listeners name it as their `upstream`.
    model (Model[List[Doc], List[Floats3d]]): the biLM layer (`spacy-elmo.BiLM.v3`); it gives every doc
        its `[L+1, n, 2P]` layers.
    pooling (Union[str, List[float], Model]): how the token vectors of `doc._.elmo["vectors"]` and
        `token.vector` are made from the layers: "mean", "top", one weight per layer, or any
        `List[Floats3d] -> List[Floats2d]` layer (`spacy-elmo.Pooling.v1`, a non-trainable ScalarMix).
    store_layers (Union[bool, str]): keep all layers in `doc._.elmo["layers"]`, where listeners read them
        at prediction: "float16" (half the bytes), True (float32); with False only the pooled vectors
        are kept and listeners run the biLM again.
    frozen (bool): the biLM gets no gradient (the paper's setting); False fine-tunes it through the
        listeners.
    set_tensor (bool): also write the pooled vectors to `doc.tensor`.
    cache_mb (int): the budget, in MiB, of the frozen biLM's layer cache while training; 0 turns it off.
    RETURNS (ElmoComponent): the component.
    """
    layer_dtype(store_layers)  # a bad value is refused when the pipeline is built
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


def check_model_paths_read(nlp: Language) -> None:
    """spaCy adds an override of a `[paths]` key its config lacks without a word, so `--paths.elmo_options`
    given to a config of BiLM.v3 (the shipped ones since v3), or `--paths.elmo_model` to one that does not
    read it, would leave another model running than the one the user named: refused, naming the v3 form."""
    config = nlp.config
    paths = config.get("paths", {})
    # Read: named as `${paths.KEY}` or, in a config loaded interpolated, its value found elsewhere.
    values = list(_leaves({section: block for section, block in config.items() if section != "paths"}))
    unread = [
        key
        for key in MODEL_PATHS
        if paths.get(key) is not None and paths[key] not in values and f"${{paths.{key}}}" not in config.to_str()
    ]
    if unread:
        named = ", ".join(f"paths.{key} = {paths[key]!r}" for key in unread)
        raise InputError(
            f"{named}: nothing in this config reads it, so another model would run. The shipped configs take "
            "the model (a folder holding options.json and the weights, a model's name or hf:ORG/REPO) as "
            "--paths.elmo_model; other configs as the `model` of spacy-elmo.BiLM.v3 (--components.elmo.model.model)"
        )


def _leaves(block: Any) -> Iterator[Any]:
    if isinstance(block, dict):
        for value in block.values():
            yield from _leaves(value)
    else:
        yield block


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
        self._check_width(listener, component_name)
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

    def _check_width(self, listener: ElmoListener, component_name: str) -> None:
        """A listener built for layers of another width than this biLM gives (a saved pipeline whose
        biLM file comes from another model) is refused when the pipeline is linked, not at the
        first doc inside a matrix product."""
        if not (listener.has_dim("nO") and self.model.has_dim("nO")):
            return
        built_for, gives = listener.get_dim("nO"), self.model.get_dim("nO")
        if built_for != gives:
            raise SavedWeightsError(
                f"{component_name!r} listens for {built_for}-wide layers, but the {self.name!r} component's biLM "
                f"gives {gives}-wide ones: the saved {self.name}/model and {component_name}/model come from two "
                f"pipelines. Copy the saved pipeline whole, or train {component_name!r} again on this biLM"
            )

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
            host_layers = None if dtype is None else self.model.ops.to_numpy(doc_layers).astype(dtype, copy=False)
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
        bilm = ensure_loaded(self.model)
        dtype = layer_dtype(self.cfg["store_layers"])
        vectors = [np.zeros((len(doc), bilm.output_dim), dtype=np.float32) for doc in docs]
        layers: List[Optional[np.ndarray]] = [
            None if dtype is None else np.zeros((bilm.n_layers, len(doc), bilm.output_dim), dtype) for doc in docs
        ]
        for d, rows, piece in predict_pieces(self.model, docs):
            vectors[d][rows] = self.pooling.predict([piece])[0]
            doc_layers = layers[d]
            if doc_layers is not None:
                doc_layers[:, rows] = piece
        for doc, doc_vectors, doc_layers in zip(docs, vectors, layers):
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
            self.cache.release()  # a biLM that learns (`frozen` set false mid-run) makes cached layers stale
            layers, bp_layers = self.model.begin_update(docs)
            after = partial(self.finish_update, sgd) if sgd is not None else None
            accumulate, backprop = gradient_callbacks(self.model.ops, layers, bp_layers, losses, self.name, after)
        feed_listeners(self.listeners, docs, layers, accumulate, backprop)
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
        ensure_loaded(self.model)
        fields: Dict[str, Callable[[], bytes]] = {
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "model": lambda: model_bytes(self.model),
            "pooling": lambda: model_bytes(self.pooling),
        }
        return to_bytes(fields, exclude)

    def to_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> None:
        """As to_bytes; `cfg` and `model` are each written beside and renamed (module docstring)."""
        self._validate_serialization_attrs()
        ensure_loaded(self.model)
        fields: Dict[str, Callable[[Path], Any]] = {
            "cfg": lambda p: replace_file(p, (srsly.json_dumps(self.cfg, indent=2) + "\n").encode("utf8")),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: replace_file(p, model_bytes(self.model)),
            "pooling": lambda p: replace_file(p, model_bytes(self.pooling)),
        }
        to_disk(path, fields, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        """The weights from the bytes, the settings from the config the component was built with: the
        saved `cfg` is a record, never read back (spaCy's rule: config.cfg is the truth at load)."""
        self.cache.release()  # new weights: cached layers would be stale
        fields: Dict[str, Callable[[bytes], Any]] = {
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "model": lambda b: load_model_bytes(self.model, b),
            "pooling": lambda b: load_pooling_bytes(self.pooling, b),
        }
        from_bytes(bytes_data, fields, exclude)
        return self

    def from_disk(self, path: Any, *, exclude: Iterable[str] = tuple()) -> "ElmoComponent":
        """As from_bytes."""
        self.cache.release()
        self._validate_serialization_attrs()
        fields: Dict[str, Callable[[Path], Any]] = {
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "model": lambda p: load_model_bytes(self.model, read_part(p)),
            "pooling": lambda p: load_pooling_bytes(self.pooling, read_part(p)),
        }
        try:
            from_disk(path, fields, exclude)
        except ElmoError as err:  # a saved part that is refused: say which pipeline and file hold it
            part = "pooling" if "elmo pooling" in str(err) else "model"
            message = str(err) if str(Path(path)) in str(err) else f"{Path(path) / part}: {err}"
            raise type(err)(message) from None
        return self

    def add_label(self, label: str) -> int:
        raise NotImplementedError(f"the {self.name!r} component has no labels")
