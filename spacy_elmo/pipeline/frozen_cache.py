"""The layers of a frozen biLM, computed once per distinct doc while a pipeline trains.

`spacy train` runs the training docs through the biLM every epoch and the dev docs at every
evaluation; a frozen, stateless biLM gives the same layers each time, so they are kept in a
byte-bounded LRU (`ActivationCache`). This object owns everything about that cache: the key of a doc,
when the cached layers stop being valid (another biLM, new weights) and the embedding of all training
docs ahead of the first step. Its embeddings show a progress bar on stderr (spaCy's CLI shows no INFO
log), so only while a pipeline trains, and only when they are long (`progress_bar`).
"""

from __future__ import annotations

import logging
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Dict, Hashable, Iterable, Iterator, List, Optional

import numpy as np
from spacy.attrs import ORTH, SENT_START
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d
from tqdm import tqdm

from ..nn.lru import LRU
from .bilm_layer.thinc_bilm import get_bilm, run_settings

# Docs per biLM call when the training docs are embedded ahead of the first step.
PREFILL_BATCH_DOCS = 1000
# Training text from this size on shows a progress bar from the start (about a thousand sentences).
PROGRESS_MIN_TOKENS = 20_000
# Text of unknown size shows a progress bar once its embedding has run this long.
PROGRESS_DELAY_S = 2.0

logger = logging.getLogger(__name__)


def _nbytes(value: Any) -> int:
    return int(value.nbytes)


class ActivationCache(LRU[Hashable, Any]):
    """Layers (NumPy, or CuPy on a GPU) by key, at most `max_bytes` of them; thread-safe (nn/lru.py).
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


def progress_bar(description: str, total: Optional[int] = None) -> tqdm:
    """A tqdm bar of tokens on stderr. Of `total` tokens: shown from the start if they are at least
    PROGRESS_MIN_TOKENS (it moves once per batch of PREFILL_BATCH_DOCS, so a delay would hide it until
    the first batch is done); of an unknown number: shown once it has run PROGRESS_DELAY_S."""
    if total is not None:
        when: Dict[str, Any] = {"disable": total < PROGRESS_MIN_TOKENS}
    else:
        when = {"delay": PROGRESS_DELAY_S}
    return tqdm(total=total, desc=description, unit=" tokens", unit_scale=True, mininterval=0.5, **when)


class FrozenLayerCache:
    """The cached layers of the frozen biLM inside `model` (an `elmo` component's model).

    model (Model[List[Doc], List[Floats3d]]): the biLM layer whose output is cached.
    max_bytes (int): the budget of the LRU; 0 turns caching off.
    """

    def __init__(self, model: Model[List[Doc], List[Floats3d]], max_bytes: int) -> None:
        self.model = model
        self.store = ActivationCache(max_bytes)
        self._source: Optional[weakref.ref] = None  # the torch biLM whose layers the store holds
        self._pending_docs: Optional[Callable[[], Iterable[Doc]]] = None  # embedded by `prefill`
        self._miss_bar: Optional[tqdm] = None  # counts the tokens embedded inside a `progress` block

    def __len__(self) -> int:
        return len(self.store)

    def __getstate__(self) -> Dict[str, Any]:
        """A pickle or copy (a worker of `nlp.pipe(n_process=...)` under `spawn`, `copy.deepcopy`) starts
        with an empty cache and no pending prefill: the cached layers belong to this process's biLM object
        (a weak reference, which does not pickle), the docs' source is the caller's closure, and a progress
        bar belongs to its process. The copy caches again as it trains, without the prefill."""
        state = dict(self.__dict__)
        state.update(store=ActivationCache(self.store.capacity), _source=None, _pending_docs=None, _miss_bar=None)
        return state

    @property
    def enabled(self) -> bool:
        """False when nothing can be cached: a stateful biLM's output depends on history, and a budget
        of 0 bytes turns caching off."""
        return not run_settings(self.model).stateful and self.store.capacity > 0

    def clear(self) -> None:
        """Forget every cached layer (call it whenever the biLM's weights change) and any pending prefill."""
        self.store.clear()
        self._source = None
        self._pending_docs = None

    def layers(self, docs: List[Doc]) -> List[Floats3d]:
        """The layers of `docs`: from the cache where present, else computed (and kept).

        docs (List[Doc]): the docs, tokenized.
        RETURNS (List[Floats3d]): `[L+1, n, 2P]` per doc, read-only where cached.
        """
        if not self.enabled:
            return self.model.predict(docs)
        self._check_source()
        keys = [doc_key(doc) for doc in docs]
        layers: List[Any] = [self.store.get(key) for key in keys]
        missing = [i for i, value in enumerate(layers) if value is None]
        if missing:
            for i, value in zip(missing, self.model.predict([docs[i] for i in missing])):
                layers[i] = value
                self.store.put(keys[i], value)
            if self._miss_bar is not None:
                self._miss_bar.update(sum(len(docs[i]) for i in missing))
        return layers

    def _check_source(self) -> None:
        """Empty the cache when the model holds another torch biLM than the one its layers came from
        (`set_bilm`, a loaded pipeline's new holder)."""
        bilm = get_bilm(self.model)
        if self._source is None or self._source() is not bilm:
            self.store.clear()
            self._source = None if bilm is None else weakref.ref(bilm)

    def prefill_from(self, get_docs: Callable[[], Iterable[Doc]]) -> None:
        """Remember where the training docs come from; `prefill` embeds them."""
        self._pending_docs = get_docs

    def prefill(self, description: str) -> None:
        """Embed the docs given to `prefill_from`, in batches of PREFILL_BATCH_DOCS, once.

        Early training batches are small (spaCy's batch sizes start at 100 words) and the biLM runs far
        slower per token on a few sentences; every training doc is embedded in the first epoch anyway.
        Done only if all of them fit in the cache: the LRU would evict the first ones before their turn.
        With an augmenter the docs differ from epoch to epoch and the prefilled layers are rarely used
        (`cache_mb = 0` turns caching off).

        description (str): the progress bar's label.
        """
        get_docs, self._pending_docs = self._pending_docs, None
        bilm = get_bilm(self.model)
        if get_docs is None or bilm is None or not self.enabled:
            return
        bytes_per_token = 4 * bilm.n_layers * bilm.output_dim  # float32 [L+1, n, 2P] per doc
        docs: List[Doc] = []
        n_tokens = 0
        for doc in get_docs():
            docs.append(doc)
            n_tokens += len(doc)
            if n_tokens * bytes_per_token > self.store.capacity:
                logger.info(
                    "the training docs' layers need more than the cache's %d MB: they are computed as the batches come",
                    self.store.capacity // 2**20,
                )
                return
        with progress_bar(description, total=n_tokens) as bar:
            for start in range(0, len(docs), PREFILL_BATCH_DOCS):
                batch = docs[start : start + PREFILL_BATCH_DOCS]
                self.layers(batch)
                bar.update(sum(len(doc) for doc in batch))

    @contextmanager
    def progress(self, description: str) -> Iterator[None]:
        """Inside the block, the tokens of docs that miss the cache are counted on a progress bar (the
        first evaluation of `spacy train` embeds the dev text)."""
        bar = progress_bar(description)
        self._miss_bar = bar
        try:
            yield
        finally:
            self._miss_bar = None
            bar.close()
