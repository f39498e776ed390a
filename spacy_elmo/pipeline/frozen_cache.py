"""The layers of a frozen biLM, computed once per distinct doc while a pipeline trains.

`spacy train` runs the training docs through the biLM every epoch and the dev docs at every
evaluation; a frozen, stateless biLM gives the same layers each time, so they are kept in a
byte-bounded LRU (`ActivationCache`). This object owns everything about that cache: the key of a doc,
when the cached layers stop being valid (another biLM, new weights), its lifetime (`start` at the first
training step, `release` when training ends) and how it fills: as training batches first meet their docs,
each biLM call topped up with training docs not yet met to a few full batches (the biLM runs far
slower per token on the few sentences of an early training batch) and a short run embeds only about
what it uses. Embedding text of unknown size shows a progress bar on stderr once it runs long (spaCy's
CLI shows no INFO log), only while a pipeline trains (`progress_bar`).
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, List, Optional

import numpy as np
from spacy.attrs import ORTH, SENT_START
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d
from tqdm import tqdm

from ..elmo.nn.lru import LRU
from .bilm_layer.thinc_bilm import get_bilm, run_settings

# Embedding text of unknown size shows a progress bar once it has run this long.
PROGRESS_DELAY_S = 2.0


# A training batch's biLM call is topped up to this many full biLM batches: docs of random lengths pad
# more than the length-sorted batches of a larger call (one batch's worth made a full run's first epoch
# slower than embedding the corpus up front; four matched it: docs/results.md), and a run of S steps
# embeds at most about S x 4 x max_batch_tokens tokens.
TOP_UP_BATCHES = 4


def _nbytes(value: Any) -> int:
    return int(value.nbytes)


class ActivationCache(LRU[Hashable, Any]):
    """Layers (NumPy, or CuPy on a GPU) by key, at most `max_bytes` of them; thread-safe (elmo/nn/lru.py).
    Keyed by `doc_key`: a stateless frozen biLM's output depends on nothing else."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes, size_of=_nbytes, what="activation cache budget in bytes (the elmo cache_mb)")

    def put(self, key: Hashable, value: Any) -> None:
        """Store a read-only reference; the oldest entries go first when the budget is exceeded."""
        if isinstance(value, np.ndarray):  # CuPy arrays (on a GPU) have no write flag
            value.setflags(write=False)
        self.put_many(((key, value),))


def doc_key(doc: Doc) -> Hashable:
    """What a stateless biLM's layers for `doc` depend on: its tokens and, when the doc is split per
    sentence, where the sentences start. Arrays of string hashes, not Token objects: the keys are built
    for every doc of every step."""
    starts = doc.to_array(SENT_START).tobytes() if doc.has_annotation("SENT_START") else None
    return doc.to_array(ORTH).tobytes(), starts


def progress_bar(description: str) -> tqdm:
    """A tqdm bar of tokens on stderr, shown once it has run PROGRESS_DELAY_S; none where stderr is not a
    terminal (a log, CI), as spaCy's own bars: there each redraw, which a terminal writes over, is glued
    to the last one on the same line."""
    return tqdm(
        desc=description, unit=" tokens", unit_scale=True, mininterval=0.5, delay=PROGRESS_DELAY_S, disable=None
    )


class FrozenLayerCache:
    """The cached layers of the frozen biLM inside `model` (an `elmo` component's model), kept from
    `start` to `release`; outside that, `layers` runs the biLM and keeps nothing.

    model (Model[List[Doc], List[Floats3d]]): the biLM layer whose output is cached.
    max_bytes (int): the budget of the LRU; 0 turns caching off.
    """

    def __init__(self, model: Model[List[Doc], List[Floats3d]], max_bytes: int) -> None:
        self.model = model
        self.store = ActivationCache(max_bytes)
        self.live = False  # between `start` and `release`
        self._source: Optional[weakref.ref] = None  # the torch biLM whose layers the store holds
        self._get_training_docs: Optional[Callable[[], Iterable[Doc]]] = None  # from `fill_from`
        self._unmet: Optional[Iterator[Doc]] = None  # training docs that may top up a biLM call
        self._miss_bar: Optional[tqdm] = None  # counts the tokens embedded inside a `progress` block

    def __len__(self) -> int:
        return len(self.store)

    def __getstate__(self) -> Dict[str, Any]:
        """A pickle or copy (a worker of `nlp.pipe(n_process=...)` under `spawn`, `copy.deepcopy`) starts
        with an empty cache and no training docs to top up with: the cached layers belong to this process's
        biLM object (a weak reference, which does not pickle), the docs' source is the caller's closure, and
        a progress bar belongs to its process. A live copy caches again as it trains."""
        state = dict(self.__dict__)
        state.update(
            store=ActivationCache(self.store.capacity),
            _source=None,
            _get_training_docs=None,
            _unmet=None,
            _miss_bar=None,
        )
        return state

    @property
    def enabled(self) -> bool:
        """False when nothing can be cached: a stateful biLM's output depends on history, and a budget
        of 0 bytes turns caching off."""
        return not run_settings(self.model).stateful and self.store.capacity > 0

    def fill_from(self, get_docs: Callable[[], Iterable[Doc]]) -> None:
        """Remember where the training docs come from (`initialize`'s examples): they top up the biLM
        calls of training batches."""
        self._get_training_docs = get_docs

    def start(self) -> None:
        """Begin keeping layers (the first training step)."""
        if not self.live:
            self.live = True
            self._unmet = None if self._get_training_docs is None else iter(self._get_training_docs())

    def release(self) -> None:
        """Forget every cached layer and stop keeping them (training ended, or the biLM's weights changed)."""
        self.live = False
        self.store.clear()
        self._source = None
        self._unmet = None

    def layers(self, docs: List[Doc], top_up: bool = False) -> List[Floats3d]:
        """The layers of `docs`: while live, from the cache where present, else computed and kept.

        docs (List[Doc]): the docs, tokenized.
        top_up (bool): a training batch's: where the biLM runs, training docs not yet met join the call
            until it holds `max_batch_tokens` tokens (their layers are kept for their turn).
        RETURNS (List[Floats3d]): `[L+1, n, 2P]` per doc, read-only where cached.
        """
        if not (self.live and self.enabled):
            return self.model.predict(docs)
        self._check_source()
        keys = [doc_key(doc) for doc in docs]
        layers: List[Any] = [self.store.get(key) for key in keys]
        missing = [i for i, value in enumerate(layers) if value is None]
        if not missing:
            return layers
        run = [docs[i] for i in missing]
        run_keys = [keys[i] for i in missing]
        if top_up:
            self._top_up(run, run_keys)
        for i, value in zip(missing, self._embed(run, run_keys)):
            layers[i] = value
        if self._miss_bar is not None:
            self._miss_bar.update(sum(len(doc) for doc in run))
        return layers

    def _embed(self, docs: List[Doc], keys: List[Hashable]) -> List[Floats3d]:
        """Run the biLM on `docs` and keep their layers."""
        computed = self.model.predict(docs)
        for key, value in zip(keys, computed):
            self.store.put(key, value)
        return computed

    def _top_up(self, docs: List[Doc], keys: List[Hashable]) -> None:
        """Add unmet training docs to `docs` (in place) until they hold TOP_UP_BATCHES x `max_batch_tokens`
        tokens, while the cache has room for them (an LRU too small for the corpus would evict them before
        their turn)."""
        bilm = get_bilm(self.model)
        if self._unmet is None or bilm is None:
            return
        bytes_per_token = 4 * bilm.n_layers * bilm.output_dim  # float32 [L+1, n, 2P] per doc
        n_tokens = sum(len(doc) for doc in docs)
        target = TOP_UP_BATCHES * run_settings(self.model).max_batch_tokens
        taken = set(keys)
        for doc in self._unmet:
            if n_tokens >= target:
                return
            key = doc_key(doc)
            if key in taken or key in self.store:
                continue
            if self.store.size + (n_tokens + len(doc)) * bytes_per_token > self.store.capacity:
                self._unmet = None
                return
            docs.append(doc)
            keys.append(key)
            taken.add(key)
            n_tokens += len(doc)
        self._unmet = None

    def _check_source(self) -> None:
        """Empty the cache when the model holds another torch biLM than the one its layers came from
        (`set_bilm`, a loaded pipeline's new holder)."""
        bilm = get_bilm(self.model)
        if self._source is None or self._source() is not bilm:
            self.store.clear()
            self._source = None if bilm is None else weakref.ref(bilm)

    @contextmanager
    def progress(self, description: str) -> Iterator[None]:
        """Inside the block, while the cache lives, the tokens of docs that miss it are counted on a
        progress bar (the first evaluation of `spacy train` embeds the dev text)."""
        if not self.live:
            yield
            return
        bar = progress_bar(description)
        self._miss_bar = bar
        try:
            yield
        finally:
            self._miss_bar = None
            bar.close()
