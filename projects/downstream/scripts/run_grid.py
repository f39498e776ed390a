"""Train and test every run of the downstream grid, several at a time; resumable.

    python -m scripts.run_grid corpus/ configs/ runs/ [--jobs 2] [--tasks pos ner genre spans dep]
        [--sizes 500 2000 all]
        [--seeds 0 1 2] [--systems baseline elmo_encoder] [--smoke]
        [--elmo-model MODEL] [--fast-mode bf16]

A run is (task, training size, system, seed): `spacy train` on `corpus/<task>/train-<size>-s<seed>.spacy`
with dev for model selection (spaCy keeps `model-best` by the dev score), then `spacy evaluate` of
`model-best` on test, once. Each run's directory keeps the config, the training log, the test scores and
`result.json` (scores, wall time); a run with a `result.json` is skipped, so the grid resumes where it
stopped, and a failed run is recorded and reported, not fatal. Each `spacy train` uses one thread:
`--jobs N` runs N of them side by side. The parser (`dep`) trains on `corpus/pos/`, whose docs carry UD's
dependencies, so its samples are the tagger's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .make_configs import REFERENCE_TASKS

SCORES = {
    "pos": ["tag_acc"],
    "ner": ["ents_f", "ents_p", "ents_r"],
    # spaCy's cats_score for exclusive classes is the macro F; micro F is the accuracy.
    "genre": ["cats_macro_f", "cats_micro_f", "cats_score"],
    "spans": ["spans_sc_f", "spans_sc_p", "spans_sc_r"],
    "dep": ["dep_las", "dep_uas"],
}
# Each task's systems at every size and seed; ELMo alone and the probe (at 500 only) where REFERENCE_TASKS.
# Genre's `ensemble` is the tok2vec head without ELMo (make_configs.py).
SYSTEMS = {task: ("baseline", "elmo_encoder") for task in SCORES}
SYSTEMS["genre"] = ("baseline", "ensemble", "elmo_encoder")
# A task trained on another task's corpus.
CORPUS = {"dep": "pos"}


@dataclass(frozen=True)
class Run:
    task: str
    size: str
    system: str
    seed: int
    steps: int
    eval_every: int

    @property
    def name(self) -> str:
        return f"{self.task}/{self.size}/{self.system}/seed{self.seed}"


# Steps and evaluation interval per training size: more steps where there is more to learn from.
SCHEDULE = {"500": (1000, 200), "2000": (1000, 200), "all": (2000, 400)}
# Seeds at 500 and 2,000 sentences, where each seed draws its own sample of training sentences.
SEEDS = (0, 1, 2)


def grid(tasks: List[str], smoke: bool, seeds: Sequence[int] = SEEDS) -> List[Run]:
    """`seeds` (three) at 500 and 2,000 sentences, where each seed samples its own training sentences (at
    2,000 a single seed's entity F1 was seen 5 points from another's), one on the full set; ELMo alone and
    the probe at 500 only, one seed (for reference)."""
    if smoke:
        return [Run(task, "500", system, 0, 4, 2) for task in tasks for system in SYSTEMS[task]]
    runs = []
    for task in tasks:
        for size in ("500", "2000"):
            for seed in seeds:
                runs += [Run(task, size, system, seed, *SCHEDULE[size]) for system in SYSTEMS[task]]
        if task in REFERENCE_TASKS:
            runs += [Run(task, "500", system, 0, *SCHEDULE["500"]) for system in ("elmo_alone", "elmo_probe")]
        runs += [Run(task, "all", system, 0, *SCHEDULE["all"]) for system in SYSTEMS[task]]
    return runs


def train_file(corpus: Path, run: Run) -> Path:
    name = "train-all.spacy" if run.size == "all" else f"train-{run.size}-s{run.seed}.spacy"
    return corpus_dir(corpus, run.task) / name


def corpus_dir(corpus: Path, task: str) -> Path:
    return corpus / CORPUS.get(task, task)


def config_file(configs: Path, run: Run) -> Path:
    return configs / f"{run.task}_{run.system}.cfg"


# The variables torch (OpenMP, MKL) and NumPy (OpenBLAS) take their thread counts from.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_env(threads: int) -> Dict[str, str]:
    """The environment of a run on `threads` threads; 0 pins nothing, which is what `spacy train` gets by
    default: torch (the biLM) one thread per core, NumPy's BLAS as many, while spaCy's own products go
    through thinc's BLIS on one thread either way."""
    env = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    if threads > 0:
        env.update({key: str(threads) for key in THREAD_VARIABLES})
    return env


# Each `spacy train` and `spacy evaluate` of the grid runs on one thread, whatever the machine has.
ONE_THREAD = thread_env(1)


# The biLM settings a run of an ELMo system may change, and the config keys they override.
ELMO_SETTINGS = {
    "elmo_model": "paths.elmo_model",
    "fast_mode": "components.elmo.model.fast_mode",
}


def add_elmo_arguments(parser: argparse.ArgumentParser) -> None:
    """The biLM options of the grid's scripts; `--elmo-options`/`--elmo-weights`, which the configs no
    longer read (BiLM.v3), stay to be refused by name (`elmo_settings`)."""
    parser.add_argument(
        "--elmo-model",
        default=None,
        help="The biLM: a model folder (options.json and the weights), a model's name or hf:ORG/REPO "
        "(default: the bundled one).",
    )
    parser.add_argument("--elmo-options", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--elmo-weights", default=None, help=argparse.SUPPRESS)


def elmo_settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Dict[str, Optional[str]]:
    """The biLM settings of `args` (empty strings, the project's defaults, mean the bundled biLM)."""
    if args.elmo_options or args.elmo_weights:
        parser.error(
            "--elmo-options/--elmo-weights (--vars.elmo_options/elmo_weights): the configs take one model now; "
            "give the folder holding options.json and the weights as --elmo-model (--vars.elmo_model)"
        )
    return {"elmo_model": args.elmo_model or None, "fast_mode": getattr(args, "fast_mode", None) or None}


def train_command(run: Run, corpus: Path, configs: Path, output: Path, elmo: Dict[str, Optional[str]]) -> List[str]:
    """The `spacy train` command of a run: its config, training file, dev set, seed and schedule."""
    command = [
        sys.executable,
        "-m",
        "spacy",
        "train",
        str(config_file(configs, run)),
        "--output",
        str(output),
        "--paths.train",
        str(train_file(corpus, run)),
        "--paths.dev",
        str(corpus_dir(corpus, run.task) / "dev.spacy"),
        "--system.seed",
        str(run.seed),
        "--training.max_steps",
        str(run.steps),
        "--training.eval_frequency",
        str(run.eval_every),
        "--training.patience",
        "0",
    ]
    if run.system != "baseline":
        for key, value in elmo.items():
            if value is not None:
                command += [f"--{ELMO_SETTINGS[key]}", value]
    return command


def execute(run: Run, corpus: Path, configs: Path, out: Path, elmo: Dict[str, Optional[str]]) -> Dict:
    run_dir = out / run.name
    result_path = run_dir / "result.json"
    if result_path.exists():
        return json.loads(result_path.read_text())
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    shutil.copy(config_file(configs, run), run_dir / "config.cfg")
    command = train_command(run, corpus, configs, run_dir / "model", elmo)
    record: Dict = {**asdict(run)}
    started = time.perf_counter()
    with open(run_dir / "train.log", "w") as log:
        trained = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=ONE_THREAD)
    record["train_seconds"] = time.perf_counter() - started
    if trained.returncode != 0:
        record["error"] = f"spacy train exited {trained.returncode}; see {run_dir / 'train.log'}"
    else:
        scores_path = run_dir / "test.json"
        evaluated = subprocess.run(
            [
                sys.executable,
                "-m",
                "spacy",
                "evaluate",
                str(run_dir / "model" / "model-best"),
                str(corpus_dir(corpus, run.task) / "test.spacy"),
                "--output",
                str(scores_path),
            ],
            capture_output=True,
            text=True,
            env=ONE_THREAD,
        )
        if evaluated.returncode != 0:
            record["error"] = f"spacy evaluate failed: {evaluated.stderr[-500:]}"
        else:
            test = json.loads(scores_path.read_text())
            meta = json.loads((run_dir / "model" / "model-best" / "meta.json").read_text())
            record["test"] = {k: test.get(k) for k in SCORES[run.task]}
            record["dev"] = {k: meta.get("performance", {}).get(k) for k in SCORES[run.task]}
        shutil.rmtree(run_dir / "model" / "model-last", ignore_errors=True)
    result_path.write_text(json.dumps(record, indent=2))
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("configs", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--tasks", nargs="*", default=["pos", "ner"], choices=list(SCORES), help="genre, spans, dep: the further heads."
    )
    parser.add_argument(
        "--sizes", nargs="*", default=list(SCHEDULE), choices=list(SCHEDULE), help="Only these sizes' runs."
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="*",
        default=list(SEEDS),
        help="Seeds at 500 and 2,000 sentences (convert.py --seeds makes their samples).",
    )
    parser.add_argument(
        "--systems", nargs="*", default=None, help="Only these systems' runs (e.g. elmo_encoder for a new biLM)."
    )
    parser.add_argument(
        "--smoke", action="store_true", help="Each task's systems, 4 steps: checks the pipeline, not ELMo."
    )
    add_elmo_arguments(parser)
    parser.add_argument(
        "--fast-mode", default=None, help="The biLM's fast mode (docs/fast_modes.md), e.g. bf16 (default: exact)."
    )
    args = parser.parse_args()
    elmo = elmo_settings(parser, args)
    runs = [
        run
        for run in grid(args.tasks, args.smoke, args.seeds)
        if run.size in args.sizes and (args.systems is None or run.system in args.systems)
    ]
    # Longest first, so that the big runs do not end up alone at the end.
    runs.sort(key=lambda r: (r.size != "all", r.size != "2000"))
    failed = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for record in pool.map(lambda r: execute(r, args.corpus, args.configs, args.output, elmo), runs):
            name = f"{record['task']}/{record['size']}/{record['system']}/seed{record['seed']}"
            if "error" in record:
                failed += 1
                print(f"FAILED {name}: {record['error']}", flush=True)
            else:
                print(f"{name}: test {record['test']} ({record['train_seconds']:.0f} s)", flush=True)
    print(f"{len(runs) - failed} of {len(runs)} runs done" + (f", {failed} failed" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
