"""The downstream table and learning curve from the grid's finished runs.

    python -m scripts.report runs/ results.md learning_curve.png [--intervals 10000]

Per task, training size and system: the test score (mean and, over several seeds, the spread as min-max),
the relative error reduction against the baseline at the same size and seeds (genre's ELMo system: against
the same head without ELMo, `ensemble`), the dev score of the
selected model, and the wall time of `spacy train` (mean per run) with its ratio to the baseline's.
Unfinished or failed runs are left out and listed.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Dict, List, Tuple

from spacy_elmo.elmo.util.machine import cpu_name

METRIC = {
    "pos": ("tag_acc", "PTB tag accuracy"),
    "ner": ("ents_f", "entity F1"),
    "genre": ("cats_macro_f", "genre macro F1"),
    "spans": ("spans_sc_f", "entity F1 as spans"),
    "dep": ("dep_las", "labeled attachment score"),
}
DATA = {
    "pos": "UD English EWT",
    "ner": "Universal NER EWT",
    "genre": "UD English EWT's five genres, one per sentence",
    "spans": "Universal NER EWT, spancat",
    "dep": "UD English EWT",
}
SIZES = ["500", "2000", "all"]
SYSTEMS = ["baseline", "ensemble", "elmo_encoder", "elmo_alone", "elmo_probe"]
# The system an ELMo system's error reduction is against, where not the baseline: the same head without ELMo.
AGAINST = {("genre", "elmo_encoder"): "ensemble"}
NAMES = {
    "baseline": "spaCy default CPU pipeline",
    "ensemble": "spaCy's accuracy textcat (TextCatEnsemble), default CPU tok2vec",
    "elmo_encoder": "ELMo + task encoder",
    "elmo_alone": "ELMo alone + task encoder (no hash embeddings)",
    "elmo_probe": "ELMo linear probe",
}


def load(runs: Path) -> Tuple[Dict[Tuple[str, str, str], List[Dict]], List[str]]:
    groups: Dict[Tuple[str, str, str], List[Dict]] = defaultdict(list)
    problems = []
    for path in sorted(runs.glob("*/*/*/seed*/result.json")):
        record = json.loads(path.read_text())
        if "error" in record:
            problems.append(f"{path.parent}: {record['error']}")
            continue
        groups[(record["task"], record["size"], record["system"])].append(record)
    return groups, problems


def table(groups: Dict[Tuple[str, str, str], List[Dict]]) -> List[str]:
    lines = []
    for task in tasks(groups):
        metric, label = METRIC[task]
        lines += [f"### {label} ({DATA[task]}, test)", ""]
        for (t, system), against in AGAINST.items():
            if t == task:
                lines += [f"{NAMES[system]}: error reduction and time against {NAMES[against]}.", ""]
        lines += [
            "| training sentences | system | seeds | test | rel. error reduction | dev | train time per run "
            "| time vs baseline |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for size in SIZES:
            for system in SYSTEMS:
                records = groups.get((task, size, system))
                if not records:
                    continue
                base = groups.get((task, size, AGAINST.get((task, system), "baseline")))
                scores = [100 * r["test"][metric] for r in records]
                score = f"{mean(scores):.2f}" + (f" ({min(scores):.2f}-{max(scores):.2f})" if len(scores) > 1 else "")
                seconds = mean(r["train_seconds"] for r in records)
                reduction = ratio = "-"
                if base and system != "baseline":
                    paired = paired_baseline(base, records)
                    base_scores = [100 * r["test"][metric] for r in paired]
                    if mean(base_scores) < 100:
                        reduction = f"{error_reduction(base_scores, scores):+.1f}%"
                    ratio = f"{seconds / mean(r['train_seconds'] for r in paired):.2f}x"
                dev = mean(100 * r["dev"][metric] for r in records)
                size_label = "all (12,544)" if size == "all" else f"{int(size):,}"
                lines.append(
                    f"| {size_label} | {NAMES[system]} | {len(records)} | {score} | {reduction} | {dev:.2f} "
                    f"| {seconds:.0f} s | {ratio} |"
                )
        lines.append("")
    return lines


def tasks(groups: Dict[Tuple[str, str, str], List[Dict]]) -> List[str]:
    """The tasks with finished runs, in METRIC's order."""
    present = {task for task, _, _ in groups}
    return [task for task in METRIC if task in present]


def paired_baseline(base: List[Dict], records: List[Dict]) -> List[Dict]:
    """The baseline's runs with the system's seeds (the same samples of sentences), or all of them."""
    seeds = {r["seed"] for r in records}
    return [r for r in base if r["seed"] in seeds] or base


def error_reduction(base: List[float], system: List[float]) -> float:
    """Relative error reduction (%) of the mean score against the baseline's mean (scores in %)."""
    base_error = 100 - mean(base)
    return 100 * (base_error - (100 - mean(system))) / base_error


def intervals(groups: Dict[Tuple[str, str, str], List[Dict]], draws: int) -> List[str]:
    """A 90% bootstrap interval of each multi-seed error reduction: the seeds of the baseline and of the
    system are redrawn independently, since each seed trains on its own sample of sentences. It says how
    far the figure could move with another draw of samples, which the min-max spread does not."""
    rng = random.Random(0)
    lines = ["Relative error reduction on test, 90% interval over seeds (bootstrap):", ""]
    for (task, size, system), records in sorted(groups.items()):
        against = AGAINST.get((task, system), "baseline")
        base_records = paired_baseline(groups.get((task, size, against), []), records)
        if system == "baseline" or len(records) < 3 or len(base_records) < 3:
            continue
        metric = METRIC[task][0]
        base = [100 * r["test"][metric] for r in base_records]
        scores = [100 * r["test"][metric] for r in records]
        resampled = sorted(
            error_reduction(rng.choices(base, k=len(base)), rng.choices(scores, k=len(scores))) for _ in range(draws)
        )
        low, high = resampled[int(0.05 * draws)], resampled[int(0.95 * draws) - 1]
        lines.append(
            f"- {METRIC[task][1]}, {size} sentences, {NAMES[system]}"
            + (f" vs {NAMES[against]}" if against != "baseline" else "")
            + f" ({len(base)} / {len(scores)} seeds): "
            f"{error_reduction(base, scores):+.1f}%, interval {low:+.1f}% to {high:+.1f}%"
        )
    return lines + [""]


def plot(groups: Dict[Tuple[str, str, str], List[Dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = {"500": 500, "2000": 2000, "all": 12544}
    shown = tasks(groups)
    fig, axes = plt.subplots(1, len(shown), figsize=(5 * len(shown), 4.6), squeeze=False)
    for ax, task in zip(axes[0], shown):
        metric, label = METRIC[task]
        for system in SYSTEMS:
            points = [
                (sizes[s], mean(100 * r["test"][metric] for r in groups[(task, s, system)]))
                for s in SIZES
                if (task, s, system) in groups
            ]
            if points:
                ax.plot(*zip(*points), marker="o", label=NAMES[system])
        ax.set_xscale("log")
        ax.set_xlabel("training sentences")
        ax.set_ylabel(f"test {label}")
        ax.grid(alpha=0.3)
    # One legend for both panels, below them, where it hides no point.
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path)
    parser.add_argument("markdown", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument(
        "--intervals", type=int, default=0, metavar="DRAWS", help="Add bootstrap intervals (e.g. 10000)."
    )
    args = parser.parse_args()
    groups, problems = load(args.runs)
    lines = [
        f"Measured on: {cpu_name()}, `spacy train` one thread per run. Test scores of the model selected "
        "on dev; mean over seeds (min-max).",
        "",
    ] + table(groups)
    if args.intervals:
        lines += intervals(groups, args.intervals)
    if problems:
        lines += ["Runs left out:", ""] + [f"- {p}" for p in problems]
    args.markdown.write_text("\n".join(lines) + "\n")
    plot(groups, args.png)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
