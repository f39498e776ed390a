"""UD English-EWT's sentences with their tags (and parse) and Universal NER's entities, as .spacy files.

    python -m scripts.convert assets/ corpus/ [--limit N]

Writes `corpus/{train,dev,test}.spacy`: the UD sentences that Universal NER annotates with the same words
(matched by `# sent_id`); its tags outside PER/ORG/LOC (`*-OTH`, a stray `B-O`) become `O`. `--limit`
keeps the first N sentences of each split. A template is copied on its own, so it carries this script
rather than importing projects/downstream's."""

from __future__ import annotations

import argparse
from itertools import islice
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from spacy.tokens import Doc, DocBin
from spacy.training import iob_to_biluo
from spacy.training.converters import conllu_to_docs
from spacy.training.iob_utils import biluo_tags_to_spans

NOT_AN_ENTITY = {"B-O", "B-OTH", "I-OTH"}


def sent_ids(path: Path) -> List[str]:
    return [line.split("=", 1)[1].strip() for line in path.open(encoding="utf8") if line.startswith("# sent_id")]


def read_iob2(path: Path) -> Iterator[Tuple[List[str], List[str]]]:
    """(words, IOB2 tags) per sentence of a Universal NER file (the tag in column 3)."""
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


def tagged_docs(conllu: Path, iob2: Path) -> Iterator[Doc]:
    """Converted as they are read, so that `--limit` converts no more."""
    entities: Dict[str, Tuple[List[str], List[str]]] = dict(zip(sent_ids(iob2), read_iob2(iob2)))
    for sid, doc in zip(sent_ids(conllu), conllu_to_docs(conllu.read_text(encoding="utf8"), n_sents=1)):
        words, tags = entities.get(sid, ([], []))
        if words == [token.text for token in doc]:
            doc.ents = biluo_tags_to_spans(doc, iob_to_biluo(tags))
            yield doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assets", type=Path)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    args.corpus.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        converted = tagged_docs(
            args.assets / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu",
            args.assets / "uner_english_ewt" / f"en_ewt-ud-{split}.iob2",
        )
        docs = list(islice(converted, args.limit or None))
        DocBin(docs=docs).to_disk(args.corpus / f"{split}.spacy")
        print(f"{split}: {len(docs)} sentences")


if __name__ == "__main__":
    main()
