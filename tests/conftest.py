"""Shared test fixtures: the reference models copied into tests/fixtures (see its README), a local
HTTP server of model files, the tiny pretraining runs, and real full and read-only disks."""

import contextlib
import itertools
import threading
from http.server import ThreadingHTTPServer

import pytest

from tests.support.model_server import ModelServer
from tests.support.paths import ALLENNLP_DIR


def pytest_addoption(parser):
    parser.addoption(
        "--slow", action="store_true", help="also run the tests marked slow or compiled (make test-all, as CI does)"
    )


def pytest_collection_modifyitems(config, items):
    """Without `--slow`, the slow and compiled tests are skipped, so that `make test` stays the everyday
    suite of minutes; CI runs everything (`make test-all`)."""
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (make test-all)")
    for item in items:
        if item.get_closest_marker("slow") or item.get_closest_marker("compiled"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def fixture_paths():
    """(options.json, lm_weights.hdf5) of the AllenNLP fixture model (skip connections on)."""
    return ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def fixture_bilm(fixture_paths):
    from spacy_elmo import load_bilm

    return load_bilm(*fixture_paths)


@pytest.fixture
def fresh_bilm(fixture_paths):
    """A biLM of this test's own, for tests that change its state (stateful calls, warm start)."""
    from spacy_elmo import load_bilm

    return load_bilm(*fixture_paths)


@pytest.fixture
def server():
    """A local HTTP server of model files (tests/support/model_server.py), for `download`."""
    state = ModelServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), state.handler())
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def no_proxy_no_env(monkeypatch):
    """No proxy and no cache or mirror from the environment: `download` talks to `server` alone."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("SPACY_ELMO_CACHE", raising=False)
    monkeypatch.delenv("SPACY_ELMO_MIRROR", raising=False)


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """The full tiny run (80 epochs, minutes on a loaded 2-core CPU), for the test that it learns."""
    from spacy_elmo.elmo.pretrain import train
    from tests.support.pretraining import tiny_pretrain_config

    out = tmp_path_factory.mktemp("run")
    result = train(tiny_pretrain_config(**{"logging.plot": True}), out, show_progress=False)
    return out, result


@pytest.fixture(scope="session")
def short_run(tmp_path_factory):
    """A few steps of the tiny run (seconds), held out at its end: for what any finished run must do."""
    from spacy_elmo.elmo.pretrain import train
    from tests.support.pretraining import tiny_pretrain_config

    out = tmp_path_factory.mktemp("short-run")
    result = train(tiny_pretrain_config(**{"training.max_steps": 12}), out, show_progress=False)
    return out, result


@pytest.fixture(scope="session")
def mounting(tmp_path_factory):
    """Skips the test, with the reason, on a machine where tests cannot mount (tests/support/mounts.py)."""
    from tests.support.mounts import mount_problem

    problem = mount_problem(tmp_path_factory.mktemp("mount-probe"))
    if problem:
        pytest.skip(problem)


@pytest.fixture
def full_disk(mounting, tmp_path):
    """A factory: `full_disk(size)` is a fresh folder on a tmpfs of `size` bytes, unmounted after the test."""
    from tests.support.mounts import small_disk

    names = itertools.count()
    with contextlib.ExitStack() as stack:
        yield lambda size: stack.enter_context(small_disk(tmp_path / f"disk{next(names)}", size))


@pytest.fixture
def read_only_folder(mounting, tmp_path):
    """A factory: `read_only_folder(path)` makes `path` read-only (for root too) until the test ends;
    fill it first."""
    from tests.support.mounts import read_only

    with contextlib.ExitStack() as stack:
        yield lambda path: stack.enter_context(read_only(path))
