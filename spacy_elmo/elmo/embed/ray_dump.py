"""`dump` on a Ray cluster: one shard per input file, each exactly the file `dump` writes for that input.

Workers are Ray actors (one CPU each, `gpus_per_worker` GPUs each) that load the biLM once and are
handed whole files, one at a time, as they finish the previous one: a file is the unit of resuming, so
a shard is written by one worker from start to end through `io.atomic_output` (complete or absent). A
worker process that dies is restarted by Ray and its file retried (`MAX_RESTARTS`); the retry's write
sweeps the temporary file the dead one left. The driver alone writes the manifest, which records the
digest of the model's files; a worker whose node reads other files under the model's paths refuses its
shards, so a folder never mixes two models. Ray is an optional dependency, imported here only.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

from .. import __version__
from ..errors import ElmoError, InputError
from ..nn.kernels import KERNEL_VARIABLE
from ..nn.layer_choice import OutputChoice
from ..nn.run_options import EXACT, RunOptions
from ..sources import ModelReference, ResolvedModel, resolve
from ..util.io import file_sha256
from .errors import RayClusterError
from .hdf5 import LayersWritten, check_has_tokens, write_layers
from .manifest import (
    DONE,
    FAILED,
    Manifest,
    Shard,
    expand_inputs,
    is_complete,
    model_files,
    model_identity,
    read_manifest,
    shard_names,
)
from .storage import Storage

# Restarts of a dead worker, and retries of the file it held, before that file is reported as failed.
MAX_RESTARTS = 3
# Workers are named `NAMESPACE/RUN-i` so that a dump's workers can be found on a shared cluster.
NAMESPACE = "spacy-elmo-dump"
# Seconds to wait for a cluster address to answer before saying there is none there.
PROBE_SECONDS = 5.0


def import_ray() -> Any:
    """The `ray` module, or an ElmoError with the command that installs it."""
    try:
        import ray
    except ImportError:
        raise InputError(
            "the ray engine needs Ray, which is not installed; install it with "
            "`pip install 'spacy-elmo[ray]'` (or `pip install 'ray[data]'`)"
        ) from None
    return ray


class ShardWriter:
    """A worker: the biLM, loaded once, and the files it is given turned into shards."""

    def __init__(
        self,
        reference: ModelReference,
        batch_size: int,
        stateful: bool,
        device: Optional[str],
        output: OutputChoice = OutputChoice(),
        storage: Storage = Storage(),
        max_batch_tokens: Optional[int] = None,
        run: RunOptions = EXACT,
    ) -> None:
        # Resolved again here: a bundled model or the cache may sit at another path on this node.
        model = resolve(reference)
        self.identity = model_identity(model_files(model))
        self.bilm = model.load()
        if device is not None:
            self.bilm.to(device)
        self.batch_size = batch_size
        self.stateful = stateful
        self.output, self.storage, self.max_batch_tokens = output, storage, max_batch_tokens
        self.run = run

    def pid(self) -> int:
        """The worker's process id (workers answer this while writing: two calls run at once)."""
        return os.getpid()

    def write(self, input_path: str, output_path: str, identity: str) -> LayersWritten:
        """The shard of `input_path`, if this worker's model files are the driver's (digest `identity`)."""
        if identity != self.identity:
            raise InputError(
                f"the worker on {socket.gethostname()} read other model files than the driver (sha256 "
                f"{self.identity[:12]}... where the manifest records {identity[:12]}...): give every node the "
                "same model, e.g. on shared storage, and run the same command again"
            )
        return write_layers(
            self.bilm,
            input_path,
            output_path,
            self.batch_size,
            self.stateful,
            output=self.output,
            storage=self.storage,
            max_batch_tokens=self.max_batch_tokens,
            run=self.run,
        )


def dump_on_ray(
    inputs: Union[str, Path],
    out_dir: Union[str, Path],
    model: ResolvedModel,
    address: Optional[str] = None,
    workers: Optional[int] = None,
    gpus_per_worker: float = 0.0,
    batch_size: int = 64,
    stateful: bool = False,
    overwrite: bool = False,
    on_shard: Optional[Callable[[Shard], None]] = None,
    output: OutputChoice = OutputChoice(),
    storage: Storage = Storage(),
    max_batch_tokens: Optional[int] = None,
    run: RunOptions = EXACT,
) -> Manifest:
    """Dump every file `inputs` (a path or glob pattern) names into `out_dir`, one shard per file
    (`manifest.shard_names`), with `workers` Ray actors; `out_dir/manifest.json` records the run.

    Shards a previous run completed (per its manifest) from the same input bytes and model files are
    kept unless `overwrite`; other model files (weights replaced at the same path) redo every shard.
    `address`: a running cluster to join (default `$RAY_ADDRESS`; `auto`: the one `ray start` started on
    this machine; neither: a local cluster of this run's own, of `workers` CPUs, shut down at the end, even
    where another runs on the machine; an already connected `ray` is used as it is). `on_shard` is called as
    each shard ends. A shard that fails (bad bytes in its file, a worker that died `MAX_RESTARTS` times)
    is marked `failed` in the manifest and the others go on; then an ElmoError lists the failures. `model`
    is resolved by the caller, so a model that is not there fails before a worker starts; each worker
    resolves its reference again, on its own node. `output`, `storage`, `max_batch_tokens`, `run`: as
    `dump`'s (`write_layers`); the manifest records the first two where they are not the defaults, so a rerun
    with others redoes every shard and a default run's manifest is the one earlier versions wrote.
    """
    out_dir = Path(out_dir)
    paths = expand_inputs(inputs)
    for path in paths:
        check_has_tokens(path)
    names = shard_names(paths)
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is not None:
        _probe(address)
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if gpus_per_worker < 0:
        raise InputError(f"--gpus-per-worker must be 0 or more, got {gpus_per_worker}")
    identity = model_identity(model_files(model))
    settings: Dict[str, Any] = {"model": model.reference.describe(), "model_sha256": identity, "stateful": stateful}
    if output != OutputChoice():
        layers = output.layers
        settings.update(layers=layers if isinstance(layers, str) else list(layers), pool=output.pool)
    if storage != Storage():
        settings.update(dtype=storage.dtype, compression=storage.compression, compression_level=storage.level)
    previous = None if overwrite else read_manifest(out_dir)
    shards = []
    for path, name in zip(paths, names):
        shard = Shard(str(path.resolve()), name, path.stat().st_size, file_sha256(path, "input file"))
        if is_complete(shard, previous, settings, out_dir):
            assert previous is not None
            shard = next(old for old in previous.shards if old.output == name)
        shards.append(shard)
    manifest = Manifest(settings, __version__, shards)
    manifest.write(out_dir)
    todo = [shard for shard in shards if shard.status != DONE]
    if todo:
        cluster = _Cluster(address, workers, gpus_per_worker)
        _run(
            todo,
            manifest,
            out_dir,
            _Job(model.reference, identity, batch_size, stateful, output, storage, max_batch_tokens, run),
            cluster,
            on_shard,
        )
    failed = [shard for shard in shards if shard.status == FAILED]
    if failed:
        reasons = "; ".join(f"{shard.input}: {shard.error}" for shard in failed)
        raise InputError(
            f"{len(failed)} of {len(shards)} shards failed ({reasons}); the others are written. Fix the inputs "
            f"and run the same command again: it redoes only these (see {out_dir / 'manifest.json'})"
        )
    return manifest


@dataclass(frozen=True)
class _Cluster:
    """Where the workers run: `address` (None: a local cluster), how many, and their GPUs each."""

    address: Optional[str]
    workers: Optional[int]
    gpus_per_worker: float


@dataclass(frozen=True)
class _Job:
    """What each worker does with a shard: the model (and its files' digest), and how `write_layers`
    batches and computes it."""

    reference: ModelReference
    identity: str
    batch_size: int
    stateful: bool
    output: OutputChoice
    storage: Storage
    max_batch_tokens: Optional[int]
    run: RunOptions


def _run(
    todo: List[Shard],
    manifest: Manifest,
    out_dir: Path,
    job: _Job,
    cluster: _Cluster,
    on_shard: Optional[Callable[[Shard], None]],
) -> None:
    ray = import_ray()
    started = _connect(ray, cluster.address, cluster.workers)
    try:
        gpus = ray.cluster_resources().get("GPU", 0)
        if cluster.gpus_per_worker > gpus:
            raise InputError(
                f"--gpus-per-worker {cluster.gpus_per_worker:g} but the Ray cluster has {gpus:g} GPUs; "
                "leave it out to run on CPUs, or join a cluster with GPUs (--address)"
            )
        n_workers = cluster.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actors = _start_workers(ray, min(n_workers, len(todo)), job, cluster.gpus_per_worker)
        queue = list(todo)
        running: Dict[Any, Any] = {}

        def hand_out(actor: Any) -> None:
            if queue:
                shard = queue.pop(0)
                running[actor.write.remote(shard.input, str(out_dir / shard.output), job.identity)] = (shard, actor)

        for actor in actors:
            hand_out(actor)
        while running:
            [ref], _ = ray.wait(list(running), num_returns=1)
            shard, actor = running.pop(ref)
            _record(ray, ref, shard, out_dir)
            manifest.write(out_dir)
            if on_shard is not None:
                on_shard(shard)
            hand_out(actor)
    finally:
        if started:
            ray.shutdown()


def _record(ray: Any, ref: Any, shard: Shard, out_dir: Path) -> None:
    """The shard's outcome into its manifest entry."""
    try:
        written = ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        cause = err.cause
        shard.status, shard.error = FAILED, str(cause) if isinstance(cause, ElmoError) else repr(cause)
        return
    except ray.exceptions.RayActorError as err:
        shard.status, shard.error = FAILED, f"its worker died {MAX_RESTARTS + 1} times ({err})"
        return
    shard.status, shard.error = DONE, None
    shard.sentences, shard.tokens = written.sentences, written.tokens
    shard.output_size = (out_dir / shard.output).stat().st_size


def _start_workers(ray: Any, n: int, job: _Job, gpus_per_worker: float) -> List[Any]:
    options: Dict[str, Any] = {
        "num_cpus": 1,
        "num_gpus": gpus_per_worker,
        "max_restarts": MAX_RESTARTS,
        "max_task_retries": MAX_RESTARTS,
        "max_concurrency": 2,
        "namespace": NAMESPACE,
    }
    if os.environ.get(KERNEL_VARIABLE):  # a pinned CPU kernel holds on every node, not only this one
        options["runtime_env"] = {"env_vars": {KERNEL_VARIABLE: os.environ[KERNEL_VARIABLE]}}
    device = "cuda" if gpus_per_worker > 0 else None
    run = uuid.uuid4().hex[:8]
    worker = ray.remote(ShardWriter)
    return [
        worker.options(name=f"{run}-{i}", **options).remote(
            job.reference, job.batch_size, job.stateful, device, job.output, job.storage, job.max_batch_tokens, job.run
        )
        for i in range(n)
    ]


def _connect(ray: Any, address: Optional[str], workers: Optional[int]) -> bool:
    """Connect to `address`, else start a local cluster; whether this call did (and must shut it down)."""
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address is None:
        # "local": a cluster of this run's own, even where `ray start` left one on this machine or Ray's
        # temporary folder holds a stale record of one (Ray would try to join it and refuse num_cpus).
        # Joining that one is asked for: --address auto.
        ray.init(address="local", num_cpus=workers or os.cpu_count(), include_dashboard=False, **quiet)
        return True
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise RayClusterError(f"cannot join the Ray cluster at {address}: {err}") from None
    return True


def _probe(address: str) -> None:
    """A clear error, at once, for a `host:port` where nothing listens (Ray itself retries for minutes)."""
    host, _, port = address.split("://")[-1].rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_SECONDS).close()
    except OSError as err:
        raise RayClusterError(
            f"no Ray cluster answers at {address} ({err.strerror or err}); start one with `ray start --head` "
            "on its head node and pass the address it prints, or leave out --address for a local cluster"
        ) from None
