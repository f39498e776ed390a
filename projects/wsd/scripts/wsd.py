"""The ELMo paper's word-sense probe (Peters et al. 2018, section 5.3), without the biLM.

Reading the data (Raganato et al. 2017's XML and key files, SemCor in NAF, WordNet's index.sense),
averaging contextual vectors per sense (centroids), predicting the nearest centroid's sense among a
lemma's senses seen in training (WordNet's first sense for lemmas seen with none), and scoring as
Raganato's scorer does. The biLM is kept out so that every piece is testable on made-up data in a
fraction of a second; `evaluate.py` joins them to a model.
"""

from __future__ import annotations

import io
import tarfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np

# WordNet's synset types in a sense key (lemma%TYPE:...): satellite adjectives (5) count as adjectives.
SS_TYPES = {"NOUN": ("1",), "VERB": ("2",), "ADJ": ("3", "5"), "ADV": ("4",)}
SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015")


class WsdDataError(ValueError):
    """A data file is missing or not in the expected format; the message names the file and the fix."""


@dataclass(frozen=True)
class Target:
    """One sense-tagged word: the tokens it covers in its sentence and its lemma and POS (test) or its
    gold sense keys (training)."""

    id: str
    sentence: int
    tokens: Tuple[int, ...]
    lemma: str
    pos: str
    keys: Tuple[str, ...] = ()


@dataclass
class Corpus:
    sentences: List[List[str]]
    targets: List[Target]


def _words(text: str) -> List[str]:
    """Multiword expressions are one element in both formats (`change ringing`, `primary_election`);
    the biLM reads their words."""
    return text.replace("_", " ").split()


def read_raganato(path: Path) -> Corpus:
    """A `*.data.xml` of Raganato et al.'s framework: `<sentence>`s of `<wf>` and `<instance>` words."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise WsdDataError(f"cannot read {path} as Raganato's XML ({err}); fetch the assets again") from err
    corpus = Corpus([], [])
    for sentence in root.iter("sentence"):
        tokens: List[str] = []
        for element in sentence:
            words = _words(element.text or "")
            if element.tag == "instance":
                span = tuple(range(len(tokens), len(tokens) + len(words)))
                lemma, pos = element.get("lemma", ""), element.get("pos", "")
                corpus.targets.append(Target(element.get("id", ""), len(corpus.sentences), span, lemma, pos))
            tokens.extend(words)
        corpus.sentences.append(tokens)
    if not corpus.targets:
        raise WsdDataError(f"{path} has no <instance> elements; is it a Raganato *.data.xml file?")
    return corpus


def read_keys(path: Path) -> Dict[str, Set[str]]:
    """`*.gold.key.txt`: an instance id, then one or more sense keys, per line."""
    keys: Dict[str, Set[str]] = {}
    for n, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 2:
            raise WsdDataError(f"{path} line {n}: an instance id without a sense key: {line!r}")
        keys[fields[0]] = set(fields[1:])
    return keys


def read_naf(path: Path, corpus: Optional[Corpus] = None) -> Corpus:
    """SemCor in NAF (`rubenIzquierdo/wsd_corpora`): `<wf sent=...>` words and `<term>`s whose
    `lexical_key` references give sense keys `lemma%lexical_key`. Appends to `corpus` when given."""
    corpus = corpus if corpus is not None else Corpus([], [])
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise WsdDataError(f"cannot read {path} as NAF ({err}); fetch the SemCor assets again") from err
    where: Dict[str, Tuple[int, Tuple[int, ...]]] = {}
    sentence_of: Dict[str, int] = {}
    for wf in root.iter("wf"):
        sent = wf.get("sent", "")
        if sent not in sentence_of:
            sentence_of[sent] = len(corpus.sentences)
            corpus.sentences.append([])
        tokens = corpus.sentences[sentence_of[sent]]
        words = _words(wf.text or "")
        where[wf.get("id", "")] = (sentence_of[sent], tuple(range(len(tokens), len(tokens) + len(words))))
        tokens.extend(words)
    for term in root.iter("term"):
        lemma = (term.get("lemma") or "").lower()
        keys = tuple(
            f"{lemma}%{ref.get('reference')}" for ref in term.iter("externalRef") if ref.get("reftype") == "lexical_key"
        )
        spans = [where[t.get("id", "")] for t in term.iter("target") if t.get("id", "") in where]
        if not keys or not spans:
            continue
        tokens_of = tuple(i for _, span in spans for i in span)
        corpus.targets.append(Target(term.get("id", ""), spans[0][0], tokens_of, lemma, "", keys))
    return corpus


class SenseInventory:
    """WordNet 3.0's senses per lemma and POS in sense-number order, from `index.sense` (`key offset
    sense_number tag_count` per line)."""

    def __init__(self, lines: Iterable[str]) -> None:
        numbered: Dict[Tuple[str, str], List[Tuple[int, str]]] = defaultdict(list)
        for line in lines:
            fields = line.split()
            if len(fields) < 3 or "%" not in fields[0]:
                continue
            lemma, _, rest = fields[0].partition("%")
            numbered[(lemma, rest[:1])].append((int(fields[2]), fields[0]))
        self._senses = dict(numbered)
        if not self._senses:
            raise WsdDataError("index.sense has no sense keys; is it WordNet 3.0's index.sense?")

    @classmethod
    def from_file(cls, path: Path) -> "SenseInventory":
        with open(path, encoding="utf8") as lines:
            return cls(lines)

    def senses(self, lemma: str, pos: str) -> List[str]:
        """The lemma's sense keys for a POS (NOUN, VERB, ADJ, ADV) in WordNet's sense-number order
        (head and satellite adjectives share one numbering)."""
        if pos not in SS_TYPES:
            raise WsdDataError(f"unknown part of speech {pos!r}; Raganato's files use {', '.join(SS_TYPES)}")
        lemma = lemma.lower().replace(" ", "_")
        return [key for _, key in sorted(n for t in SS_TYPES[pos] for n in self._senses.get((lemma, t), []))]

    def first_sense(self, lemma: str, pos: str) -> Optional[str]:
        senses = self.senses(lemma, pos)
        return senses[0] if senses else None


def read_deb_member(deb: Path, member: str) -> bytes:
    """One file out of a Debian package (an `ar` archive holding `data.tar.*`), without dpkg, so that
    the benchmark reads Debian's WordNet packages as downloaded on any system."""
    data = deb.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise WsdDataError(f"{deb} is not a Debian package; fetch the WordNet assets again")
    offset = 8
    while offset + 60 <= len(data):
        header = data[offset : offset + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        body = data[offset + 60 : offset + 60 + size]
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as tar:
                for info in tar.getmembers():
                    if info.name.lstrip("./") == member.lstrip("./"):
                        extracted = tar.extractfile(info)
                        if extracted is not None:
                            return extracted.read()
            break
        offset += 60 + size + (size % 2)
    raise WsdDataError(f"{deb} has no {member}; is it the right WordNet package?")


class Centroids:
    """The mean vector of each sense key's training occurrences, per representation (a layer or the
    mix of layers)."""

    def __init__(self, n_views: int, dim: int) -> None:
        self._index: Dict[str, int] = {}
        self._sums = np.zeros((0, n_views, dim), dtype=np.float32)
        self._counts = np.zeros(0, dtype=np.int64)

    def add(self, keys: Iterable[str], vectors: np.ndarray) -> None:
        """`vectors` `[n_views, dim]`: one occurrence, counted for each of its gold keys."""
        for key in keys:
            row = self._row(key)
            self._sums[row] += vectors
            self._counts[row] += 1

    def _row(self, key: str) -> int:
        if key not in self._index:
            if len(self._index) == len(self._counts):
                grow = max(1024, len(self._counts))
                self._sums = np.concatenate([self._sums, np.zeros((grow, *self._sums.shape[1:]), dtype=np.float32)])
                self._counts = np.concatenate([self._counts, np.zeros(grow, dtype=np.int64)])
            self._index[key] = len(self._index)
        return self._index[key]

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def centroid(self, key: str) -> np.ndarray:
        row = self._index[key]
        return self._sums[row] / self._counts[row]


def nearest_sense(
    vectors: np.ndarray, candidates: Sequence[str], centroids: Centroids, first_sense: Optional[str]
) -> List[Optional[str]]:
    """Per view, the candidate whose centroid is nearest in cosine; the first sense when none of the
    candidates has a centroid (the lemma was not seen in training with any of its senses)."""
    seen = [key for key in candidates if key in centroids]
    if not seen:
        return [first_sense] * vectors.shape[0]
    stacked = np.stack([centroids.centroid(key) for key in seen])  # [K, views, dim]
    dots = np.einsum("kvd,vd->vk", stacked, vectors)
    norms = np.linalg.norm(stacked, axis=-1).T * np.linalg.norm(vectors, axis=-1)[:, None]
    cosine = dots / np.maximum(norms, 1e-12)
    return [seen[int(k)] for k in cosine.argmax(axis=1)]


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float
    n: int


def score(predictions: Mapping[str, Optional[str]], gold: Mapping[str, Set[str]], ids: Iterable[str]) -> Score:
    """Raganato's scorer: precision over the answered instances, recall over all, F1 their harmonic
    mean (in percent). An answer is right when it is one of the instance's gold keys."""
    ids = list(ids)
    answered = [i for i in ids if predictions.get(i)]
    correct = sum(1 for i in answered if predictions[i] in gold.get(i, set()))
    p = 100.0 * correct / len(answered) if answered else 0.0
    r = 100.0 * correct / len(ids) if ids else 0.0
    return Score(p, r, 2 * p * r / (p + r) if p + r else 0.0, len(ids))


def scores_by_set(predictions: Mapping[str, Optional[str]], gold: Mapping[str, Set[str]]) -> Dict[str, Score]:
    """ALL and each of its sets (an instance id starts with its set's name, e.g. `senseval2.d000...`)."""
    by_set = {"ALL": score(predictions, gold, gold)}
    for name in SETS:
        ids = [i for i in gold if i.split(".", 1)[0] == name]
        if ids:
            by_set[name] = score(predictions, gold, ids)
    return by_set
