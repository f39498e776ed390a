"""Packed training text: compressed token-id shards that carry a corpus where only a few MiB may travel.

A packed corpus is a directory holding `lexicon.txt.xz` (every distinct token, most frequent first, one
per line: id 1 is the first line) and shards `NAME.ids.xz`: xz-compressed, a header (`MAGIC` and the
first bytes of the lexicon's SHA-256, so a shard read with another pack's lexicon is refused) and then
little-endian uint32 ids, 0 ending each sentence. The lexicon holds every token, not only a softmax
vocabulary's, since the biLM reads the characters of all its input tokens. Ids by frequency compress
to about 1.1 bytes a token, against 1.4 for the same text xz-compressed.

What a shard and a lexicon may expand to is bounded (`MAX_SHARD_BYTES`, `MAX_LEXICON_BYTES`): a few
hundred KB of xz can expand to GiBs, so they are decompressed in one bounded step and a file beyond the
bound is refused by name; `pack_corpus` writes nothing it could not read back.

Reading a shard gives back the whitespace-joined lines of the text it was packed from, so everything
that reads training or held-out text (`corpus.corpus_lines`) takes shards and text files alike.
"""

from __future__ import annotations

import hashlib
import lzma
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, List, Sequence, Tuple, Union

import numpy as np

from ..util.io import atomic_output, check_writable_folder, text_lines
from .errors import CorpusError

LEXICON_FILE = "lexicon.txt.xz"
SHARD_SUFFIX = ".ids.xz"
MAGIC = b"ELMOIDS1"
DIGEST_BYTES = 8
END = 0  # the id that ends a sentence
XZ_PRESET = 9 | lzma.PRESET_EXTREME
# What one shard may expand to: 64M ids, 64 times the default `shard_tokens`.
MAX_SHARD_BYTES = 256 * 2**20
# What the lexicon may expand to: about 25M distinct tokens (the 1B Word Benchmark has 0.8M).
MAX_LEXICON_BYTES = 256 * 2**20
# The xz decoder's own memory (its dictionary, which a file names): XZ_PRESET needs 65 MiB.
DECODER_MEMLIMIT = 128 * 2**20


def is_shard(path: Union[str, Path]) -> bool:
    return str(path).endswith(SHARD_SUFFIX)


def is_packed_dir(path: Path) -> bool:
    return (path / LEXICON_FILE).is_file()


def shard_paths(directory: Path) -> List[Path]:
    """A packed corpus's shards, in name order."""
    return sorted(p for p in directory.iterdir() if p.is_file() and is_shard(p))


@dataclass(frozen=True)
class PackedShard:
    name: str
    n_sentences: int
    n_tokens: int
    n_bytes: int


def _sentences(paths: Sequence[Path]) -> Iterator[List[str]]:
    for path in paths:
        for line in text_lines(path, "text to pack", CorpusError):
            tokens = line.split()
            if tokens:
                yield tokens


def pack_corpus(
    paths: Sequence[Path], output_dir: Union[str, Path], prefix: str, shard_tokens: int = 1_000_000
) -> List[PackedShard]:
    """Pack whitespace-tokenized text (files read in order) into shards of about `shard_tokens` tokens
    named `PREFIX.NNN.ids.xz`, with the lexicon of all the files. Two passes: the lexicon needs every
    token's frequency before the first id is written."""
    output_dir = Path(output_dir)
    check_writable_folder(output_dir)
    if shard_tokens < 1:
        raise CorpusError(f"shard_tokens must be at least 1, not {shard_tokens}")
    if output_dir.is_dir() and (is_packed_dir(output_dir) or shard_paths(output_dir)):
        raise CorpusError(
            f"{output_dir} holds a packed corpus already, whose shards a new lexicon would orphan; "
            "give a new or empty folder"
        )
    counts: Counter = Counter()
    for tokens in _sentences(paths):
        counts.update(tokens)
    if not counts:
        raise CorpusError(f"nothing to pack: {', '.join(map(str, paths[:3]))} hold no tokens")
    words = [w for w, _ in counts.most_common()]
    text = "\n".join(words).encode("utf8")
    if len(text) > MAX_LEXICON_BYTES:
        raise CorpusError(
            f"the lexicon of {len(words)} distinct tokens takes {len(text)} bytes, over the "
            f"{MAX_LEXICON_BYTES} a packed corpus may hold: pack the files in several corpora"
        )
    lexicon = lzma.compress(text, preset=XZ_PRESET)
    output_dir.mkdir(parents=True, exist_ok=True)
    with atomic_output(output_dir / LEXICON_FILE) as tmp:
        tmp.write_bytes(lexicon)
    header = MAGIC + hashlib.sha256(lexicon).digest()[:DIGEST_BYTES]
    index = {w: i + 1 for i, w in enumerate(words)}
    shards: List[PackedShard] = []
    ids: List[int] = []
    n_sentences = 0

    def flush() -> None:
        nonlocal ids, n_sentences
        name = f"{prefix}.{len(shards):03d}{SHARD_SUFFIX}"
        raw = header + np.asarray(ids, dtype="<u4").tobytes()
        if len(raw) > MAX_SHARD_BYTES:
            raise CorpusError(
                f"shard {name} would expand to {len(raw)} bytes, over the {MAX_SHARD_BYTES} a shard may: "
                f"give a smaller shard_tokens than {shard_tokens}, or split the long lines of the text"
            )
        data = lzma.compress(raw, preset=XZ_PRESET)
        with atomic_output(output_dir / name) as tmp:
            tmp.write_bytes(data)
        shards.append(PackedShard(name, n_sentences, len(ids) - n_sentences, len(data)))
        ids, n_sentences = [], 0

    for tokens in _sentences(paths):
        ids.extend(index[t] for t in tokens)
        ids.append(END)
        n_sentences += 1
        if len(ids) - n_sentences >= shard_tokens:
            flush()
    if n_sentences:
        flush()
    return shards


@lru_cache(maxsize=4)
def _lexicon(path: str, mtime_ns: int) -> Tuple[bytes, np.ndarray]:
    """The lexicon's digest and its words as an object array (index 0 unused: id 0 ends sentences)."""
    raw = _read_bounded(Path(path), MAX_LEXICON_BYTES, "lexicon", "MAX_LEXICON_BYTES")
    raw_text = _decompress(Path(path), raw, MAX_LEXICON_BYTES, "lexicon", "MAX_LEXICON_BYTES")
    try:
        words = raw_text.decode("utf8").split("\n")
    except UnicodeDecodeError as err:
        raise CorpusError(f"lexicon {path} is damaged ({err}); pack the corpus again") from None
    return hashlib.sha256(raw).digest()[:DIGEST_BYTES], np.array([""] + words, dtype=object)


def _too_large(path: Path, limit: int, what: str, bound: str) -> CorpusError:
    return CorpusError(
        f"{what} {path} expands to more than {limit} bytes ({bound} in spacy_elmo/elmo/pretrain/shards.py): it "
        "was not written by `pack_corpus`, or was damaged; pack the corpus again"
    )


def _read_bounded(path: Path, limit: int, what: str, bound: str) -> bytes:
    """The compressed bytes of `path`; a file this much larger than `limit` cannot expand to less (xz adds
    its headers and 3 bytes per 64 KiB to what it cannot compress)."""
    if path.stat().st_size > limit + limit // 1024 + 4096:
        raise _too_large(path, limit, what, bound)
    return path.read_bytes()


def _decompress(path: Path, data: bytes, limit: int, what: str, bound: str) -> bytes:
    """One xz stream, decompressed to at most `limit` bytes: more is refused before it is made."""
    decompressor = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=DECODER_MEMLIMIT)
    try:
        out = decompressor.decompress(data, max_length=limit + 1)
    except lzma.LZMAError as err:
        raise CorpusError(f"{what} {path} is damaged ({err}); pack the corpus again") from None
    if len(out) > limit:
        raise _too_large(path, limit, what, bound)
    if decompressor.eof and not decompressor.unused_data:
        return out
    raise CorpusError(f"{what} {path} is damaged (cut short, or data after its end); pack the corpus again")


def shard_lines(path: Union[str, Path]) -> Iterator[str]:
    """The lines of text a shard was packed from, tokens joined by single spaces."""
    path = Path(path)
    lexicon_path = path.parent / LEXICON_FILE
    if not lexicon_path.is_file():
        raise CorpusError(f"shard {path} has no {LEXICON_FILE} beside it; keep a packed corpus's files together")
    digest, words = _lexicon(str(lexicon_path), lexicon_path.stat().st_mtime_ns)
    compressed = _read_bounded(path, MAX_SHARD_BYTES, "shard", "MAX_SHARD_BYTES")
    data = _decompress(path, compressed, MAX_SHARD_BYTES, "shard", "MAX_SHARD_BYTES")
    head = len(MAGIC) + DIGEST_BYTES
    if data[: len(MAGIC)] != MAGIC or (len(data) - head) % 4:
        raise CorpusError(f"{path} is not a token-id shard (wrong header or length); pack the corpus again")
    if data[len(MAGIC) : head] != digest:
        raise CorpusError(f"shard {path} was packed with another lexicon than {lexicon_path}; pack the corpus again")
    ids = np.frombuffer(data, dtype="<u4", offset=head)
    if ids.size and (int(ids.max()) >= len(words) or ids[-1] != END):
        raise CorpusError(f"shard {path} holds ids its lexicon does not (or is cut short); pack the corpus again")
    yield from _joined(words, ids)


def _joined(words: np.ndarray, ids: np.ndarray) -> Iterable[str]:
    ends = np.flatnonzero(ids == END)
    start = 0
    for end in ends.tolist():
        yield " ".join(words[ids[start:end]])
        start = end + 1
