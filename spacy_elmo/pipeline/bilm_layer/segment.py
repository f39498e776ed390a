"""Where to cut a long document before the biLM sees it, and which rows of each piece to keep.

ELMo has no length limit, but its cost and memory grow with the longest sequence of a batch, and it was
trained on sentences. The biLM layer asks a `Segmenter` for the pieces of each doc; the default,
`SentenceWindows` (registered as `spacy-elmo.sentence_windows.v1`), embeds a document sentence by
sentence when it has sentence boundaries; a sentence (or a document without boundaries) longer than
`max_length` is cut into overlapping windows, and each token keeps the vectors of the window where it
sits furthest from an edge: every kept token sees at least `overlap` tokens of context on each side
(less only at the document's own edges). Any other registered function that returns a `Segmenter`
(by paragraph, by a fixed number of sentences, ...) can take its place in the config.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Protocol, Sequence, runtime_checkable

import numpy as np
from thinc.api import Model
from typing_extensions import Annotated

from ...elmo.errors import InputError
from ...elmo.util.validation import must_be, short_repr, validate_arguments

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass(frozen=True)
class Segment:
    """Embed tokens `[start, end)`; keep the rows of tokens `[keep_start, keep_end)`."""

    start: int
    end: int
    keep_start: int
    keep_end: int


def check_window_settings(max_length: int, overlap: int) -> None:
    if max_length < 1:
        raise InputError(f"max_length must be at least 1, got {max_length}")
    if not 0 <= 2 * overlap < max_length:
        raise InputError(f"overlap must be >= 0 and less than half of max_length ({max_length}), got {overlap}")


def windows(start: int, end: int, max_length: int, overlap: int) -> List[Segment]:
    """Cover tokens `[start, end)` with windows of at most `max_length` tokens."""
    check_window_settings(max_length, overlap)
    if end - start <= max_length:
        return [Segment(start, end, start, end)]
    core = max_length - 2 * overlap
    segments = []
    keep = start
    while keep < end:
        keep_end = min(keep + core, end)
        # Shift the window inwards at the edges, so that it is always full and context is not wasted.
        window_start = max(start, min(keep - overlap, end - max_length))
        window_end = min(end, window_start + max_length)
        segments.append(Segment(window_start, window_end, keep, keep_end))
        keep = keep_end
    return segments


def segment(n_tokens: int, sentence_starts: Optional[Sequence[int]], max_length: int, overlap: int) -> List[Segment]:
    """Segments covering tokens `[0, n_tokens)` once each: per sentence when `sentence_starts` (the
    first token index of each sentence, starting with 0) is given, windows otherwise."""
    if n_tokens == 0:
        return []
    bounds = list(sentence_starts) if sentence_starts else [0]
    if bounds[0] != 0 or any(b <= a for a, b in zip(bounds, bounds[1:])) or bounds[-1] >= n_tokens:
        raise InputError(f"sentence starts must rise from 0 and stay below {n_tokens}, got {bounds[:10]}")
    ends = bounds[1:] + [n_tokens]
    out: List[Segment] = []
    for start, end in zip(bounds, ends):
        out.extend(windows(start, end, max_length, overlap))
    return out


@runtime_checkable
class Segmenter(Protocol):
    """Cuts one doc into the pieces the biLM reads. `kept` holds the indices of the doc's tokens that
    the biLM sees (whitespace tokens are left out), and every `Segment` indexes into `kept`: the keep
    ranges must cover `0 .. len(kept)` once each, in order (`check_segments` says where they do not).
    While training with a frozen biLM the `elmo` component caches a doc's layers under its token texts
    and sentence starts: a segmenter that reads anything else of the doc needs `cache_mb = 0`."""

    def __call__(self, doc: "Doc", kept: np.ndarray) -> List[Segment]: ...


def check_segmenter(segmenter: object) -> Segmenter:
    """`segmenter` if it can be a Segmenter, refused when the config is built otherwise: any registered
    `@misc` function's result fits the config, and a span filter, a suggester, a logger or a layer would
    fail at the first doc deep inside. Its call must take (doc, kept), and where it declares types, take
    a Doc first and return Segments."""
    problem = _not_a_segmenter(segmenter)
    if problem:
        raise InputError(
            "spacy-elmo.BiLM: 'segmentation' must be a Segmenter (spacy_elmo.pipeline.bilm_layer.segment."
            f"Segmenter: called with a doc and its kept token indices, it returns Segments), got "
            f"{_described(segmenter)}, which {problem}; give a function registered to return one, such as "
            "spacy-elmo.sentence_windows.v1, or null"
        )
    return segmenter  # type: ignore[return-value]


def _not_a_segmenter(segmenter: object) -> Optional[str]:
    if not callable(segmenter):
        return "cannot be called"
    try:
        signature = inspect.signature(segmenter)
        signature.bind(None, None)
    except (TypeError, ValueError) as err:
        return f"cannot be called with (doc, kept): {err}"
    first = next(iter(signature.parameters.values()))
    if not _names(first.annotation, "Doc"):
        return f"takes {_annotation(first.annotation)} first"
    if not _names(signature.return_annotation, "Segment"):
        return f"returns {_annotation(signature.return_annotation)}"
    return None


def _names(annotation: Any, name: str) -> bool:
    """Whether a declared type is absent or names `name` (`Doc`, `"Doc"`, `List[Segment]`)."""
    return annotation is inspect.Parameter.empty or name in _annotation(annotation)


def _annotation(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    return annotation.__name__ if isinstance(annotation, type) else repr(annotation).replace("typing.", "")


def _described(segmenter: object) -> str:
    """What the config gave, by its layer name, qualified name or type."""
    if isinstance(segmenter, Model):
        return f"the thinc layer {segmenter.name!r}"
    if not callable(segmenter):
        return short_repr(segmenter)
    function = getattr(segmenter, "func", segmenter)  # a functools.partial
    return f"{type(segmenter).__name__} {getattr(function, '__qualname__', type(segmenter).__qualname__)!r}"


@dataclass(frozen=True)
class SentenceWindows:
    """The default segmenter: per sentence when the doc has sentence boundaries (and `split_sentences`),
    pieces longer than `max_length` tokens in windows overlapping by `overlap`."""

    split_sentences: bool = True
    max_length: int = 256
    overlap: int = 32

    def __post_init__(self) -> None:
        check_window_settings(self.max_length, self.overlap)  # when the config is built, not at a long doc

    def __call__(self, doc: "Doc", kept: np.ndarray) -> List[Segment]:
        starts = None
        if self.split_sentences and len(kept) and doc.has_annotation("SENT_START"):
            firsts = np.searchsorted(kept, [sent.start for sent in doc.sents])
            starts = sorted({0, *(int(i) for i in firsts if i < len(kept))})
        return segment(len(kept), starts, self.max_length, self.overlap)


@validate_arguments("spacy-elmo.sentence_windows.v1")
def build_sentence_windows_v1(
    split_sentences: bool = True,
    max_length: Annotated[int, must_be("an integer of at least 1", ge=1)] = 256,
    overlap: Annotated[int, must_be("an integer >= 0", ge=0)] = 32,
) -> Segmenter:
    """`spacy-elmo.sentence_windows.v1`: the biLM reads a doc per sentence and long pieces in overlapping windows.

    split_sentences (bool): one piece per sentence where the doc has sentence boundaries (parser,
        `senter`, `sentencizer` or `sent_starts`).
    max_length (int): pieces longer than this many tokens are read in windows; set it high to read long
        unsegmented docs whole (memory grows with it).
    overlap (int): tokens shared by neighbouring windows, as context on each side.
    RETURNS (Segmenter): the segmenter `BiLM.v3`'s `segmentation` takes.
    """
    return SentenceWindows(split_sentences, max_length, overlap)


def check_segments(segments: Sequence[Segment], n_kept: int, segmenter: object) -> None:
    """A segmenter that skips or repeats a token would silently give it zero or mixed vectors."""
    position = 0
    for seg in segments:
        if not (seg.start <= seg.keep_start == position < seg.keep_end <= seg.end <= n_kept):
            raise InputError(
                f"segmenter {segmenter!r} returned {seg} where the next kept token is {position} of {n_kept}: "
                "segments must keep every token once, in order, within [start, end)"
            )
        position = seg.keep_end
    if position != n_kept:
        raise InputError(
            f"segmenter {segmenter!r} kept tokens up to {position} of {n_kept}: every token must be kept once"
        )
