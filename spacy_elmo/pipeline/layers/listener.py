"""ElmoListener: a head's view of the shared biLM run by an upstream `elmo` component, the upstream's side
of the protocol (`feed_listeners`, `gradient_callbacks`), and what `nlp.replace_listeners` uses to turn a
listener into a standalone copy (its config and its model).

In training the upstream component runs the biLM once per batch and hands each listener the layers and
a callback for their gradient (`receive`); the listener checks the batch is the one it is asked about
and passes both on to its head's forward, keeping no reference: the layers (and, with a fine-tuned
biLM, the torch graph behind them) live only as long as the head's own backprop. At prediction,
components may batch differently, so the listener reads `doc._.elmo["layers"]` (float16 or float32,
checked against the upstream's biLM); docs without them (e.g. the sample docs a head is initialized
on) are run through the upstream's model.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import numpy as np
from spacy.attrs import ORTH
from spacy.tokens import Doc
from thinc.api import Model, Ops, chain, concatenate, with_array
from thinc.types import Floats2d, Floats3d

from ...elmo.errors import InputError
from ...elmo.util.validation import validate_arguments
from ..bilm_layer.thinc_bilm import declared_layers, set_frozen
from ..doc_data import check_width
from ..errors import SavedWeightsError
from ..hooks import read_doc_data
from .projection import projection
from .read_rows import mix_read_rows

LISTENER_ARCHITECTURE = "spacy-elmo.ElmoListener.v1"
# What `replace_listeners` puts in the listener's place (registered in architectures.py).
STANDALONE_ARCHITECTURE = "spacy-elmo.ElmoTok2Vec.v1"


class ElmoListener(Model):
    """`List[Doc] -> List[Floats3d]`, `[L+1, n, 2P]` per doc; the node that `replace_listeners` swaps
    for a copy of the upstream biLM layer (same signature)."""

    name = "elmo-listener"

    def __init__(self, upstream_name: str) -> None:
        Model.__init__(
            self,
            name=self.name,
            forward=_listener_forward,
            init=_listener_init,
            dims={"nO": None},
            attrs={"upstream_name": upstream_name},
        )
        self._upstream: Optional[Any] = None
        self._batch_id: Optional[int] = None
        self._outputs: Optional[List[Floats3d]] = None
        self._backprop: Optional[Callable] = None

    @property
    def upstream_name(self) -> str:
        return self.attrs["upstream_name"]

    @classmethod
    def get_batch_id(cls, docs: List[Doc]) -> int:
        """The sum of the batch's token hashes (spaCy's Tok2VecListener uses the same), modulo 2**64: from
        each doc's array of hashes, not its Token objects (built for every doc of every step)."""
        return sum(int(doc.to_array(ORTH).sum(dtype=np.uint64)) for doc in docs)

    def bind(self, upstream: Any) -> None:
        """Called by the upstream component when the pipeline links its components."""
        self._upstream = upstream
        if upstream.model.has_dim("nO"):
            self.set_dim("nO", upstream.model.get_dim("nO"), force=True)

    def receive(self, batch_id: int, outputs: List[Floats3d], backprop: Callable) -> None:
        """Hold the upstream's layers of a training batch until the head's forward takes them.

        batch_id (int): `get_batch_id` of the batch's docs.
        outputs (List[Floats3d]): the batch's layers, `[L+1, n, 2P]` per doc.
        backprop (Callable): takes the head's gradient for `outputs`.
        """
        self._batch_id = batch_id
        self._outputs = outputs
        self._backprop = backprop

    def hand_over(self, docs: List[Doc]) -> Tuple[List[Floats3d], Callable]:
        """The received layers and callback for `docs`, given once: the listener forgets them, so that
        nothing of the batch outlives the head's update."""
        if self.get_batch_id(docs) != self._batch_id:
            raise InputError(
                "ElmoListener got a batch that differs from the one its upstream 'elmo' component last "
                "processed: run the upstream component's update on the same examples first (it must come "
                "before this component in the pipeline and not be frozen in [training])"
            )
        if self._outputs is None or self._backprop is None:
            raise InputError(
                "ElmoListener was asked twice for the layers of one training batch: its upstream 'elmo' "
                "component hands them over once per update; run the upstream's update before each of the head's"
            )
        outputs, backprop = self._outputs, self._backprop
        self.drop_batch()
        return outputs, backprop

    def drop_batch(self) -> None:
        """Forget the received layers and callback (the batch id stays, to check the next batch)."""
        self._outputs = None
        self._backprop = None

    def reset(self) -> None:
        """Back to the state of a new listener: no batch received."""
        self.drop_batch()
        self._batch_id = None

    def check_upstream(self) -> Any:
        if self._upstream is None:
            raise InputError(
                f"an ElmoListener listens to an 'elmo' component named {self.upstream_name!r}, but the pipeline "
                f"has no such component before it. Add one (nlp.add_pipe('elmo', name={self.upstream_name!r}, "
                "before=<this component>)) or set the listener's `upstream` to the name of the one you have; "
                "to use the head without an upstream component, nlp.replace_listeners() it."
            )
        return self._upstream

    def from_docs(self, docs: List[Doc]) -> List[Floats3d]:
        """The layers stored on the docs (host arrays, moved to this model's ops as float32), else
        computed."""
        stored = [self._stored_layers(doc) for doc in docs]
        layers: List[Optional[Floats3d]] = [
            None if value is None else self.ops.asarray3f(cast(Floats3d, value)) for value in stored
        ]
        missing = [i for i, value in enumerate(layers) if value is None]
        if missing:
            upstream = self.check_upstream()
            computed = upstream.model.predict([docs[i] for i in missing])
            for i, value in zip(missing, computed):
                layers[i] = value
        return layers  # type: ignore[return-value]

    def _stored_layers(self, doc: Doc) -> Optional[np.ndarray]:
        data = read_doc_data(doc)
        stored = None if data is None else data.get("layers")
        if stored is not None and self._upstream is not None:
            model = self._upstream.model
            width = model.get_dim("nO") if model.has_dim("nO") else None
            check_width(doc, stored, declared_layers(model), width, self._upstream.name)
        return stored


def _listener_init(model: ElmoListener, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    upstream = model.check_upstream()
    if upstream.model.has_dim("nO"):
        model.set_dim("nO", upstream.model.get_dim("nO"), force=True)


def _listener_forward(model: ElmoListener, docs: List[Doc], is_train: bool) -> Tuple[List[Floats3d], Callable]:
    if is_train and model._batch_id is not None:
        return model.hand_over(docs)
    return model.from_docs(docs), lambda d_layers: []


def no_gradient(d_layers: List[Floats3d]) -> List[Doc]:
    """The listeners' callback for a frozen biLM: there is no gradient to pass on."""
    return []


def gradient_callbacks(
    ops: Ops,
    layers: List[Floats3d],
    backprop_layers: Callable,
    losses: Dict[str, float],
    name: str,
    after_backprop: Optional[Callable[[], Any]] = None,
) -> Tuple[Callable, Callable]:
    """The callbacks an upstream's update hands its listeners for a biLM that learns, as spaCy's tok2vec
    does: every call adds its gradient to the batch's total and its sum of squares to `losses[name]`; the
    last listener's (`backprop`) then backpropagates the total into the biLM and calls `after_backprop`.

    ops (Ops): the ops of the layers.
    layers (List[Floats3d]): the batch's layers, `[L+1, n, 2P]` per doc.
    backprop_layers (Callable): the biLM's backprop for `layers`.
    losses (Dict[str, float]): the losses of the update, by component.
    name (str): the upstream component's name in `losses`.
    after_backprop (Optional[Callable[[], Any]]): e.g. the upstream's `finish_update(sgd)`.
    RETURNS (Tuple[Callable, Callable]): `accumulate` (all listeners but the last) and `backprop`.
    """
    d_total = [ops.xp.zeros_like(x) for x in layers]

    def accumulate(d_layers: List[Floats3d]) -> List[Doc]:
        for total, d in zip(d_total, d_layers):
            total += d
        losses[name] += float(sum(ops.xp.square(d).sum() for d in d_layers))
        return []

    def backprop(d_layers: List[Floats3d]) -> List[Doc]:
        accumulate(d_layers)
        backprop_layers(d_total)
        if after_backprop is not None:
            after_backprop()
        return []

    return accumulate, backprop


def feed_listeners(
    listeners: List[ElmoListener], docs: List[Doc], layers: List[Floats3d], accumulate: Callable, backprop: Callable
) -> None:
    """Hand every listener the batch's layers: the last one with `backprop`, the others with `accumulate`."""
    batch_id = ElmoListener.get_batch_id(docs)
    for listener in listeners[:-1]:
        listener.receive(batch_id, layers, accumulate)
    if listeners:
        listeners[-1].receive(batch_id, layers, backprop)


def build_elmo_tok2vec(
    source: Model[List[Doc], List[Floats3d]],
    mix: Model[List[Floats3d], List[Floats2d]],
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """`source` (a listener or a biLM layer) -> mix (of the read tokens' rows) -> optionally
    `[features; ELMo]` -> optionally a projection to `width`. Listener and standalone versions share this
    so their structures match."""
    model: Model = mix_read_rows(source, mix)
    if extra_features is not None:
        model = concatenate(model, extra_features)
    if width is not None:
        model = chain(model, with_array(projection(width)))
        model.set_dim("nO", width)
    return model


@validate_arguments("spacy-elmo.ElmoListener.v1")
def build_elmo_listener_v1(
    mix: Model[List[Floats3d], List[Floats2d]],
    upstream: str = "elmo",
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """`spacy-elmo.ElmoListener.v1`: a head's tok2vec, fed by an `elmo` component's biLM layers.

    mix (Model[List[Floats3d], List[Floats2d]]): the head's own pooling of the layers (`ScalarMix.v2`).
    upstream (str): the `elmo` component to listen to; "*" for any.
    extra_features (Optional[Model[List[Doc], List[Floats2d]]]): token features concatenated with ELMo's.
    width (Optional[int]): project the result to this width; null keeps it.
    RETURNS (Model[List[Doc], List[Floats2d]]): one vector per token.
    """
    return build_elmo_tok2vec(source=ElmoListener(upstream), mix=mix, extra_features=extra_features, width=width)


@validate_arguments("spacy-elmo.ElmoTok2Vec.v1")
def build_elmo_tok2vec_v1(
    bilm: Model[List[Doc], List[Floats3d]],
    mix: Model[List[Floats3d], List[Floats2d]],
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
    frozen: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """`spacy-elmo.ElmoTok2Vec.v1`: the listener's standalone twin, holding its own biLM (what
    `replace_listeners` produces).

    bilm (Model[List[Doc], List[Floats3d]]): the biLM layer (`BiLM.v3`).
    mix (Model[List[Floats3d], List[Floats2d]]): as in `ElmoListener.v1`.
    extra_features (Optional[Model[List[Doc], List[Floats2d]]]): as in `ElmoListener.v1`.
    width (Optional[int]): as in `ElmoListener.v1`.
    frozen (bool): the biLM gets no gradient; False fine-tunes it with the head.
    RETURNS (Model[List[Doc], List[Floats2d]]): one vector per token.
    """
    set_frozen(bilm, frozen)
    return build_elmo_tok2vec(source=bilm, mix=mix, extra_features=extra_features, width=width)


def standalone_bilm(copy: Model, listener: ElmoListener, upstream: Any) -> Model:
    """What `replace_listeners` puts in a head for `listener` (the upstream's model attr
    `replace_listener`): the copy of the upstream `elmo` component's model, the biLM layer, frozen as the
    upstream is, as ElmoTok2Vec.v1 sets its own."""
    set_frozen(copy, upstream.frozen)
    return copy


def find_listener_cfg(cfg: Any) -> Optional[Dict[str, Any]]:
    """The ElmoListener section in a head's `tok2vec` config: itself, or nested (a Tok2Vec's `embed`)."""
    if not isinstance(cfg, dict):
        return None
    if cfg.get("@architectures") == LISTENER_ARCHITECTURE:
        return cfg
    for value in cfg.values():
        found = find_listener_cfg(value)
        if found is not None:
            return found
    return None


def replace_listener_cfg(
    tok2vec_model_cfg: Dict[str, Any], listener_cfg: Dict[str, Any], frozen: bool
) -> Dict[str, Any]:
    """The config of the listener's standalone twin, for `nlp.replace_listeners` (the upstream's model
    attr `replace_listener_cfg`, with `frozen` bound by the upstream component).

    tok2vec_model_cfg (Dict[str, Any]): the upstream component's `model` config (the biLM layer).
    listener_cfg (Dict[str, Any]): the section spaCy replaces: the head's whole `model.tok2vec`; the
        listener may sit inside it (the shipped configs: `model.tok2vec.embed`).
    frozen (bool): whether the copied biLM stays frozen, as in the upstream component.
    RETURNS (Dict[str, Any]): a `spacy-elmo.ElmoTok2Vec.v1` section with the listener's mix, features
        and width, and a copy of the biLM layer.
    """
    found = find_listener_cfg(listener_cfg)
    if found is None:
        raise InputError(f"replace_listeners found no {LISTENER_ARCHITECTURE} in {listener_cfg!r}")
    kept = {k: v for k, v in found.items() if k not in ("@architectures", "upstream")}
    return {"@architectures": STANDALONE_ARCHITECTURE, "bilm": tok2vec_model_cfg, "frozen": frozen, **kept}


def check_listener_width(listener: ElmoListener, model: Model, upstream: str, component_name: str) -> None:
    """A listener built for layers of another width than the upstream's biLM `model` gives (a saved
    pipeline whose biLM file comes from another model) is refused when the pipeline is linked, not at the
    first doc inside a matrix product."""
    if not (listener.has_dim("nO") and model.has_dim("nO")):
        return
    built_for, gives = listener.get_dim("nO"), model.get_dim("nO")
    if built_for != gives:
        raise SavedWeightsError(
            f"{component_name!r} listens for {built_for}-wide layers, but the {upstream!r} component's biLM "
            f"gives {gives}-wide ones: the saved {upstream}/model and {component_name}/model come from two "
            f"pipelines. Copy the saved pipeline whole, or train {component_name!r} again on this biLM"
        )
