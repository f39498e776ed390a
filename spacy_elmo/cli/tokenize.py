"""`tokenize`: raw text (one sentence or post per line) into the pretraining format.

The biLM sees the tokens a spaCy pipeline will give it later, so the pretraining text is tokenized with
the same language's spaCy tokenizer. Whitespace tokens are dropped (they never reach the biLM in the
component either); every non-empty line stays one line, so sentence boundaries are the input's.
"""

from pathlib import Path
from typing import Any, Iterator, List, Optional, TextIO

import typer
from tqdm import tqdm
from wasabi import msg

from ..errors import ElmoError
from ..pretrain.corpus import expand_paths
from . import app


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf8") as f:
            for line in f:
                line = line.strip()
                if line:
                    yield line
    except UnicodeDecodeError as err:
        raise ElmoError(
            f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); convert it to UTF-8 first"
        ) from None


@app.command("tokenize")
def tokenize_command(
    inputs: List[str] = typer.Argument(
        ..., help="Text files, directories or glob patterns; one sentence (or post) per line, raw text."
    ),
    output_dir: Path = typer.Option(
        ..., "--output-dir", "-o", file_okay=False, help="Directory for the tokenized files (same names as the inputs)."
    ),
    lang: str = typer.Option("en", "--lang", help="spaCy language code whose tokenizer to use."),
    holdout_every: Optional[int] = typer.Option(
        None,
        "--holdout-every",
        min=2,
        help="Send every N-th line to OUTPUT_DIR/heldout/ instead, for a held-out set from the same text.",
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace output files that exist."),
) -> None:
    """Write each input's lines with spaCy's tokens joined by single spaces, whitespace tokens left out."""
    paths = expand_paths(inputs)
    targets = [output_dir / p.name for p in paths]
    if len(set(targets)) != len(targets):
        raise ElmoError("two inputs have the same file name; tokenize them into different --output-dir")
    existing = [t for t in targets if t.exists()]
    if existing and not overwrite:
        raise ElmoError(f"{existing[0]} exists; pass --overwrite to replace it, or choose another --output-dir")
    import spacy  # here, so that the other commands run where spaCy is not installed

    tokenizer: Any = spacy.blank(lang).tokenizer
    output_dir.mkdir(parents=True, exist_ok=True)
    if holdout_every:
        (output_dir / "heldout").mkdir(exist_ok=True)
    n_tokens = n_lines = n_heldout = 0
    for path, target in zip(tqdm(paths, unit="file", desc="tokenizing", disable=len(paths) < 2), targets):
        heldout: Optional[TextIO] = (
            open(output_dir / "heldout" / path.name, "w", encoding="utf8") if holdout_every else None
        )
        try:
            with open(target, "w", encoding="utf8") as out:
                for i, doc in enumerate(tokenizer.pipe(_lines(path), batch_size=1000)):
                    words = [t.text for t in doc if not t.is_space]
                    if not words:
                        continue
                    if heldout is not None and holdout_every and (i + 1) % holdout_every == 0:
                        heldout.write(" ".join(words) + "\n")
                        n_heldout += 1
                    else:
                        out.write(" ".join(words) + "\n")
                        n_lines += 1
                        n_tokens += len(words)
        finally:
            if heldout is not None:
                heldout.close()
    held = f", {n_heldout} lines held out in {output_dir / 'heldout'}" if holdout_every else ""
    msg.good(f"wrote {n_lines} lines, {n_tokens} tokens to {output_dir}{held}")
