"""`dump`: a text file's biLM layers into HDF5, the layout of the original's dataset dump; with
`--engine ray`, many files, one HDF5 each, on a Ray cluster (spacy_elmo/embed)."""

from pathlib import Path
from typing import Optional

import typer

from ..elmo.errors import InputError
from ..elmo.sources.bundled import DEFAULT_MODEL
from .app import app

ENGINES = ("local", "ray")


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
    from tqdm import tqdm

    from ..elmo.embed import check_has_tokens, dump_on_ray, write_layers
    from ..elmo.embed.storage import Storage
    from ..elmo.nn.layer_choice import OutputChoice, layers_from_text
    from ..elmo.nn.run_options import RunOptions
    from ..elmo.sources import reference_to, resolve
    from ..elmo.util.io import count_lines
    from ..pipeline.device import place_bilm, use_gpu_id

    if (options is None) != (weights is None):
        raise InputError("give both --options and --weights, or neither (and a model name or directory)")
    output = OutputChoice(layers_from_text(layers), None if pool == "none" else pool)
    storage = Storage(dtype, None if compression == "none" else compression, compression_level)
    run = RunOptions(time_loop=time_loop)
    if stateful and max_batch_tokens is not None:
        raise InputError("--stateful batches are consecutive --batch-size groups; drop --max-batch-tokens")
    resolved = resolve(reference_to(model) if options is None else reference_to(options, weights))
    sizes = resolved.read_options()
    if sizes is not None:  # a wrong count of --layers weights is refused before the weights load
        output.weights(sizes.n_output_layers)
    if engine == "ray":
        if gpu_id >= 0:
            raise InputError("--gpu-id is for --engine local; on Ray give --gpus-per-worker")
        if output_path.exists() and not output_path.is_dir():
            raise InputError(f"{output_path} is a file; with --engine ray give the folder to write the shards to")
        with tqdm(unit="shard", desc="dump", disable=not progress, delay=1) as bar:
            manifest = dump_on_ray(
                input_path,
                output_path,
                resolved,
                address=address,
                workers=workers,
                gpus_per_worker=gpus_per_worker,
                batch_size=batch_size,
                stateful=stateful,
                overwrite=overwrite,
                on_shard=lambda shard: bar.update(),
                output=output,
                storage=storage,
                max_batch_tokens=max_batch_tokens,
                run=run,
            )
        sentences = sum(shard.sentences or 0 for shard in manifest.shards)
        typer.echo(f"wrote {len(manifest.shards)} shards, {sentences} sentences, to {output_path} (manifest.json)")
        return
    if engine != "local":
        raise InputError(f"--engine {engine!r} is not one of {', '.join(ENGINES)}")
    if address is not None or workers is not None or gpus_per_worker:
        raise InputError("--address, --workers and --gpus-per-worker are for --engine ray")
    if output_path.is_dir():
        raise InputError(f"{output_path} is a folder; give the HDF5 file to write (a folder is for --engine ray)")
    if output_path.exists() and not overwrite:
        raise InputError(f"{output_path} exists; pass --overwrite to replace it, or choose another output file")
    check_has_tokens(input_path)
    n_lines = count_lines(input_path)
    use_gpu_id(gpu_id)
    bilm = place_bilm(resolved.load())
    with tqdm(total=n_lines, unit="sent", desc="dump", disable=not progress) as bar:
        written = write_layers(
            bilm,
            input_path,
            output_path,
            batch_size,
            stateful,
            on_block=bar.update,
            output=output,
            storage=storage,
            max_batch_tokens=max_batch_tokens,
            run=run,
        )
    typer.echo(f"wrote {written.sentences} sentences to {output_path}")
