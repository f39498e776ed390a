"""`download` of a file with several sources (mirrors, tried in order) and of files a person fetches by
hand. Against the local HTTP server of tests/support/model_server.py: each source's host is a folder on it, so
a source the server lacks is a dead link. No internet."""

import hashlib
import json

import pytest

from spacy_elmo.elmo.sources.hub import DownloadError, RemoteFileError, load_catalogue
from spacy_elmo.elmo.sources.hub.cache_layout import staging_dir
from tests.elmo.sources.hub.test_download import TINY_ZIP, entry, get
from tests.support.cli import run_cli

pytestmark = pytest.mark.usefixtures("no_proxy_no_env")

DEAD, MIRROR, SPARE = "dead.example.org", "mirror.example.org", "spare.example.org"
DRIVE = "https://drive.example.org/file/d/abc/view"


def _mirrored(*hosts, **checks):
    return {
        "url": f"https://{hosts[0]}/elmo/tiny.zip",
        "mirrors": [f"https://{h}/elmo/tiny.zip" for h in hosts[1:]],
        "archive": "zip",
        **checks,
    }


@pytest.fixture
def sources(tmp_path, server):
    server.files[f"/{MIRROR}/elmo/tiny.zip"] = TINY_ZIP
    server.files[f"/{SPARE}/elmo/tiny.zip"] = TINY_ZIP
    digest = hashlib.sha256(TINY_ZIP).hexdigest()
    models = [
        entry("dead-first", [_mirrored(DEAD, MIRROR)]),
        entry("wrong-first", [_mirrored(MIRROR, SPARE, sha256=digest)]),
        entry("all-dead", [_mirrored(DEAD, "gone.example.org")]),
        entry("by-hand", [{"by_hand": DRIVE, "name": "tiny.zip", "archive": "zip"}]),
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": models}))
    return path


def test_a_dead_first_source_falls_back_to_the_mirror(tmp_path, sources, server):
    path = get("dead-first", sources, tmp_path, server)
    assert (path / "weights.hdf5").exists()
    assert [p for p, _ in server.requests] == [f"/{DEAD}/elmo/tiny.zip", f"/{MIRROR}/elmo/tiny.zip"]
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    assert record["files"][0]["fetched_from"] == f"{server.base()}/{MIRROR}/elmo/tiny.zip"
    assert record["files"][0]["url"] == f"https://{DEAD}/elmo/tiny.zip"


def test_a_source_serving_other_bytes_gives_way_to_the_next(tmp_path, sources, server):
    server.wrong.add(f"/{MIRROR}/elmo/tiny.zip")
    path = get("wrong-first", sources, tmp_path, server)
    assert (path / "options.json").exists()
    assert [p for p, _ in server.requests] == [f"/{MIRROR}/elmo/tiny.zip", f"/{SPARE}/elmo/tiny.zip"]


def test_when_every_source_fails_each_is_named_in_order(tmp_path, sources, server):
    with pytest.raises(RemoteFileError) as err:
        get("all-dead", sources, tmp_path, server)
    message = str(err.value)
    assert message.index(f"/{DEAD}/elmo/tiny.zip") < message.index("/gone.example.org/elmo/tiny.zip")
    assert "(1)" in message and "(2)" in message
    assert not (tmp_path / "all-dead").exists()


def test_a_by_hand_file_is_never_fetched_and_installs_once_put_in_place(tmp_path, sources, server):
    with pytest.raises(DownloadError) as err:
        get("by-hand", sources, tmp_path, server)
    where = staging_dir("by-hand", tmp_path) / "tiny.zip"
    assert DRIVE in str(err.value) and str(where) in str(err.value)
    assert server.requests == []
    where.write_bytes(TINY_ZIP)
    path = get("by-hand", sources, tmp_path, server)
    assert (path / "weights.hdf5").exists() and server.requests == []


def test_models_lists_each_files_sources_in_order_and_by_hand_pages(sources):
    result = run_cli("models", "--catalogue", sources)
    assert result.returncode == 0, result.stderr
    assert f"dead-first tiny.zip: tried in order: https://{DEAD}/elmo/tiny.zip, then https://{MIRROR}/" in result.stdout
    assert f"by-hand tiny.zip: fetched by hand from {DRIVE}" in result.stdout
    assert load_catalogue(sources).get("all-dead").files[0].sources[1] == "https://gone.example.org/elmo/tiny.zip"
