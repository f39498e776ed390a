"""Corpora for the downstream experiment and the README's training commands: UD English EWT (tags and
dependencies), Universal NER EWT (entities, and the same entities as spans), both on the same sentences,
and each EWT sentence's genre, as .spacy files, with training subsets drawn per seed.

    python -m scripts.convert assets/ corpus/ [--sizes 500 2000] [--seeds 0 1 2] [--limit N]

`assets/` is what `spacy project assets` fetches (ud_english_ewt/*.conllu, uner_english_ewt/*.iob2).
Writes `corpus/pos/`, `corpus/ner/` and `corpus/pos_ner/`, each with `train-all.spacy`, `dev.spacy` and
`test.spacy`; `pos_ner` holds the UD sentences that Universal NER annotates too (matched by `sent_id`),
with their tags and entities, for a pipeline with both heads. `corpus/genre/` holds UD's sentences with
`doc.cats` one of EWT's five genres (the prefix of each `sent_id`: answers, email, newsgroup, reviews,
weblog; exclusive classes) and `corpus/spans/` Universal NER's entities as `doc.spans["sc"]`, for
spancat; the parser trains on `corpus/pos/`, whose docs carry UD's dependencies. Universal NER's `B-O` and `*-OTH` tags
(other, not one of PER/ORG/LOC) become `O`. `--limit` keeps the first N sentences of every split (for the
smoke run). Subsets: `train-<size>-s<seed>.spacy`, a random sample of `size` training sentences drawn
with `seed` (so seeds differ in data as well as initialisation, as a learning curve should).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Iterator, List, Tuple

import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import iob_to_biluo
from spacy.training.converters import conllu_to_docs
from spacy.training.iob_utils import biluo_tags_to_spans

SPLITS = ("train", "dev", "test")
TASKS = ("pos", "ner", "pos_ner", "genre", "spans")
# EWT's genres, the first part of every UD sent_id ("weblog-juancole.com_...-0001").
GENRES = ("answers", "email", "newsgroup", "reviews", "weblog")
SPANS_KEY = "sc"


# Universal NER's tags outside PER/ORG/LOC: OTH (other) and a stray B-O; the experiment scores the three.
NOT_AN_ENTITY = {"B-O", "B-OTH", "I-OTH"}


def sent_ids(path: Path) -> List[str]:
    """The `# sent_id` of every sentence of a CoNLL-U or Universal NER file, in order."""
    return [
        line.split("=", 1)[1].strip()
        for line in path.read_text(encoding="utf8").splitlines()
        if line.startswith("# sent_id")
    ]


def read_iob2(path: Path) -> Iterator[Tuple[List[str], List[str]]]:
    """(words, IOB2 tags) per sentence of a Universal NER file (CoNLL-U-like; the tag in column 3)."""
    words: List[str] = []
    tags: List[str] = []
    for line in path.read_text(encoding="utf8").splitlines() + [""]:
        if not line.strip():
            if words:
                yield words, tags
            words, tags = [], []
        elif not line.startswith("#"):
            columns = line.split("\t")
            words.append(columns[1])
            tags.append("O" if columns[2] in NOT_AN_ENTITY else columns[2])


def ner_docs(path: Path, vocab: spacy.vocab.Vocab) -> List[Doc]:
    docs = []
    for words, tags in read_iob2(path):
        doc = Doc(vocab, words=words)
        doc.ents = biluo_tags_to_spans(doc, iob_to_biluo(tags))
        docs.append(doc)
    return docs


def pos_docs(path: Path) -> List[Doc]:
    return list(conllu_to_docs(path.read_text(encoding="utf8"), n_sents=1, no_print=True))


def genre(sent_id: str) -> str:
    """The EWT genre a UD sentence comes from, from its `sent_id`."""
    name = sent_id.split("-", 1)[0]
    if name not in GENRES:
        raise ValueError(f"sent_id {sent_id!r} starts with no EWT genre ({', '.join(GENRES)})")
    return name


def genre_docs(conllu: Path) -> List[Doc]:
    """UD's sentences with their genre as `doc.cats` (one class true of five)."""
    docs = []
    for sid, doc in zip(sent_ids(conllu), pos_docs(conllu)):
        label = genre(sid)
        doc.cats = {name: float(name == label) for name in GENRES}
        docs.append(doc)
    return docs


def span_docs(path: Path, vocab: spacy.vocab.Vocab) -> List[Doc]:
    """Universal NER's entities as spans under `SPANS_KEY`, as spancat reads them (and no `doc.ents`)."""
    docs = []
    for doc in ner_docs(path, vocab):
        doc.spans[SPANS_KEY] = list(doc.ents)
        doc.ents = []
        docs.append(doc)
    return docs


def pos_ner_docs(conllu: Path, iob2: Path, vocab: spacy.vocab.Vocab) -> List[Doc]:
    """UD's docs (tags, parse) carrying Universal NER's entities, for the sentences both annotate with the
    same words."""
    entities = {sid: doc for sid, doc in zip(sent_ids(iob2), ner_docs(iob2, vocab))}
    docs = []
    for sid, doc in zip(sent_ids(conllu), pos_docs(conllu)):
        ner = entities.get(sid)
        if ner is not None and [t.text for t in ner] == [t.text for t in doc]:
            doc.ents = [Span(doc, e.start, e.end, label=e.label_) for e in ner.ents]
            docs.append(doc)
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--sizes", type=int, nargs="*", default=[500, 2000])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    vocab = spacy.blank("en").vocab
    for task in TASKS:
        out = args.output / task
        out.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            conllu = args.data / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu"
            iob2 = args.data / "uner_english_ewt" / f"en_ewt-ud-{split}.iob2"
            if task == "pos":
                docs = pos_docs(conllu)
            elif task == "ner":
                docs = ner_docs(iob2, vocab)
            elif task == "genre":
                docs = genre_docs(conllu)
            elif task == "spans":
                docs = span_docs(iob2, vocab)
            else:
                docs = pos_ner_docs(conllu, iob2, vocab)
            if args.limit:
                docs = docs[: args.limit]
            name = "train-all" if split == "train" else split
            DocBin(docs=docs, store_user_data=False).to_disk(out / f"{name}.spacy")
            if split == "train" and task != "pos_ner":
                for size in args.sizes:
                    for seed in args.seeds:
                        sample = random.Random(seed).sample(docs, min(size, len(docs)))
                        DocBin(docs=sample).to_disk(out / f"train-{size}-s{seed}.spacy")
            print(f"{task} {split}: {len(docs)} sentences")


if __name__ == "__main__":
    main()
