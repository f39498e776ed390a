"""`dump`: a text file's biLM layers into HDF5, the layout of the original's dataset dump."""

from itertools import islice
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import h5py
import typer
from tqdm import tqdm

from ..errors import ElmoError
from ..io import atomic_output, count_lines, text_lines
from ..models import DEFAULT_MODEL, bundled_model_paths, bundled_models
from ..weights import load_bilm
from . import app

OPTIONS_FILE, WEIGHTS_FILE = "options.json", "weights.hdf5"


def _lines(path: Path) -> Iterator[List[str]]:
    for line in text_lines(path, "input"):
        yield line.split()


def model_files(model: str, options: Optional[Path], weights: Optional[Path]) -> Tuple[Path, Path]:
    """(options.json, weights) of the model a user names: `--options` + `--weights`, else `model`, a
    bundled model's name or a directory holding options.json and weights.hdf5 (a `pretrain` output)."""
    if options is not None or weights is not None:
        if options is None or weights is None:
            raise ElmoError("give both --options and --weights, or neither (and a model name or directory)")
        return options, weights
    if model in bundled_models():
        return bundled_model_paths(model)
    folder = Path(model)
    if folder.is_dir():
        missing = [name for name in (OPTIONS_FILE, WEIGHTS_FILE) if not (folder / name).is_file()]
        if missing:
            raise ElmoError(
                f"model directory {folder} has no {' or '.join(missing)}; give a `pretrain` output "
                "directory, or the files with --options and --weights"
            )
        return folder / OPTIONS_FILE, folder / WEIGHTS_FILE
    raise ElmoError(
        f"no model {model!r}: not a bundled model ({', '.join(bundled_models())}) nor a directory; "
        "give one of those, or the files with --options and --weights"
    )


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
        help="A bundled model's name or a model directory (options.json + weights.hdf5, e.g. a `pretrain` output).",
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
    bilm = load_bilm(*model_files(model, options, weights))
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
