"""Rebuilds a pretraining corpus from every usable book of a checkout of the public GitHub repository
`rcdm-uga/Gutenberg_Text` (one folder per author, one `.txt` per book).

    python -m scripts.corpus SOURCE OUTPUT --heldout MANIFEST [--shard-tokens 500000]

Per book: the Project Gutenberg header and footer are cut, paragraphs unwrapped, markup
(`_italics_`, `[Illustration: ...]`, footnote marks) and headings dropped, verse paragraphs left out,
and the book left out whole when it is not English, is drama (most paragraphs open with a speaker's
name) or mostly verse; the rest is split into sentences by a regular expression, one per line, and
sentences of 3-150 whitespace words are kept, not tokenized. Books are deduplicated by content (git
blob), by file name (the same book under two authors) and by their first sentences; the held-out books
of MANIFEST (the `dev` and `test` entries of an existing manifest.json: by path, git blob, and title
against both the Title field and the file name) are kept out. Books are shuffled
(`--seed`) and written whole, in that order, to shards of about `--shard-tokens` words, so the first k
shards are a diverse subset. OUTPUT gets `train/gutenberg.train.NNNN.txt` and `manifest.json` (book ->
shard, source path, git blob, EBook number, title, counts) and `skipped.json` (book -> why).
Single process; progress on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

MIN_WORDS, MAX_WORDS = 3, 150
START = re.compile(
    r"^\*{3} ?START OF (?:THIS|THE) PROJECT GUTENBERG.*$|^\*+ ?END\*?THE SMALL PRINT.*$", re.IGNORECASE | re.MULTILINE
)
END = re.compile(
    r"^\*{3} ?END OF (?:THIS|THE) PROJECT GUTENBERG.*$|^End of (?:the )?Project Gutenberg.*$",
    re.IGNORECASE | re.MULTILINE,
)
FIELD = re.compile(r"^(Title|Language|Release Date|Posting Date):\s*(.*)$", re.MULTILINE)
EBOOK = re.compile(r"\[E(?:Book|text) #(\d+)\]", re.IGNORECASE)
PRODUCED = re.compile(r"^(?:produced|prepared|transcribed|e-text prepared|etext prepared) by", re.IGNORECASE)
# A paragraph that is only a heading: CHAPTER IV, BOOK II., PART THE FIRST, IV., 12
HEADING = re.compile(
    r"^(?:(?:chapter|book|part|volume|canto|section|act|scene|letter|stave)\b.{0,60}|[IVXLC]+\.?|\d+\.?)$",
    re.IGNORECASE,
)
BRACKETED = re.compile(
    r"\[(?:Illustration|Footnote|Sidenote|Transcriber|Note|Decoration|Pg|Page)[^\]]*\]", re.IGNORECASE
)
FOOTNOTE_MARK = re.compile(r"\[(?:\d+|[a-z]|\*)\]")
EMPHASIS = re.compile(r"(?<!\w)[_=]+(?=\S)|(?<=\S)[_=]+(?!\w)")
SPEAKER = re.compile(r"^[A-Z][A-Z .'\-]{1,30}[.:]\s")
# A sentence ends at . ! or ? (and closing quotes or brackets) before space and an opening capital or
# quote, except after common abbreviations and single initials.
SENTENCE_END = re.compile(r"(?<=[.!?])([\"'”’)\]]*)\s+(?=[\"'“‘(\[]*[A-Z0-9])")
ABBREVIATIONS = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Mt|Messrs|Mme|Mlle|Capt|Col|Gen|Lt|Sgt|Rev|Hon|Prof|Jr|Sr|No|Vol|Ch|vs|viz|etc|i\.e|e\.g)"
    r"|\b[A-Z])\.$"
)
BOOK_SKIP_VERSE = 0.5  # a book whose kept paragraphs are less than half of its prose-like ones is verse
BOOK_SKIP_DRAMA = 0.2  # ... or whose paragraphs open with a speaker's name this often is drama


@dataclass
class Book:
    file: str
    author_dir: str
    title: str
    ebook: Optional[str]
    git_blob: str
    shard: str = ""
    n_sent: int = 0
    n_tok: int = 0
    split: str = "train"


def git_blob(data: bytes) -> str:
    """The id git gives these bytes: a book is matched to the source repository's history by it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def normal_title(title: str) -> str:
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", folded).strip()


def decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def metadata(text: str) -> Dict[str, str]:
    head = text[:5000]
    fields = {name.lower(): value.strip() for name, value in FIELD.findall(head)}
    match = EBOOK.search(head)
    if match:
        fields["ebook"] = match.group(1)
    return fields


def body(text: str) -> Optional[str]:
    """The text between the Gutenberg header and footer; None when the header cannot be found."""
    starts = list(START.finditer(text))
    if not starts:
        return None
    start = starts[-1].end()
    end = END.search(text, start)
    return text[start : end.start() if end else len(text)]


def _is_verse(lines: List[str]) -> bool:
    """Wrapped prose fills its lines to a common width; verse, tables and letters' addresses do not."""
    if len(lines) < 3:
        return False
    indented = sum(1 for line in lines if line.startswith((" ", "\t")))
    lengths = sorted(len(line.strip()) for line in lines[:-1])
    return indented * 2 > len(lines) or lengths[len(lengths) // 2] < 48


def _clean(paragraph: str) -> str:
    text = BRACKETED.sub(" ", paragraph)
    text = FOOTNOTE_MARK.sub("", text)
    text = EMPHASIS.sub("", text)
    return " ".join(text.split())


def _is_heading(lines: List[str], text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    all_caps = bool(letters) and all(c.isupper() for c in letters)
    return len(lines) <= 2 and (all_caps or HEADING.match(text) is not None or not text.endswith((".", "!", "?", '"')))


def paragraphs(text: str) -> Tuple[List[str], Dict[str, int]]:
    """Kept paragraphs, unwrapped and cleaned, and counts of what was dropped (for the book verdict)."""
    kept: List[str] = []
    counts = {"verse": 0, "heading": 0, "speaker": 0, "prose": 0}
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        cleaned = _clean(block)
        if not cleaned or PRODUCED.match(cleaned):
            continue
        if SPEAKER.match(cleaned):
            counts["speaker"] += 1
        if _is_verse(lines):
            counts["verse"] += 1
            continue
        if _is_heading(lines, cleaned):
            counts["heading"] += 1
            continue
        counts["prose"] += 1
        kept.append(cleaned)
    return kept, counts


def sentences(paragraph: str) -> Iterator[str]:
    start = 0
    for match in SENTENCE_END.finditer(paragraph):
        # Only the word before the end matters; the whole prefix would make long paragraphs quadratic.
        if ABBREVIATIONS.search(paragraph[max(0, match.start() - 12) : match.start()]):
            continue
        yield paragraph[start : match.end(1)]
        start = match.end()
    if start < len(paragraph):
        yield paragraph[start:]


def book_sentences(text: str) -> Tuple[List[str], Optional[str]]:
    """The book's kept sentences, or a reason to leave the whole book out."""
    inner = body(text)
    if inner is None:
        return [], "no Project Gutenberg header"
    kept, counts = paragraphs(inner)
    total = counts["prose"] + counts["verse"]
    if total == 0:
        return [], "no prose paragraphs"
    if counts["speaker"] > BOOK_SKIP_DRAMA * (total + counts["heading"]):
        return [], f"drama ({counts['speaker']} of {total + counts['heading']} paragraphs open with a speaker)"
    if counts["prose"] < BOOK_SKIP_VERSE * total:
        return [], f"verse ({counts['verse']} of {total} paragraphs)"
    out = [s for p in kept for s in sentences(p) if MIN_WORDS <= len(s.split()) <= MAX_WORDS]
    return out, None if out else "no sentences of 3-150 words"


def heldout_books(manifest: Path) -> Tuple[Set[str], Set[str], Set[str]]:
    """Paths, git blobs and normal titles of the `dev` and `test` books of an existing manifest."""
    entries = json.loads(manifest.read_text(encoding="utf8"))
    held = [e for e in entries if e.get("split") in ("dev", "test")]
    if not held:
        raise SystemExit(f"{manifest} lists no dev or test books; give the manifest.json of the shipped corpus")
    return (
        {e["file"] for e in held},
        {e["git_blob"] for e in held if e.get("git_blob")},
        {normal_title(e["title"]) for e in held if e.get("title")},
    )


class ShardWriter:
    """Appends whole books to `gutenberg.train.NNNN.txt`, starting a new shard past `shard_tokens` words."""

    def __init__(self, folder: Path, shard_tokens: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.shard_tokens = folder, shard_tokens
        self.index, self.tokens = 0, 0
        self._file = open(self._path(), "w", encoding="utf8")

    def _path(self) -> Path:
        return self.folder / f"gutenberg.train.{self.index:04d}.txt"

    def write(self, lines: Sequence[str], n_tokens: int) -> str:
        if self.tokens >= self.shard_tokens:
            self._file.close()
            self.index, self.tokens = self.index + 1, 0
            self._file = open(self._path(), "w", encoding="utf8")
        self._file.write("\n".join(lines) + "\n")
        self.tokens += n_tokens
        return self._path().name

    def close(self) -> None:
        self._file.close()


def source_files(source: Path) -> List[Path]:
    files = sorted(p for p in source.glob("*/*.txt") if p.is_file())
    if not files:
        raise SystemExit(f"{source} has no AUTHOR/BOOK.txt files; give a checkout of rcdm-uga/Gutenberg_Text")
    return files


def build(source: Path, output: Path, manifest: Path, shard_tokens: int, seed: int, limit: Optional[int]) -> None:
    held_paths, held_blobs, held_titles = heldout_books(manifest)
    files = source_files(source)
    random.Random(seed).shuffle(files)
    files = files[:limit]
    writer = ShardWriter(output / "train", shard_tokens)
    books: List[Book] = []
    skipped: Dict[str, str] = {}
    seen_blobs: Set[str] = set()
    seen_names: Set[str] = set()
    seen_openings: Set[str] = set()
    started = time.perf_counter()
    for n, path in enumerate(files, 1):
        relative = path.relative_to(source).as_posix()
        data = path.read_bytes()
        blob = git_blob(data)
        text = decode(data)
        fields = metadata(text)
        title = fields.get("title") or path.stem
        # The file name, not the Title field, tells volumes apart ("The Works of Edgar Allan Poe" is
        # the Title of each of its volumes); held-out books are matched on both, to keep out too many
        # rather than too few.
        name = normal_title(path.stem)
        reason = None
        if relative in held_paths or blob in held_blobs or {normal_title(title), name} & held_titles:
            reason = "held out (dev/test)"
        elif blob in seen_blobs or name in seen_names:
            reason = "duplicate (same file or file name)"
        elif "english" not in fields.get("language", "english").lower():
            reason = f"language {fields['language']}"
        lines: List[str] = []
        if reason is None:
            lines, reason = book_sentences(text)
        if reason is None:
            opening = hashlib.sha1("\n".join(lines[:30]).encode()).hexdigest()
            if opening in seen_openings:
                reason, lines = "duplicate (same text)", []
            seen_openings.add(opening)
        seen_blobs.add(blob)
        seen_names.add(name)
        if reason is not None:
            skipped[relative] = reason
        else:
            n_tok = sum(len(line.split()) for line in lines)
            book = Book(relative, path.parent.name, title, fields.get("ebook"), blob, n_sent=len(lines), n_tok=n_tok)
            book.shard = writer.write(lines, n_tok)
            books.append(book)
        if n % 100 == 0 or n == len(files):
            tokens = sum(b.n_tok for b in books)
            print(
                f"{n}/{len(files)} books read, {len(books)} kept, {tokens:,} tokens, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    writer.close()
    (output / "manifest.json").write_text(json.dumps([asdict(b) for b in books], indent=1, ensure_ascii=False) + "\n")
    (output / "skipped.json").write_text(json.dumps(skipped, indent=1, ensure_ascii=False) + "\n")
    n_sent, n_tok = sum(b.n_sent for b in books), sum(b.n_tok for b in books)
    print(f"{len(books)} books, {n_sent:,} sentences, {n_tok:,} tokens in {writer.index + 1} shards")


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="A checkout of rcdm-uga/Gutenberg_Text.")
    parser.add_argument("output", type=Path, help="Folder for train/, manifest.json and skipped.json.")
    parser.add_argument("--heldout", type=Path, required=True, help="manifest.json naming the dev/test books.")
    parser.add_argument("--shard-tokens", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="Read only this many books (after shuffling).")
    args = parser.parse_args(argv)
    if args.output.exists() and any(args.output.iterdir()):
        raise SystemExit(f"{args.output} is not empty; give a new folder")
    build(args.source, args.output, args.heldout, args.shard_tokens, args.seed, args.limit)


if __name__ == "__main__":
    main()
