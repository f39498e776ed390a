"""`dump` as one library call: the settings a user gives (`DumpSettings`, checked together before a model
loads), the choice of engine, and the writer each engine uses (one process: `hdf5.write_layers`; a Ray
cluster: `ray_dump.dump_on_ray`). The command line only parses its arguments into the settings."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

from tqdm import tqdm

from ..errors import InputError
from ..nn.device import torch_device
from ..nn.layer_choice import OutputChoice, layers_from_text
from ..nn.run_options import RunOptions
from ..sources import DEFAULT_MODEL, ResolvedModel, reference_to, resolve
from ..util.io import count_lines
from .hdf5 import LayersWritten, check_has_tokens, write_layers
from .storage import Storage
from .tokenized import untokenized_warning

logger = logging.getLogger(__name__)

LOCAL, RAY = "local", "ray"
ENGINES = (LOCAL, RAY)


@dataclass(frozen=True)
class DumpSettings:
    """What `dump` is asked to do, as the command's options name it. `model`: a name, folder or
    `hf:` reference, unless `options` and `weights` name the files; `layers`: all, top, average or L+1
    weights ("0.2,0.3,0.5"); `pool`: "none" or "mean"; `dtype`, `compression`, `compression_level`: how
    datasets are stored; `engine`: "local" (one process, `gpu_id`) or "ray" (`address`, `workers`,
    `gpus_per_worker`)."""

    model: str = DEFAULT_MODEL
    options: Optional[Path] = None
    weights: Optional[Path] = None
    batch_size: int = 64
    max_batch_tokens: Optional[int] = None
    layers: str = "all"
    pool: str = "none"
    dtype: str = "float32"
    compression: str = "none"
    compression_level: Optional[int] = None
    stateful: bool = False
    time_loop: str = "auto"
    progress: bool = True
    overwrite: bool = False
    engine: str = LOCAL
    address: Optional[str] = None
    workers: Optional[int] = None
    gpu_id: int = -1
    gpus_per_worker: float = 0.0

    def __post_init__(self) -> None:
        if (self.options is None) != (self.weights is None):
            raise InputError("give both --options and --weights, or neither (and a model name or directory)")
        if self.stateful and self.max_batch_tokens is not None:
            raise InputError("--stateful batches are consecutive --batch-size groups; drop --max-batch-tokens")
        if self.engine not in ENGINES:
            raise InputError(f"--engine {self.engine!r} is not one of {', '.join(ENGINES)}")
        if self.engine == RAY and self.gpu_id >= 0:
            raise InputError("--gpu-id is for --engine local; on Ray give --gpus-per-worker")
        if self.engine == LOCAL and (self.address is not None or self.workers is not None or self.gpus_per_worker):
            raise InputError("--address, --workers and --gpus-per-worker are for --engine ray")
        self.output(), self.storage(), self.run()  # their own checks, before a model loads

    def output(self) -> OutputChoice:
        return OutputChoice(layers_from_text(self.layers), None if self.pool == "none" else self.pool)

    def storage(self) -> Storage:
        return Storage(self.dtype, None if self.compression == "none" else self.compression, self.compression_level)

    def run(self) -> RunOptions:
        return RunOptions(time_loop=self.time_loop)

    def resolved_model(self) -> ResolvedModel:
        if self.options is not None:
            return resolve(reference_to(self.options, self.weights))
        return resolve(reference_to(self.model))


@dataclass(frozen=True)
class DumpSummary:
    """What a dump wrote: its sentences, and on Ray its shards; in one process, the file's counts."""

    sentences: int
    shards: Optional[int] = None
    written: Optional[LayersWritten] = None

    def describe(self, output_path: Union[str, Path]) -> str:
        if self.written is not None:
            return f"wrote {self.written.summary()} to {output_path}"
        return f"wrote {self.shards} shards, {self.sentences} sentences, to {output_path} (manifest.json)"


def dump(
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    settings: DumpSettings,
    on_warning: Callable[[str], None] = logger.warning,
) -> DumpSummary:
    """Write the biLM layers of every line of `input_path` (on Ray: every file the glob pattern names)
    to `output_path` (on Ray: a folder of shards and `manifest.json`), as `settings` say. Every setting
    and the output path are checked, and the model resolved, before anything is embedded; an input that
    looks untokenized is told to `on_warning` once (the dump goes on)."""
    input_path, output_path = Path(input_path), Path(output_path)
    output, storage, run = settings.output(), settings.storage(), settings.run()
    if settings.engine == RAY:
        return _dump_on_ray(input_path, output_path, settings, output, storage, run)
    if output_path.is_dir():
        raise InputError(f"{output_path} is a folder; give the HDF5 file to write (a folder is for --engine ray)")
    if output_path.exists() and not settings.overwrite:
        raise InputError(f"{output_path} exists; pass --overwrite to replace it, or choose another output file")
    resolved = _resolved(settings, output)
    check_has_tokens(input_path)
    if warning := untokenized_warning(input_path):
        on_warning(warning)
    device = torch_device(settings.gpu_id)
    bilm = resolved.load().eval().to(device)
    with tqdm(total=count_lines(input_path), unit="sent", desc="dump", disable=not settings.progress) as bar:
        written = write_layers(
            bilm,
            input_path,
            output_path,
            settings.batch_size,
            settings.stateful,
            on_block=bar.update,
            output=output,
            storage=storage,
            max_batch_tokens=settings.max_batch_tokens,
            run=run,
        )
    return DumpSummary(written.sentences, written=written)


def _dump_on_ray(
    input_path: Path, output_path: Path, settings: DumpSettings, output: OutputChoice, storage: Storage, run: RunOptions
) -> DumpSummary:
    from .ray_dump import dump_on_ray

    if output_path.exists() and not output_path.is_dir():
        raise InputError(f"{output_path} is a file; with --engine ray give the folder to write the shards to")
    resolved = _resolved(settings, output)
    with tqdm(unit="shard", desc="dump", disable=not settings.progress, delay=1) as bar:
        manifest = dump_on_ray(
            input_path,
            output_path,
            resolved,
            address=settings.address,
            workers=settings.workers,
            gpus_per_worker=settings.gpus_per_worker,
            batch_size=settings.batch_size,
            stateful=settings.stateful,
            overwrite=settings.overwrite,
            on_shard=lambda shard: bar.update(),
            output=output,
            storage=storage,
            max_batch_tokens=settings.max_batch_tokens,
            run=run,
        )
    return DumpSummary(sum(shard.sentences or 0 for shard in manifest.shards), len(manifest.shards))


def _resolved(settings: DumpSettings, output: OutputChoice) -> ResolvedModel:
    """The model the settings name, with a wrong count of `--layers` weights refused from its options
    before its weights load."""
    resolved = settings.resolved_model()
    sizes = resolved.read_options()
    if sizes is not None:
        output.weights(sizes.n_output_layers)
    return resolved
