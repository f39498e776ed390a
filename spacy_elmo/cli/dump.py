"""`dump`: a text file's biLM layers into HDF5, the layout of the original's dataset dump."""

from itertools import islice
from pathlib import Path
from typing import Iterator, List, Optional

import h5py
import typer
from tqdm import tqdm

from ..errors import ElmoError
from ..io import atomic_output, count_lines, text_lines
from ..models import DEFAULT_MODEL, load_bilm, resolve_model
from ..nn.bilm import BiLM
from . import app


def _lines(path: Path) -> Iterator[List[str]]:
    for line in text_lines(path, "input"):
        yield line.split()


def load_model_for_dump(model: str, options: Optional[Path], weights: Optional[Path]) -> BiLM:
    """The biLM a user names: `--options` + `--weights`, else `model` (what `load_bilm` takes: a model
    directory or archive of any format, a bundled name, a downloaded published model's name)."""
    if options is not None or weights is not None:
        if options is None or weights is None:
            raise ElmoError("give both --options and --weights, or neither (and a model name or directory)")
        return load_bilm(options, weights)
    return load_bilm(resolve_model(model))


@app.command("dump")
def dump_command(
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="One whitespace-tokenized sentence per line."
    ),
    output_path: Path = typer.Argument(..., dir_okay=False, help="HDF5 file to write."),
    model: str = typer.Option(
        DEFAULT_MODEL,
        "--model",
        "-m",
        help="A model directory or zip of any format (e.g. a `pretrain` output), a bundled model's name, or "
        "a downloaded published model's name (`python -m spacy_elmo models`).",
    ),
    options: Optional[Path] = typer.Option(
        None, "--options", exists=True, dir_okay=False, help="options.json of the model (with --weights)."
    ),
    weights: Optional[Path] = typer.Option(
        None, "--weights", exists=True, dir_okay=False, help="Weights (.hdf5) of the model (with --options)."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Sentences per forward pass."),
    stateful: bool = typer.Option(False, "--stateful", help="Carry LSTM states across batches, as the original does."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT_PATH if it exists."),
) -> None:
    """Write one dataset per input line, key = the line index, shape [L+1, n_tokens, 2P] (float32)."""
    if output_path.exists() and not overwrite:
        raise ElmoError(f"{output_path} exists; pass --overwrite to replace it, or choose another output file")
    if not any(line.split() for line in text_lines(input_path, "input")):  # stops at the first token
        raise ElmoError(
            f"input file {input_path} has no tokens; it needs one whitespace-tokenized sentence per "
            "line (nothing was written)"
        )
    n_lines = count_lines(input_path)
    bilm = load_model_for_dump(model, options, weights)
    with atomic_output(output_path) as tmp_path, h5py.File(tmp_path, "w") as out:
        lines = _lines(input_path)
        index = 0
        with tqdm(total=n_lines, unit="sent", desc="dump", disable=not progress) as bar:
            # A few batches at a time keeps memory flat however long the file is.
            while chunk := list(islice(lines, batch_size * 16)):
                for layers in bilm.embed(chunk, stateful=stateful, batch_size=batch_size):
                    out.create_dataset(str(index), data=layers)
                    index += 1
                bar.update(len(chunk))
    typer.echo(f"wrote {index} sentences to {output_path}")
