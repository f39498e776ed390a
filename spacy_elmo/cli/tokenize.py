"""`tokenize`: raw text (one sentence or paragraph per line) into the pretraining layout.

The biLM sees the tokens a spaCy pipeline will give it later, so the pretraining text is tokenized with
the same language's spaCy tokenizer. Whitespace tokens are dropped (they never reach the biLM in the
component either); every non-empty line stays one line, so sentence boundaries are the input's.

The output directory gets the layout that `pretrain` (the `init-config` presets) and `evaluate` read:
`train/<input file name>` for each input and, with `--holdout-every`, `dev.txt` and `test.txt`. Nothing
is written in place: every output appears at once when all are complete, an input is never an output,
and an existing file is replaced only with `--overwrite`.
"""

import contextlib
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, TextIO

import typer
from wasabi import msg

from ..elmo.errors import InputError
from .app import app

TRAIN_DIR = "train"
DEV_FILE = "dev.txt"
TEST_FILE = "test.txt"


def _lines(path: Path) -> Iterator[str]:
    from ..elmo.util.io import text_lines

    for line in text_lines(path, "input"):
        line = line.strip()
        if line:
            yield line


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def output_files(paths: List[Path], output_dir: Path, holdout: bool) -> Dict[str, Path]:
    """The files `tokenize` writes, by role ("train:<name>", "dev", "test"); refused when two inputs
    share a name or an output is one of the inputs."""
    targets = {f"train:{p.name}": output_dir / TRAIN_DIR / p.name for p in paths}
    if len(targets) != len(paths):
        raise InputError("two inputs have the same file name; rename one or tokenize them in two runs")
    if holdout:
        targets.update(dev=output_dir / DEV_FILE, test=output_dir / TEST_FILE)
    for target in targets.values():
        clash = next((p for p in paths if _same_file(p, target)), None)
        if clash is not None:
            raise InputError(
                f"input {clash} would be overwritten by the output {target}; choose an --output-dir that "
                "holds none of the inputs (e.g. corpus/ for raw/*.txt)"
            )
    return targets


@app.command("tokenize")
def tokenize_command(
    inputs: List[str] = typer.Argument(
        ..., help="Text files, directories or glob patterns; one sentence (or paragraph) per line, raw text."
    ),
    output_dir: Path = typer.Option(
        ...,
        "--output-dir",
        "-o",
        file_okay=False,
        help="Corpus directory: train/<input name> per input, and dev.txt + test.txt with --holdout-every.",
    ),
    lang: str = typer.Option("en", "--lang", help="spaCy language code whose tokenizer to use."),
    holdout_every: Optional[int] = typer.Option(
        None,
        "--holdout-every",
        min=2,
        help="Hold out every N-th line, alternately into dev.txt and test.txt, instead of train/.",
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace output files that exist."),
) -> None:
    """Write each input's lines with spaCy's tokens joined by single spaces, whitespace tokens left out."""
    from ..elmo.pretrain.corpus import expand_paths
    from ..elmo.util.io import atomic_output

    paths = expand_paths(inputs)
    targets = output_files(paths, output_dir, holdout=holdout_every is not None)
    existing = [str(t) for t in targets.values() if t.exists()]
    if existing and not overwrite:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise InputError(
            f"{existing[0]}{more} exist(s); pass --overwrite to replace them, or choose another --output-dir"
        )
    import spacy
    from tqdm import tqdm

    tokenizer: Any = spacy.blank(lang).tokenizer
    n_tokens = n_lines = n_heldout = 0
    # Every output is written to a temporary file and all are renamed at the end: a kill or an error
    # leaves the previous outputs (or none), never part of a corpus.
    with contextlib.ExitStack() as stack:
        temps = {role: stack.enter_context(atomic_output(target)) for role, target in targets.items()}
        heldout: List[TextIO] = [
            stack.enter_context(open(temps[role], "w", encoding="utf8")) for role in ("dev", "test") if role in temps
        ]
        for path in tqdm(paths, unit="file", desc="tokenizing", disable=len(paths) < 2):
            with open(temps[f"train:{path.name}"], "w", encoding="utf8") as out:
                for i, doc in enumerate(tokenizer.pipe(_lines(path), batch_size=1000)):
                    words = [t.text for t in doc if not t.is_space]
                    if not words:
                        continue
                    if holdout_every and (i + 1) % holdout_every == 0:
                        heldout[n_heldout % 2].write(" ".join(words) + "\n")
                        n_heldout += 1
                    else:
                        out.write(" ".join(words) + "\n")
                        n_lines += 1
                        n_tokens += len(words)
    held = f"; {n_heldout} lines held out into {DEV_FILE} and {TEST_FILE}" if holdout_every else ""
    msg.good(f"wrote {n_lines} lines, {n_tokens} tokens to {output_dir / TRAIN_DIR}{held}")
