"""One URL to one file (elmo/sources/hub/fetch.py), against the local HTTP server of tests/support/model_server.py:
the file appears under its name only once whole, a dropped connection resumes where it stopped with the
file's validator, a `.part` nothing identifies starts again, a busy server (429, 5xx) is asked again
after the wait its Retry-After asks for, else with a growing backoff, and given up on after the limit,
and each failure names the URL and the fix. The waits are recorded, not slept."""

import pytest
import urllib3.util.retry

from spacy_elmo.elmo.sources.hub.errors import DownloadError, NetworkError, RemoteFileError
from spacy_elmo.elmo.sources.hub.fetch import RETRY_AFTER_MAX_S, STATUS_RETRIES, fetch, mirrored_url

BODY = bytes(range(256)) * 40  # 10 KiB
PATH = "/example.org/elmo/weights.hdf5"


@pytest.fixture
def served(server, no_proxy_no_env):
    server.files[PATH] = BODY
    return server


@pytest.fixture
def waits(monkeypatch):
    """The seconds urllib3's Retry sleeps between tries, recorded instead of slept."""
    asked = []
    monkeypatch.setattr(urllib3.util.retry.time, "sleep", asked.append)
    return asked


def test_a_busy_server_is_asked_again_after_the_wait_it_names(served, tmp_path, waits):
    served.busy[PATH] = [(429, "7"), (503, "3")]
    dest = tmp_path / "weights.hdf5"
    fetch(served.base() + PATH, dest, progress=False)
    assert dest.read_bytes() == BODY
    assert waits == [7.0, 3.0] and len(served.requests) == 3


def test_a_wait_of_an_hour_is_cut_to_the_longest_one_waited(served, tmp_path, waits):
    served.busy[PATH] = [(429, "3600")]
    fetch(served.base() + PATH, tmp_path / "weights.hdf5", progress=False)
    assert waits == [RETRY_AFTER_MAX_S]


def test_server_errors_without_retry_after_back_off(served, tmp_path, waits):
    served.busy[PATH] = [(500, None), (502, None), (504, None)]
    fetch(served.base() + PATH, tmp_path / "weights.hdf5", progress=False)
    assert waits == [2.0, 4.0] and len(served.requests) == 4  # no wait before the first retry


def test_a_resume_that_meets_a_busy_server_keeps_its_range(served, tmp_path, waits):
    served.drop_after[PATH] = 3000
    served.busy[PATH] = [None, (503, "1")]
    dest = tmp_path / "weights.hdf5"
    fetch(served.base() + PATH, dest, progress=False)
    assert dest.read_bytes() == BODY and waits == [1.0]
    assert [rng for _, rng in served.requests] == [None, "bytes=3000-", "bytes=3000-"]


def test_a_server_busy_past_the_limit_is_given_up_on_naming_its_answer(served, tmp_path, waits):
    served.busy[PATH] = [(503, "2")] * (STATUS_RETRIES + 1)
    with pytest.raises(RemoteFileError, match=rf"answered HTTP 503 .* {STATUS_RETRIES + 1} times.*try again later"):
        fetch(served.base() + PATH, tmp_path / "weights.hdf5", hint=" (HINT)", progress=False)
    assert len(served.requests) == STATUS_RETRIES + 1 and waits == [2.0] * STATUS_RETRIES
    assert not (tmp_path / "weights.hdf5").exists()


def test_a_mirror_holds_each_file_at_base_host_path():
    url = "https://example.org/elmo/weights.hdf5?x=1"
    assert mirrored_url(url, None) == url
    assert mirrored_url(url, "file:///srv/mirror") == "file:///srv/mirror/example.org/elmo/weights.hdf5"


def test_the_file_appears_whole_under_its_name_and_nothing_beside_it(served, tmp_path):
    dest = tmp_path / "models" / "weights.hdf5"
    fetch(served.base() + PATH, dest, expected_size=len(BODY), progress=False)
    assert dest.read_bytes() == BODY
    assert [p.name for p in dest.parent.iterdir()] == ["weights.hdf5"]


def test_a_dropped_connection_resumes_from_its_byte_with_the_validator(served, tmp_path):
    served.drop_after[PATH] = 3000
    dest = tmp_path / "weights.hdf5"
    fetch(served.base() + PATH, dest, progress=False)
    assert dest.read_bytes() == BODY
    assert [rng for _, rng in served.requests] == [None, "bytes=3000-"]
    assert served.if_ranges[1] is not None and served.if_ranges[1].startswith('"')


def test_when_retries_run_out_the_part_is_kept_and_the_error_says_to_run_again(served, tmp_path):
    served.drop_after[PATH] = 3000
    dest = tmp_path / "weights.hdf5"
    with pytest.raises(DownloadError, match=r"3000 bytes are kept in .*weights.hdf5.part\. Run the same"):
        fetch(served.base() + PATH, dest, retries=0, hint=" (HINT)", progress=False)
    assert (tmp_path / "weights.hdf5.part").stat().st_size == 3000 and not dest.exists()
    fetch(served.base() + PATH, dest, progress=False)  # the next run resumes
    assert dest.read_bytes() == BODY and served.requests[-1][1] == "bytes=3000-"


def test_a_part_nothing_identifies_starts_again_from_byte_zero(served, tmp_path):
    dest = tmp_path / "weights.hdf5"
    (tmp_path / "weights.hdf5.part").write_bytes(b"x" * 100)  # left by something that kept no validator
    fetch(served.base() + PATH, dest, progress=False)
    assert dest.read_bytes() == BODY and served.requests == [(PATH, None)]


def test_a_missing_file_names_the_url_and_the_mirror(served, tmp_path):
    with pytest.raises(RemoteFileError, match=r"/example.org/elmo/gone.hdf5 answered HTTP 404 .*\(HINT\)"):
        fetch(served.base() + "/example.org/elmo/gone.hdf5", tmp_path / "gone.hdf5", hint=" (HINT)", progress=False)


def test_a_size_unlike_the_catalogues_is_refused(served, tmp_path):
    with pytest.raises(RemoteFileError, match=f"announces {len(BODY)} bytes, the catalogue says 5"):
        fetch(served.base() + PATH, tmp_path / "w.hdf5", expected_size=5, progress=False)


def test_an_unreachable_host_is_a_network_error_naming_the_proxy_and_mirror(no_proxy_no_env, tmp_path):
    with pytest.raises(NetworkError, match="cannot reach 127.0.0.1:9 .*HTTPS_PROXY.*SPACY_ELMO_MIRROR"):
        fetch("http://127.0.0.1:9/x.hdf5", tmp_path / "x.hdf5", retries=0, progress=False)
