"""`dump --engine ray` and the Ray Data callable, on a local Ray cluster of 2 CPUs started here (nothing
beyond this machine): shards equal to the single-process dump, a killed worker retried, a rerun that
redoes only a missing shard, clear errors. The CPU kernel is pinned so runs are comparable."""

import os
import signal
import threading
import time
from types import SimpleNamespace

import h5py
import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.embed import dump_on_ray, write_layers
from spacy_elmo.elmo.embed.manifest import DONE, expand_inputs, model_files, model_identity, read_manifest, shard_names
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.sources import reference_to, resolve
from tests.support.cli import assert_clear_error, run_cli
from tests.support.paths import TINY_MODEL

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")

MODEL = "fixture-tiny"

WORDS = "the river bank was muddy after rain and a boat drifted past old mills".split()


def write_corpus(folder, n_files=3, n_lines=100):
    """`n_files` files of `n_lines` varied sentences (an empty line among them)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for f in range(n_files):
        lines = [" ".join(rng.choice(WORDS, size=1 + (i * 7 + f) % 23)) for i in range(n_lines)]
        lines[n_lines // 2] = ""
        (folder / f"part{f}.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    return sorted(folder.glob("*.txt"))


def assert_same_as_single_dump(inputs, out_dir, tmp_path, bilm=None):
    """Every shard holds what the single-process dump (of `bilm`, else MODEL) writes for its input alone."""
    bilm = bilm or load_bilm(MODEL)
    for path, name in zip(inputs, shard_names(inputs)):
        single = tmp_path / "single" / name
        write_layers(bilm, path, single)
        with h5py.File(single, "r") as want, h5py.File(out_dir / name, "r") as got:
            assert sorted(got.keys(), key=int) == sorted(want.keys(), key=int) == [str(i) for i in range(len(want))]
            for key in want:
                assert got[key].dtype == want[key].dtype == np.float32
                np.testing.assert_allclose(got[key][()], want[key][()], atol=1e-6, rtol=0)
    assert not list(out_dir.glob(".*.tmp")), "a temporary file was left"
    assert all(shard.status == DONE for shard in read_manifest(out_dir).shards)


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for this module; workers inherit the pinned kernel."""
    os.environ["SPACY_ELMO_CPU_KERNEL"] = "mkl"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    del os.environ["SPACY_ELMO_CPU_KERNEL"]


def test_bad_inputs_are_clear_errors_before_any_worker_starts(tmp_path):
    corpus = tmp_path / "corpus"
    write_corpus(corpus, n_files=1, n_lines=3)
    reference = resolve(reference_to(MODEL))
    with pytest.raises(ElmoError, match="no input file matches"):
        dump_on_ray(str(tmp_path / "none" / "*.txt"), tmp_path / "out", reference)
    with pytest.raises(ElmoError, match="does not exist"):
        dump_on_ray(tmp_path / "missing.txt", tmp_path / "out", reference)
    (corpus / "empty.txt").write_text("\n \n", encoding="utf8")
    with pytest.raises(ElmoError, match="empty.txt has no tokens"):
        dump_on_ray(str(corpus / "*.txt"), tmp_path / "out", reference)
    (corpus / "empty.txt").write_bytes(b"caf\xe9 au lait\n")
    with pytest.raises(ElmoError, match="empty.txt is not UTF-8"):
        dump_on_ray(str(corpus / "*.txt"), tmp_path / "out", reference)
    (corpus / "part0.text").write_text("a b\n", encoding="utf8")
    with pytest.raises(ElmoError, match="would both be written to part0.hdf5"):
        shard_names(expand_inputs(str(corpus / "part0.*")))
    with pytest.raises(ElmoError, match="no-such-model"):
        dump_on_ray(corpus / "part0.txt", tmp_path / "out", resolve(reference_to("no-such-model")))
    assert not (tmp_path / "out").exists()


def test_every_worker_computes_as_the_job_asks(tmp_path, monkeypatch):
    """The job's run options (`dump --time-loop`) reach each worker and the shards it writes; the workers
    built here, in this process, by a stand-in for Ray's actor calls."""
    from spacy_elmo.elmo.embed.ray_dump import _Job, _start_workers
    from spacy_elmo.elmo.embed.storage import Storage
    from spacy_elmo.elmo.nn.layer_choice import OutputChoice
    from spacy_elmo.elmo.nn.run_options import RunOptions
    from spacy_elmo.elmo.nn.time_loops import wavefront
    from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL

    monkeypatch.setattr(WAVE_CELL, "compiling", False)  # its logic, eagerly: compiling takes seconds
    calls = []
    run = wavefront.run
    monkeypatch.setattr(wavefront, "run", lambda *args, **kwargs: calls.append(1) or run(*args, **kwargs))
    in_process = SimpleNamespace(
        remote=lambda actor: SimpleNamespace(options=lambda **_: SimpleNamespace(remote=actor))
    )
    model = resolve(reference_to(MODEL))
    identity = model_identity(model_files(model))
    job = _Job(model.reference, identity, 8, False, OutputChoice(), Storage(), None, RunOptions(time_loop="wavefront"))
    [worker] = _start_workers(in_process, 1, job, 0.0)
    [path] = write_corpus(tmp_path / "corpus", n_files=1, n_lines=10)
    worker.write(str(path), str(tmp_path / "shard.hdf5"), identity)
    assert len(calls) == 2  # 10 lines in batches of 8


def test_without_ray_the_error_names_the_extra(tmp_path, monkeypatch):
    from spacy_elmo.elmo.embed.ray_dump import import_ray

    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # what `import ray` meets where it is absent
    with pytest.raises(ElmoError, match=r"pip install 'spacy-elmo\[ray\]'"):
        import_ray()


def test_an_address_with_no_cluster_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_corpus(tmp_path / "corpus", n_files=1, n_lines=3)
    result = run_cli(
        "dump", tmp_path / "corpus" / "*.txt", tmp_path / "out", "--model", MODEL, "--engine", "ray",
        "--address", f"127.0.0.1:{port}",
    )  # fmt: skip
    assert_clear_error(result, f"no Ray cluster answers at 127.0.0.1:{port}", "ray start --head")


@pytest.mark.slow
def test_the_cli_on_a_local_cluster_writes_what_dump_writes_per_file(tmp_path, monkeypatch):
    inputs = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    env = {**os.environ, "SPACY_ELMO_CPU_KERNEL": "mkl"}
    args = ["dump", tmp_path / "corpus" / "*.txt", out, "--model", MODEL, "--engine", "ray", "--workers", 2]
    result = run_cli(*args, "--batch-size", 8, "--no-progress", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote 3 shards, 300 sentences" in result.stdout
    monkeypatch.setenv("SPACY_ELMO_CPU_KERNEL", "mkl")
    write_layers(load_bilm(MODEL), inputs[1], tmp_path / "single.hdf5", batch_size=8)  # what `dump` runs
    assert (tmp_path / "single.hdf5").read_bytes() == (out / "part1.hdf5").read_bytes()  # byte for byte
    manifest = read_manifest(out)
    digest = model_identity(model_files(resolve(reference_to(MODEL))))
    assert manifest.settings == {"model": {"name": MODEL}, "model_sha256": digest, "stateful": False}
    assert [(s.input, s.size, s.sentences) for s in manifest.shards] == [
        (str(p), p.stat().st_size, 100) for p in inputs
    ]


@pytest.mark.slow
def test_two_workers_match_the_single_dump_and_a_rerun_redoes_only_a_missing_shard(cluster, tmp_path):
    inputs = write_corpus(tmp_path / "corpus", n_files=4, n_lines=80)
    out = tmp_path / "out"
    first = dump_on_ray(str(tmp_path / "corpus" / "*.txt"), out, resolve(reference_to(MODEL)), workers=2, batch_size=8)
    assert [s.status for s in first.shards] == [DONE] * 4
    assert_same_as_single_dump(inputs, out, tmp_path)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.hdf5")}
    (out / "part2.hdf5").unlink()
    redone = []
    dump_on_ray(
        str(tmp_path / "corpus" / "*.txt"), out, resolve(reference_to(MODEL)), workers=2, on_shard=redone.append
    )
    assert [s.output for s in redone] == ["part2.hdf5"]
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.hdf5") if p.name != "part2.hdf5"} == {
        name: t for name, t in mtimes.items() if name != "part2.hdf5"
    }
    assert_same_as_single_dump(inputs, out, tmp_path)


@pytest.mark.slow
def test_a_rerun_with_other_weights_at_the_same_path_redoes_every_shard(cluster, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    for name in ("options.json", "weights.hdf5"):
        (model / name).write_bytes((TINY_MODEL / name).read_bytes())
    reference = resolve(reference_to(model / "options.json", model / "weights.hdf5"))
    pattern, out = str(tmp_path / "corpus" / "*.txt"), tmp_path / "out"
    write_corpus(tmp_path / "corpus", n_files=1, n_lines=12)
    dump_on_ray(pattern, out, reference, workers=1, batch_size=4)
    with h5py.File(model / "weights.hdf5", "a") as f:  # other weights at the same path
        f["CNN/W_cnn_0"][...] = 2 * f["CNN/W_cnn_0"][()]
    inputs = write_corpus(tmp_path / "corpus", n_files=2, n_lines=12)
    dump_on_ray(pattern, out, reference, workers=1, batch_size=4)
    assert_same_as_single_dump(inputs, out, tmp_path, load_bilm(model / "options.json", model / "weights.hdf5"))


@pytest.mark.slow
def test_a_worker_killed_mid_shard_is_retried_and_leaves_no_partial_file(cluster, tmp_path):
    from spacy_elmo.elmo.embed.ray_dump import NAMESPACE

    inputs = write_corpus(tmp_path / "corpus", n_files=2, n_lines=60)
    big = tmp_path / "corpus" / "big.txt"
    big.write_text("the river bank is muddy after the rain .\n" * 1500, encoding="utf8")
    inputs = sorted([*inputs, big])
    out = tmp_path / "out"
    errors = []

    def run():
        try:
            dump_on_ray(str(tmp_path / "corpus" / "*.txt"), out, resolve(reference_to(MODEL)), workers=2, batch_size=2)
        except Exception as err:  # reported by the main thread
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 90
    while not (partial := list(out.glob(".big.hdf5.*.tmp"))):
        assert thread.is_alive() and time.monotonic() < deadline, "the big shard was never started"
        time.sleep(0.05)
    workers = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == NAMESPACE]
    pids = ray.get([ray.get_actor(a["name"], namespace=NAMESPACE).pid.remote() for a in workers])
    writer = int(partial[0].name.split(".")[-3])  # .big.hdf5.PID.RANDOM.tmp
    assert writer in pids
    os.kill(writer, signal.SIGKILL)
    thread.join(timeout=240)
    assert not thread.is_alive() and not errors, errors
    assert_same_as_single_dump(inputs, out, tmp_path)


@pytest.mark.slow
def test_the_ray_data_callable_gives_the_bilms_layers_or_their_mix(cluster):
    from spacy_elmo.elmo.embed import ElmoBatchMapper

    sentences = [" ".join(WORDS[i % 5 : i % 5 + 1 + i % 9]).split() for i in range(24)]
    bilm = load_bilm(MODEL)
    expected = bilm.embed(sentences)
    ds = ray.data.from_items([{"tokens": s, "id": i} for i, s in enumerate(sentences)])
    for pooling in (None, "mean", [0.0, 0.5, 0.5]):
        kwargs = {"model": MODEL, "pooling": pooling}
        rows = ds.map_batches(ElmoBatchMapper, fn_constructor_kwargs=kwargs, concurrency=1, batch_size=5).take_all()
        assert sorted(row["id"] for row in rows) == list(range(len(sentences)))
        for row in rows:
            want = expected[row["id"]]
            if pooling is not None:
                weights = np.full(3, 1 / 3) if pooling == "mean" else np.asarray(pooling)
                want = np.tensordot(weights.astype(np.float32), want, axes=1)
            np.testing.assert_allclose(np.asarray(row["elmo"]), want, atol=1e-6, rtol=0)


@pytest.mark.slow
def test_output_options_reach_every_shard_and_a_rerun_with_others_redoes_them(cluster, tmp_path):
    from spacy_elmo.elmo.embed.storage import Storage
    from spacy_elmo.elmo.nn.layer_choice import OutputChoice

    inputs = write_corpus(tmp_path / "corpus", n_files=2, n_lines=20)
    pattern, out, model = str(tmp_path / "corpus" / "*.txt"), tmp_path / "out", resolve(reference_to(MODEL))
    output, storage = OutputChoice("average", "mean"), Storage("float16", "gzip", 6)
    dump_on_ray(pattern, out, model, workers=2, output=output, storage=storage, max_batch_tokens=64)
    settings = read_manifest(out).settings
    assert (settings["layers"], settings["pool"], settings["dtype"], settings["compression"]) == (
        "average", "mean", "float16", "gzip"
    )  # fmt: skip
    bilm = load_bilm(MODEL)
    for path, name in zip(inputs, shard_names(inputs)):
        write_layers(bilm, path, tmp_path / name, output=output, storage=storage)
        with h5py.File(tmp_path / name, "r") as want, h5py.File(out / name, "r") as got:
            assert sorted(got) == sorted(want)
            for key in want:
                assert got[key].shape == (bilm.output_dim,) and got[key].dtype == np.float16
                assert got[key].compression == "gzip"
                np.testing.assert_allclose(got[key][()], want[key][()], atol=1e-3, rtol=0)
    redone = []
    dump_on_ray(pattern, out, model, workers=2, output=OutputChoice("top"), on_shard=redone.append)
    assert len(redone) == 2
    with h5py.File(out / "part0.hdf5", "r") as f:
        assert f["0"].ndim == 2
