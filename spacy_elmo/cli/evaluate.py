"""`evaluate`: held-out perplexity of a pretrained biLM."""

import json
from pathlib import Path
from typing import List

import typer
from wasabi import msg

from ..elmo.errors import InputError
from .app import app


@app.command("evaluate")
def evaluate_command(
    model_dir: Path = typer.Argument(
        ...,
        file_okay=False,
        help="Output directory of `pretrain`, or a directory with a model's softmax.hdf5 and vocab.txt, such "
        "as a source checkout's projects/bundled_model/models/gutenberg-web-2x512.",
    ),
    heldout: List[str] = typer.Argument(
        ...,
        help="Held-out text, one whitespace-tokenized sentence per line: files, directories or glob "
        "patterns (e.g. corpus/test.txt as `tokenize --holdout-every` writes it).",
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Rows of text read in parallel."),
    unroll_steps: int = typer.Option(20, "--unroll-steps", min=1, help="Tokens per window (states carried)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar (not with --json)."),
    device: str = typer.Option(
        "auto", "--device", help="torch device, e.g. cpu or cuda:0; auto: a GPU if there is one."
    ),
) -> None:
    """Forward, backward and average perplexity (full softmax, states carried, as the original reports)."""
    import torch

    from ..elmo.pretrain.corpus import expand_paths
    from ..elmo.pretrain.export import load_language_model
    from ..elmo.pretrain.perplexity import perplexity
    from ..elmo.sources import reference_to, resolve

    resolved = resolve(reference_to(model_dir))
    if resolved.origin == "bundled":
        raise InputError(
            f"the bundled model {str(model_dir)!r} ships no softmax.hdf5 in the package; its softmax and vocab.txt "
            f"are in a source checkout's models/{model_dir}/: give that directory (evaluate models/{model_dir} ...)"
        )
    model_dir = resolved.model_path()
    paths = expand_paths(heldout)
    model, vocab = load_language_model(model_dir)
    model.to(torch.device("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device)
    result = perplexity(
        model, vocab, paths, batch_size=batch_size, unroll_steps=unroll_steps, show_progress=progress and not as_json
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
        return
    msg.table(
        [
            ("forward", f"{result.forward:.2f}"),
            ("backward", f"{result.backward:.2f}"),
            ("average", f"{result.average:.2f}"),
            ("tokens", str(result.n_tokens)),
        ],
        header=("perplexity", ""),
        divider=True,
    )
