"""`dump`: a text file's biLM layers into HDF5, the layout of the original's dataset dump."""

from itertools import islice
from pathlib import Path
from typing import Iterator, List

import h5py
import typer
from tqdm import tqdm

from ..errors import ElmoError
from ..io import atomic_output, count_lines, text_lines
from ..weights import load_bilm
from . import app


def _lines(path: Path) -> Iterator[List[str]]:
    for line in text_lines(path, "input"):
        yield line.split()


@app.command("dump")
def dump_command(
    input_path: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="One whitespace-tokenized sentence per line."
    ),
    output_path: Path = typer.Argument(..., dir_okay=False, help="HDF5 file to write."),
    options: Path = typer.Option(..., "--options", exists=True, dir_okay=False, help="options.json of the model."),
    weights: Path = typer.Option(..., "--weights", exists=True, dir_okay=False, help="Weights (.hdf5) of the model."),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Sentences per forward pass."),
    stateful: bool = typer.Option(False, "--stateful", help="Carry LSTM states across batches, as the original does."),
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
    bilm = load_bilm(options, weights)
    with atomic_output(output_path) as tmp_path, h5py.File(tmp_path, "w") as out:
        lines = _lines(input_path)
        index = 0
        with tqdm(total=n_lines, unit="sent", desc="dump") as bar:
            # A few batches at a time keeps memory flat however long the file is.
            while chunk := list(islice(lines, batch_size * 16)):
                for layers in bilm.embed(chunk, stateful=stateful, batch_size=batch_size):
                    out.create_dataset(str(index), data=layers)
                    index += 1
                bar.update(len(chunk))
    typer.echo(f"wrote {index} sentences to {output_path}")
