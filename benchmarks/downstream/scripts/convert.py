"""Corpora for the downstream experiment: UD English EWT (tags) and Universal NER EWT (entities) as
.spacy files, with training subsets drawn per seed.

    python scripts/convert.py DATA_DIR corpus/ [--sizes 500 2000] [--seeds 0 1 2] [--limit N]

DATA_DIR is `../shared/data/labeled` seen from the repository. `--limit` keeps the first N sentences of
every split (for the smoke run). Subsets: `train-<size>-s<seed>.spacy`, a random sample of `size`
training sentences drawn with `seed` (so seeds differ in data as well as initialisation, as a learning
curve should); `train-all.spacy` is the whole split.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Iterator, List, Tuple

import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import iob_to_biluo
from spacy.training.converters import conllu_to_docs
from spacy.training.iob_utils import biluo_tags_to_spans

SPLITS = ("train", "dev", "test")


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
            tags.append(columns[2])


def ner_docs(path: Path, vocab: spacy.vocab.Vocab) -> List[Doc]:
    docs = []
    for words, tags in read_iob2(path):
        doc = Doc(vocab, words=words)
        doc.ents = biluo_tags_to_spans(doc, iob_to_biluo(tags))
        docs.append(doc)
    return docs


def pos_docs(path: Path) -> List[Doc]:
    return list(conllu_to_docs(path.read_text(encoding="utf8"), n_sents=1, no_print=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--sizes", type=int, nargs="*", default=[500, 2000])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    vocab = spacy.blank("en").vocab
    for task in ("pos", "ner"):
        out = args.output / task
        out.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            if task == "pos":
                docs = pos_docs(args.data / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu")
            else:
                docs = ner_docs(args.data / "uner_english_ewt" / f"en_ewt-ud-{split}.iob2", vocab)
            if args.limit:
                docs = docs[: args.limit]
            name = "train-all" if split == "train" else split
            DocBin(docs=docs, store_user_data=False).to_disk(out / f"{name}.spacy")
            if split == "train":
                for size in args.sizes:
                    for seed in args.seeds:
                        sample = random.Random(seed).sample(docs, min(size, len(docs)))
                        DocBin(docs=sample).to_disk(out / f"train-{size}-s{seed}.spacy")
            print(f"{task} {split}: {len(docs)} sentences")


if __name__ == "__main__":
    main()
