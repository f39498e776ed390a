"""Wall time of `spacy train` for the baseline and an ELMo system on the same training set and schedule,
run several times in alternation: the ratio the table's full-set rows show, with its spread.

    python -m scripts.time_runs corpus configs runs-timing --task pos --size all --rounds 3 [--threads 1]
        [--output timing.md]

Why not one run each: on a shared 2-core machine the same run's time varies by up to a quarter between
hours (on one AMD EPYC a full tagging run took 174-206 s for the baseline and 227-269 s with ELMo in one
session, the full entity baseline 186-245 s in another), as much as the 1.3x target's margin. So the
systems take turns, in the order A B, B A, A B, ... (each round reverses the last), so that a slow or
fast stretch of the machine falls on both; each round gives one paired ratio, and the medians give the
figure. The command of each run is the grid's (run_grid.train_command: the same seed, steps and
evaluations); only the time is kept, the trained pipelines are deleted. Each run's log keeps spaCy's
output with the seconds since start on every line, and the printout gives each run's CPU time and when
its step-0 evaluation came (for ELMo, after the one-time embedding of the training and dev text).
Prints figures; asserts nothing.

Threads: one, as in the grid, unless `--threads` says otherwise; `--threads 0` pins nothing, which is
what a user's plain `spacy train` gets: torch runs the biLM on every core while spaCy's heads stay on
one thread, so the one-time embedding shrinks and the heads do not.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, TextIO, Tuple

import torch

from spacy_elmo.elmo.util.machine import cpu_name, machine

from .run_grid import SCHEDULE, Run, add_elmo_arguments, elmo_settings, thread_env, train_command

BASELINE = "baseline"
TITLE = "Full `spacy train` runs timed in alternating rounds (`python -m scripts.time_runs`), nothing else running."
HEADER = (
    "| CPU | torch | task | training sentences | steps | threads | rounds | baseline s (median) "
    "| ELMo s (median) | ratio (paired min-max) |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def round_order(systems: Sequence[str], round_index: int) -> List[str]:
    """A B in even rounds, B A in odd ones: each system runs first as often as last."""
    return list(systems) if round_index % 2 == 0 else list(reversed(systems))


def summarise(times: Dict[str, List[float]], system: str) -> Tuple[float, float, float, Tuple[float, float]]:
    """Median seconds of the baseline and of `system`, the ratio of the medians, and the lowest and
    highest ratio of one round's pair."""
    base, other = times[BASELINE], times[system]
    paired = [o / b for b, o in zip(base, other)]
    return (
        statistics.median(base),
        statistics.median(other),
        statistics.median(other) / statistics.median(base),
        (
            min(paired),
            max(paired),
        ),
    )


def threads_label(threads: int) -> str:
    return str(threads) if threads > 0 else f"default ({os.cpu_count()} cores)"


@dataclass
class Timing:
    """One run: wall seconds, the CPU seconds of its process (user + system: a wall time far above them
    means the run waited), and the wall seconds at which spaCy printed the step-0 evaluation (the
    one-time costs before the loop: loading, and for ELMo the embedding of the training and dev text)."""

    wall: float
    cpu: float
    first_evaluation: Optional[float]


# The first row of spaCy's training table: epoch 0, step 0.
FIRST_EVALUATION = re.compile(r"^\s*0\s+0\s")


def stamp_lines(lines: Iterable[str], log: TextIO, started: float) -> Optional[float]:
    """Copy `lines` to `log`, each prefixed with the seconds since `started`; return the seconds at the
    step-0 evaluation row, if one came."""
    first_evaluation = None
    for line in lines:
        seconds = time.perf_counter() - started
        log.write(f"{seconds:8.1f} {line}")
        if first_evaluation is None and FIRST_EVALUATION.match(line):
            first_evaluation = seconds
    return first_evaluation


def time_run(
    run: Run, corpus: Path, configs: Path, scratch: Path, elmo: Dict[str, Optional[str]], threads: int
) -> Timing:
    output = scratch / f"{run.system}-model"
    shutil.rmtree(output, ignore_errors=True)
    log_path = scratch / f"{run.system}.log"
    # Unbuffered, so that each line is stamped when spaCy prints it.
    env = dict(thread_env(threads), PYTHONUNBUFFERED="1")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(log_path, "w") as log:
        command = train_command(run, corpus, configs, output, elmo)
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True) as child:
            assert child.stdout is not None
            first_evaluation = stamp_lines(child.stdout, log, started)
        returncode = child.wait()
    wall = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    shutil.rmtree(output, ignore_errors=True)
    if returncode != 0:
        sys.exit(f"spacy train failed for {run.name}; see {log_path}")
    return Timing(wall, cpu, first_evaluation)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("configs", type=Path)
    parser.add_argument("scratch", type=Path, help="Directory for the runs' logs (the models are deleted).")
    parser.add_argument("--task", default="pos", choices=["pos", "ner"])
    parser.add_argument("--size", default="all", choices=list(SCHEDULE))
    parser.add_argument("--system", default="elmo_encoder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Threads per run: 1 as in the grid (default); 0 pins nothing, as a plain `spacy train` runs.",
    )
    parser.add_argument(
        "--output", type=Path, default=None, help="Also append the row to this markdown file (with a header if new)."
    )
    add_elmo_arguments(parser)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.threads < 0:
        parser.error("--threads must be 0 (nothing pinned) or more")
    elmo = elmo_settings(parser, args)
    steps, eval_every = SCHEDULE[args.size]
    runs = {system: Run(args.task, args.size, system, 0, steps, eval_every) for system in (BASELINE, args.system)}
    args.scratch.mkdir(parents=True, exist_ok=True)
    if args.threads > 0:  # as in the runs, so that the printout names their thread count
        torch.set_num_threads(args.threads)
    print(machine(), flush=True)
    times: Dict[str, List[float]] = {system: [] for system in runs}
    for index in range(args.rounds):
        for system in round_order(list(runs), index):
            timing = time_run(runs[system], args.corpus, args.configs, args.scratch, elmo, args.threads)
            times[system].append(timing.wall)
            first = "none" if timing.first_evaluation is None else f"{timing.first_evaluation:.1f} s"
            print(
                f"round {index + 1}: {system} {timing.wall:.1f} s "
                f"(CPU {timing.cpu:.1f} s; step-0 evaluation at {first})",
                flush=True,
            )
    base, other, ratio, (low, high) = summarise(times, args.system)
    row = (
        f"| {cpu_name()} | {torch.__version__} | {args.task} | {args.size} | {steps} | {threads_label(args.threads)} "
        f"| {args.rounds} | {base:.1f} | {other:.1f} | {ratio:.2f}x ({low:.2f}-{high:.2f}) |"
    )
    print(HEADER)
    print(row)
    if args.output is not None:
        new_file = not args.output.exists()
        with open(args.output, "a") as out:
            out.write((f"{TITLE}\n\n{HEADER}\n" if new_file else "") + row + "\n")


if __name__ == "__main__":
    main()
