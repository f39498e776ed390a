"""The training text as a stream of sentences: many files, shuffled, split between processes.

Text is one sentence per line, tokens separated by whitespace (the original's format; tokenize before,
e.g. with spaCy, if the text is raw), or packed token-id shards (`shards.py`), read as the same lines.
The stream is a pure function of (files, seed, stream name, epoch, rank): resuming a run replays it up
to the recorded batch instead of storing reader positions, and the forward and backward streams use
different stream names so their orders are independent. Memory stays bounded by the shuffle buffer,
whatever the size of the files."""

from __future__ import annotations

import glob
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Sequence, Union

from ..util.io import text_lines
from .errors import CorpusError
from .shards import is_packed_dir, is_shard, shard_lines, shard_paths


def expand_paths(patterns: Sequence[Union[str, Path]]) -> List[Path]:
    """Files named by `patterns`: files, directories (every file inside) or glob patterns, in a
    stable order."""
    if not patterns:
        raise CorpusError("no training files given; set [paths] train to a file, a directory or a glob")
    found: List[Path] = []
    for pattern in patterns:
        path = Path(pattern)
        if path.is_file():
            matches = [path]
        elif path.is_dir() and is_packed_dir(path):
            matches = shard_paths(path)
        elif path.is_dir():
            matches = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        else:
            matches = sorted(Path(p) for p in glob.glob(str(pattern), recursive=True) if Path(p).is_file())
        if not matches and path.is_dir():
            raise CorpusError(f"directory {path} holds no text files; give the directory of the text or a glob")
        if not matches:
            raise CorpusError(f"no file matches {str(pattern)!r}; check the path or the glob pattern")
        found.extend(matches)
    return list(dict.fromkeys(found))


def corpus_lines(path: Union[str, Path], what: str) -> Iterator[str]:
    """The lines of a text file or of a packed token-id shard (`shards.py`)."""
    if is_shard(path):
        return shard_lines(path)
    return text_lines(path, what, CorpusError)


@dataclass
class CorpusStats:
    n_sentences: int
    n_tokens: int


def corpus_stats(paths: Sequence[Path]) -> CorpusStats:
    """Sentences and tokens, counted once so that the number of steps follows from the corpus."""
    n_sentences = n_tokens = 0
    for path in paths:
        for line in corpus_lines(path, "training text"):
            n = len(line.split())
            if n:
                n_sentences += 1
                n_tokens += n
    if n_sentences == 0:
        names = ", ".join(str(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise CorpusError(f"the corpus ({names}) has no tokens; it needs one whitespace-tokenized sentence per line")
    return CorpusStats(n_sentences, n_tokens)


def check_dev_file(path: Path) -> None:
    """The held-out file exists and has a token: checked before training, not at the first evaluation."""
    if not path.is_file():
        raise CorpusError(f"[paths] dev: {path} does not exist; give a held-out text file, or null for none")
    if not any(line.split() for line in corpus_lines(path, "held-out text")):
        raise CorpusError(
            f"[paths] dev: {path} has no tokens; it needs one whitespace-tokenized sentence per line "
            "(or set it to null for no held-out evaluation)"
        )


def read_sentences(path: Union[str, Path]) -> Iterator[List[str]]:
    """The file's non-empty lines in order, split on whitespace."""
    for line in corpus_lines(path, "text"):
        tokens = line.split()
        if tokens:
            yield tokens


def _shuffled_lines(paths: Sequence[Path], rng: random.Random, buffer_size: int) -> Iterator[str]:
    files = list(paths)
    rng.shuffle(files)
    buffer: List[str] = []
    for path in files:
        for line in corpus_lines(path, "training text"):
            buffer.append(line)
            if len(buffer) >= buffer_size:
                rng.shuffle(buffer)
                yield from buffer
                buffer = []
    rng.shuffle(buffer)
    yield from buffer


def sentence_stream(
    paths: Sequence[Path],
    n_epochs: int,
    seed: int,
    stream: str,
    buffer_size: int = 100_000,
    rank: int = 0,
    world_size: int = 1,
) -> Iterator[List[str]]:
    """This process's sentences for `n_epochs` passes: each epoch shuffles the file order and the
    lines within a buffer of `buffer_size`; process `rank` keeps every `world_size`-th sentence."""
    for epoch in range(n_epochs):
        rng = random.Random(f"{seed}/{stream}/{epoch}")
        index = 0
        for line in _shuffled_lines(paths, rng, buffer_size):
            tokens = line.split()
            if not tokens:
                continue
            if index % world_size == rank:
                yield tokens
            index += 1
