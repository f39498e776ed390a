"""`dump`: a text file's biLM layers into HDF5, the layout of the original's dataset dump; with
`--engine ray`, many files, one HDF5 each, on a Ray cluster. The arguments only: the library's
`elmo/embed/dump.py` checks them, picks the engine and writes."""

from pathlib import Path
from typing import Optional

import typer

from ..elmo.sources.bundled import DEFAULT_MODEL
from .app import app


@app.command("dump")
def dump_command(
    input_path: Path = typer.Argument(
        ...,
        help="One whitespace-tokenized sentence per line; with --engine ray a glob pattern (quoted) of such files.",
    ),
    output_path: Path = typer.Argument(
        ..., help="HDF5 file to write; with --engine ray the folder of the shards and manifest.json."
    ),
    model: str = typer.Option(
        DEFAULT_MODEL,
        "--model",
        "-m",
        help="A model directory or zip of any format (e.g. a `pretrain` output), a bundled model's name, "
        "a downloaded published model's name (`python -m spacy_elmo models`), or hf:ORG/REPO[@REVISION].",
    ),
    options: Optional[Path] = typer.Option(
        None, "--options", exists=True, dir_okay=False, help="options.json of the model (with --weights)."
    ),
    weights: Optional[Path] = typer.Option(
        None, "--weights", exists=True, dir_okay=False, help="Weights (.hdf5) of the model (with --options)."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Sentences per forward pass."),
    max_batch_tokens: Optional[int] = typer.Option(
        None,
        "--max-batch-tokens",
        min=1,
        help="Batches of at most N padded tokens (rows x longest row), longest sentences first, "
        "instead of --batch-size sentences (not with --stateful).",
    ),
    layers: str = typer.Option(
        "all",
        "--layers",
        help="All ([L+1, n, 2P]), top (the last LSTM layer), average, or L+1 weights, token layer "
        "first (e.g. 0.2,0.3,0.5): one mix [n, 2P].",
    ),
    pool: str = typer.Option(
        "none", "--pool", help="None, or mean: each line's mean over its tokens ([L+1, 2P] or [2P])."
    ),
    dtype: str = typer.Option("float32", "--dtype", help="Float32 or float16 (half the bytes)."),
    compression: str = typer.Option("none", "--compression", help="None, gzip or lzf (h5py's filters, with shuffle)."),
    compression_level: Optional[int] = typer.Option(None, "--compression-level", help="Gzip's level, 0-9 (default 4)."),
    stateful: bool = typer.Option(False, "--stateful", help="Carry LSTM states across batches, as the original does."),
    time_loop: str = typer.Option(
        "auto",
        "--time-loop",
        help="How the LSTM steps through time: auto (the device's default), step, or, experimental and exact "
        "alike, wavefront or captured (CUDA graphs; docs/gpu.md).",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace OUTPUT_PATH if it exists (ray: redo every shard, complete or not)."
    ),
    engine: str = typer.Option("local", "--engine", help="local (one process) or ray (one shard per input file)."),
    address: Optional[str] = typer.Option(
        None,
        "--address",
        help="ray: a running cluster to join (default $RAY_ADDRESS; auto: the one `ray start` started here; "
        "else a local cluster of this run's own).",
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, help="ray: worker actors, one CPU each (default: the cluster's CPUs)."
    ),
    gpu_id: int = typer.Option(
        -1, "--gpu-id", "-g", help="local: the GPU to run on, as `spacy train --gpu-id` takes it (-1: the CPU)."
    ),
    gpus_per_worker: float = typer.Option(
        0.0, "--gpus-per-worker", min=0.0, help="ray: GPUs per worker; the biLM runs on CUDA when above 0."
    ),
) -> None:
    """Write one dataset per input line, key = the line index, shape [L+1, n_tokens, 2P] (float32), or
    what --layers and --pool keep of it, stored as --dtype and --compression say."""
    from ..elmo.embed.dump import DumpSettings, dump

    settings = DumpSettings(
        model=model,
        options=options,
        weights=weights,
        batch_size=batch_size,
        max_batch_tokens=max_batch_tokens,
        layers=layers,
        pool=pool,
        dtype=dtype,
        compression=compression,
        compression_level=compression_level,
        stateful=stateful,
        time_loop=time_loop,
        progress=progress,
        overwrite=overwrite,
        engine=engine,
        address=address,
        workers=workers,
        gpu_id=gpu_id,
        gpus_per_worker=gpus_per_worker,
    )
    summary = dump(input_path, output_path, settings, on_warning=lambda text: typer.echo(f"warning: {text}", err=True))
    typer.echo(summary.describe(output_path))
