"""The ELMo paper's word-sense probe on a biLM: F1 on Raganato et al.'s ALL and each set, per layer
and for the mean of the layers, next to WordNet's first-sense baseline; and which sense each "bank" of
the demo's four sentences is nearest to.

    python scripts/evaluate.py results.json results.md [--data DATA] [--options O --weights W] [--threads 1]

DATA: a folder laid out as the project's assets/ (see project.yml); empty or left out: assets/. Prints figures only.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch
from wsd import (
    Centroids,
    Corpus,
    Score,
    SenseInventory,
    Target,
    nearest_sense,
    read_deb_member,
    read_keys,
    read_naf,
    read_raganato,
    scores_by_set,
)

from spacy_elmo.cli.demo import SENTENCES as BANK_SENTENCES
from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.sources import DEFAULT_MODEL, bundled_model_paths, load_bilm
from spacy_elmo.elmo.util.machine import cpu_name

SENSE_INDEX = ("wordnet-sense-index_3.0-37_all.deb", "usr/share/wordnet/index.sense")
NOUN_DATA = ("wordnet-base_3.0-37_all.deb", "usr/share/wordnet/data.noun")
SEMCOR_FOLDERS = ("brown1", "brown2", "brownv")
CHUNK = 1024  # sentences embedded at a time: memory stays flat over SemCor's 37,176


def view_names(n_layers: int) -> List[str]:
    return [f"layer {i}" for i in range(n_layers)] + ["mean of layers"]


def target_vectors(bilm: BiLM, corpus: Corpus, batch_size: int) -> List[np.ndarray]:
    """Per target `[L+2, 2P]`: each layer's mean over the target's tokens, then the mean of the layers."""
    by_sentence: Dict[int, List[int]] = {}
    for i, target in enumerate(corpus.targets):
        by_sentence.setdefault(target.sentence, []).append(i)
    vectors: List[Optional[np.ndarray]] = [None] * len(corpus.targets)
    needed = sorted(by_sentence)
    for start in range(0, len(needed), CHUNK):
        chunk = needed[start : start + CHUNK]
        for s, layers in zip(chunk, bilm.embed([corpus.sentences[s] for s in chunk], batch_size=batch_size)):
            for i in by_sentence[s]:
                per_layer = layers[:, list(corpus.targets[i].tokens)].mean(axis=1)
                vectors[i] = np.concatenate([per_layer, per_layer.mean(axis=0, keepdims=True)])
    return vectors  # type: ignore[return-value]


def read_semcor(data: Path, limit: Optional[int]) -> Corpus:
    paths = sorted(p for folder in SEMCOR_FOLDERS for p in (data / "semcor3.0" / folder).glob("*.naf"))
    if not paths:
        raise SystemExit(f"no SemCor files in {data / 'semcor3.0'}: run `spacy project assets` or set the data folder")
    corpus = Corpus([], [])
    for path in paths[:limit]:
        read_naf(path, corpus)
    return corpus


def gloss(noun_data: bytes, offset: int) -> str:
    line = noun_data[offset : noun_data.index(b"\n", offset)].decode("utf8")
    return line.split(" | ", 1)[1].split(";")[0].strip()


def bank_rows(
    bilm: BiLM, centroids: Centroids, inventory: SenseInventory, offsets: Dict[str, int], noun_data: bytes
) -> List[Dict[str, object]]:
    """Each demo sentence's "bank": its nearest SemCor sense per view, with WordNet's gloss."""
    import spacy

    tokenizer = spacy.blank("en").tokenizer
    sentences = [[t.text for t in tokenizer(s)] for s in BANK_SENTENCES]
    targets = [Target(str(i), i, (s.index("bank"),), "bank", "NOUN") for i, s in enumerate(sentences)]
    corpus = Corpus(sentences, targets)
    rows = []
    candidates = inventory.senses("bank", "NOUN")
    for text, vectors in zip(BANK_SENTENCES, target_vectors(bilm, corpus, 4)):
        senses = nearest_sense(vectors, candidates, centroids, candidates[0])
        rows.append({"sentence": text, "nearest": [f"{k} ({gloss(noun_data, offsets[k])})" for k in senses]})
    return rows


def markdown(results: Dict[str, object]) -> str:
    views: List[str] = results["views"]  # type: ignore[assignment]
    table: Dict[str, Dict[str, Dict[str, float]]] = results["f1"]  # type: ignore[assignment]
    sets = list(next(iter(table.values())))
    lines = [
        f"Model `{results['model']}`; {results['semcor_targets']:,} SemCor training targets; "
        f"CPU {results['cpu']}, torch threads {results['threads']}; {results['seconds']:.0f} s in all.",
        "",
        "| F1 | " + " | ".join(sets) + " |",
        "|---|" + "---:|" * len(sets),
    ]
    for name in ["WordNet first sense", *views]:
        lines.append(f"| {name} | " + " | ".join(f"{table[name][s]['f1']:.1f}" for s in sets) + " |")
    lines += ["", 'Nearest SemCor sense of "bank" in the demo sentences:', ""]
    lines += ["| sentence | " + " | ".join(views) + " |", "|---|" + "---|" * len(views)]
    for row in results["bank"]:  # type: ignore[attr-defined]
        lines.append(f"| {row['sentence']} | " + " | ".join(row["nearest"]) + " |")
    return "\n".join(lines) + "\n"


def as_table(scores: Dict[str, Score]) -> Dict[str, Dict[str, float]]:
    return {name: {"f1": s.f1, "precision": s.precision, "recall": s.recall, "n": s.n} for name, s in scores.items()}


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="", help="A local copy laid out as assets/ (empty: assets).")
    parser.add_argument("output_json", type=Path)
    parser.add_argument("output_md", type=Path)
    parser.add_argument("--options", default="", help="options.json; empty: the bundled default model.")
    parser.add_argument("--weights", default="", help="weights .hdf5; empty: the bundled default model.")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default).")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--semcor-files", type=int, default=None, help="Train on the first N SemCor files only.")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    data = Path(args.data or "assets")
    index_lines = read_deb_member(data / SENSE_INDEX[0], SENSE_INDEX[1]).decode("utf8").splitlines()
    inventory = SenseInventory(index_lines)
    offsets = {f[0]: int(f[1]) for f in (line.split() for line in index_lines) if len(f) > 1}
    noun_data = read_deb_member(data / NOUN_DATA[0], NOUN_DATA[1])
    test, gold = read_raganato(data / "ALL.data.xml"), read_keys(data / "ALL.gold.key.txt")
    first = {t.id: inventory.first_sense(t.lemma, t.pos) for t in test.targets}
    f1 = {"WordNet first sense": as_table(scores_by_set(first, gold))}
    print(f"WordNet first sense, F1 on ALL: {f1['WordNet first sense']['ALL']['f1']:.1f}", flush=True)

    if args.options or args.weights:
        options, weights, model = Path(args.options), Path(args.weights), f"{args.options} + {args.weights}"
    else:
        (options, weights), model = bundled_model_paths(DEFAULT_MODEL), DEFAULT_MODEL
    bilm = load_bilm(options, weights, warm_start=True)
    views = view_names(bilm.n_layers)
    semcor = read_semcor(data, args.semcor_files)
    print(f"SemCor: {len(semcor.sentences):,} sentences, {len(semcor.targets):,} targets", flush=True)
    centroids = Centroids(len(views), bilm.output_dim)
    for target, vectors in zip(semcor.targets, target_vectors(bilm, semcor, args.batch_size)):
        centroids.add(target.keys, vectors)
    print(f"centroids of {len(centroids):,} senses after {time.perf_counter() - started:.0f} s", flush=True)
    predictions: List[Dict[str, Optional[str]]] = [{} for _ in views]
    for target, vectors in zip(test.targets, target_vectors(bilm, test, args.batch_size)):
        candidates = inventory.senses(target.lemma, target.pos)
        first_sense = candidates[0] if candidates else None
        for v, sense in enumerate(nearest_sense(vectors, candidates, centroids, first_sense)):
            predictions[v][target.id] = sense
    for name, predicted in zip(views, predictions):
        f1[name] = as_table(scores_by_set(predicted, gold))
    results = {
        "model": model,
        "views": views,
        "f1": f1,
        "bank": bank_rows(bilm, centroids, inventory, offsets, noun_data),
        "semcor_targets": len(semcor.targets),
        "cpu": f"{cpu_name()} ({os.cpu_count()} cores)",
        "threads": torch.get_num_threads(),
        "seconds": time.perf_counter() - started,
    }
    args.output_json.parent.mkdir(parents=True, exist_ok=True)
    args.output_json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf8")
    args.output_md.write_text(markdown(results), encoding="utf8")
    print(markdown(results))


if __name__ == "__main__":
    main()
