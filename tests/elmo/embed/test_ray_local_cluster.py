"""`dump --engine ray` without --address where Ray's temporary folder records another local cluster (a
`ray start --head`, or a stale record of one that is gone): the dump starts a cluster of its own instead
of failing with Ray's "num_cpus and num_gpus must not be provided" traceback."""

import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from spacy_elmo.elmo.embed import dump_on_ray
from spacy_elmo.elmo.sources import reference_to, resolve
from tests.elmo.embed.test_ray_dump import MODEL, assert_same_as_single_dump, write_corpus

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")


@pytest.fixture
def ray_temp(monkeypatch):
    """Ray's temporary folder for this test alone (a short path: Ray's socket paths must fit 107 bytes),
    so that the record written here is seen by nobody else on the machine."""
    folder = Path(tempfile.mkdtemp(prefix="ray43-", dir="/tmp"))
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_a_recorded_local_cluster_that_is_gone_does_not_stop_a_dump(tmp_path, ray_temp):
    with socket.socket() as probe:  # a port nothing listens on: the recorded cluster is gone
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (ray_temp / "ray").mkdir()
    (ray_temp / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{port}")
    inputs = write_corpus(tmp_path / "corpus", n_files=1, n_lines=8)
    dump_on_ray(str(tmp_path / "corpus" / "*.txt"), tmp_path / "out", resolve(reference_to(MODEL)), workers=1)
    assert not ray.is_initialized(), "the dump's own cluster is shut down"
    assert_same_as_single_dump(inputs, tmp_path / "out", tmp_path)
