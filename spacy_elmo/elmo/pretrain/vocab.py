"""The training vocabulary: the original's file format, built by streaming over any amount of text.

The file is one token per line: `<S>`, `</S>`, `<UNK>` first, then the tokens by descending frequency
(ties alphabetically, so the file does not depend on the order of the input files). The
order matters beyond tidiness: the sampled softmax draws negatives log-uniformly over the ids, which
approximates the word distribution only when frequent words have small ids. The vocabulary only names
the softmax *targets*; inputs are characters, so words outside it still get their own input.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Union

from ..nn.chars import BOS_TOKEN, EOS_TOKEN
from ..util.io import atomic_output, read_text, text_lines
from .errors import CorpusError

UNK_TOKEN = "<UNK>"
SPECIALS = (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)
# A line some of the original's vocabulary files carry; it is not a word.
MAX_TERM_ID = "!!!MAXTERMID"


class Vocabulary:
    """Token <-> id for the softmax targets; unknown tokens map to `<UNK>`."""

    def __init__(self, words: Sequence[str]) -> None:
        if tuple(words[:3]) != SPECIALS:
            raise CorpusError(f"a vocabulary must start with {', '.join(SPECIALS)}, got {list(words[:3])}")
        self.words: List[str] = list(words)
        self.index: Dict[str, int] = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            duplicates = sorted({w for w in self.words if self.words.count(w) > 1})[:5]
            raise CorpusError(f"the vocabulary lists some tokens twice, e.g. {duplicates}")
        self.unk_id = self.index[UNK_TOKEN]

    def __len__(self) -> int:
        return len(self.words)

    def id(self, word: str) -> int:
        return self.index.get(word, self.unk_id)

    def ids(self, words: Iterable[str]) -> List[int]:
        get, unk = self.index.get, self.unk_id
        return [get(w, unk) for w in words]

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "Vocabulary":
        path = Path(path)
        if not path.is_file():
            raise CorpusError(
                f"vocabulary file {path} does not exist; build one with "
                "`python -m spacy_elmo vocab CORPUS... --output vocab.txt`"
            )
        words = [line.strip() for line in read_text(path, "vocabulary", CorpusError).splitlines()]
        words = [w for w in words if w and w != MAX_TERM_ID]
        missing = [s for s in SPECIALS if s not in words[:3]]
        if missing:
            raise CorpusError(
                f"vocabulary file {path} must start with the lines {', '.join(SPECIALS)} (missing or out of "
                f"place: {', '.join(missing)}); rebuild it with `python -m spacy_elmo vocab`"
            )
        try:
            return cls(words)
        except CorpusError as err:
            raise CorpusError(f"vocabulary file {path}: {err}") from None

    def to_file(self, path: Union[str, Path]) -> None:
        with atomic_output(path) as tmp:
            tmp.write_text("".join(f"{w}\n" for w in self.words), encoding="utf8")


def count_tokens(paths: Iterable[Union[str, Path]]) -> Counter:
    """Whitespace-token frequencies over files of any size, read line by line."""
    counts: Counter = Counter()
    for path in paths:
        for line in text_lines(path, "corpus", CorpusError):
            counts.update(line.split())
    return counts


def build_vocabulary(counts: Counter, min_count: int = 1, max_size: Optional[int] = None) -> Vocabulary:
    """Specials first, then tokens seen at least `min_count` times by descending frequency, cut so the
    whole vocabulary has at most `max_size` entries."""
    if max_size is not None and max_size <= len(SPECIALS):
        raise CorpusError(
            f"max_size must leave room for words after the {len(SPECIALS)} special tokens, got {max_size}"
        )
    words = sorted(
        (w for w, n in counts.items() if n >= min_count and w not in SPECIALS), key=lambda w: (-counts[w], w)
    )
    if max_size is not None:
        words = words[: max_size - len(SPECIALS)]
    if not words:
        raise CorpusError(
            f"no token occurs at least {min_count} times in the corpus; is it empty? "
            "(a vocabulary of only the special tokens cannot train a language model)"
        )
    return Vocabulary([*SPECIALS, *words])
