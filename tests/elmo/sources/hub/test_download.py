"""`download`: against a local HTTP server in a thread (`server`, tests/support/model_server.py) that can drop the
connection half way, serve wrong bytes or 404, serving a small model zipped here. No internet."""

import errno
import hashlib
import io
import json
import stat
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_elmo.cli import app
from spacy_elmo.elmo.sources.hub import (
    DiskFullError,
    DownloadError,
    InputFileError,
    ModelNotDownloadedError,
    NetworkError,
    RemoteFileError,
    download_model,
    downloaded_model_dir,
    load_catalogue,
)
from spacy_elmo.elmo.sources.hub import (
    fetch as fetch_module,
)
from spacy_elmo.elmo.sources.hub.cache_layout import model_dir
from tests.support.paths import TINY_MODEL

HOST = "models.example.org"


pytestmark = pytest.mark.usefixtures("no_proxy_no_env")


def zip_bytes(entries):
    """A zip of (name, bytes) pairs; a name given as ('link', target) becomes a symlink entry."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries:
            if isinstance(name, tuple):
                info = zipfile.ZipInfo(name[1])
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, data)
            else:
                zf.writestr(name, data)
    return buf.getvalue()


TINY_ZIP = zip_bytes([(p.name, p.read_bytes()) for p in sorted(TINY_MODEL.iterdir()) if p.suffix != ".md"])


def entry(name, files, fmt="nlpl"):
    return {
        "name": name,
        "language": "en",
        "language_name": "English",
        "format": fmt,
        "description": "test model",
        "files": files,
        "source": f"https://{HOST}/",
    }


def zip_file(name, data, known=True):
    return {
        "url": f"https://{HOST}/elmo/{name}",
        "archive": "zip",
        "size": len(data) if known else None,
        "sha256": hashlib.sha256(data).hexdigest() if known else None,
    }


@pytest.fixture
def catalogue(tmp_path, server):
    """A catalogue of test models, their files served by `server`."""
    wrapped = zip_bytes([(f"tiny/{p.name}", p.read_bytes()) for p in sorted(TINY_MODEL.iterdir()) if p.suffix != ".md"])
    archives = {
        "tiny.zip": TINY_ZIP,
        "wrapped.zip": wrapped,
        "dotdot.zip": zip_bytes([("options.json", b"{}"), ("../evil.txt", b"x")]),
        "absolute.zip": zip_bytes([("/tmp/evil.txt", b"x")]),
        "symlink.zip": zip_bytes([(("link", "weights.hdf5"), b"/etc/passwd")]),
    }
    for name, data in archives.items():
        server.files[f"/{HOST}/elmo/{name}"] = data
    for name in ("options.json", "weights.hdf5"):
        server.files[f"/{HOST}/elmo/tiny_{name}"] = (TINY_MODEL / name).read_bytes()
    models = [
        entry("tiny-zip", [zip_file("tiny.zip", TINY_ZIP)]),
        entry("tiny-unverified", [zip_file("tiny.zip", TINY_ZIP, known=False)]),
        entry("tiny-wrapped", [zip_file("wrapped.zip", wrapped)]),
        entry("tiny-gone", [zip_file("missing.zip", b"never served")]),
        *(
            entry(f"evil-{k}", [zip_file(f"{k}.zip", archives[f"{k}.zip"], known=False)])
            for k in ("dotdot", "absolute", "symlink")
        ),
        entry(
            "tiny-files",
            [
                {"url": f"https://{HOST}/elmo/tiny_options.json", "save_as": "options.json"},
                {"url": f"https://{HOST}/elmo/tiny_weights.hdf5", "save_as": "weights.hdf5"},
            ],
            fmt="bilm-tf",
        ),
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": models}))
    return path


def get(name, catalogue, cache, server, **kwargs):
    return download_model(
        name, cache=cache, base_url=server.base(), catalogue=load_catalogue(catalogue), progress=False, **kwargs
    )


def assert_nothing_installed(cache, name):
    assert not (cache / name).exists()
    assert not [p for p in cache.iterdir() if p.name.startswith(f".{name}")], "a temporary directory was left"


def test_download_unpacks_verifies_and_records(tmp_path, catalogue, server):
    cache = tmp_path / "cache"
    path = get("tiny-zip", catalogue, cache, server)
    assert path == cache / "tiny-zip"
    for name in ("options.json", "weights.hdf5"):
        assert (path / name).read_bytes() == (TINY_MODEL / name).read_bytes()
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    assert record["files"][0]["sha256"] == hashlib.sha256(TINY_ZIP).hexdigest()
    assert record["files"][0]["fetched_from"] == f"{server.base()}/{HOST}/elmo/tiny.zip"
    assert downloaded_model_dir("tiny-zip", cache, catalogue=load_catalogue(catalogue)) == path
    assert not (cache / "downloads" / "tiny-zip").exists(), "the archive is deleted once unpacked"
    # a second call finds it in the cache and fetches nothing
    before = len(server.requests)
    assert get("tiny-zip", catalogue, cache, server) == path
    assert len(server.requests) == before


def test_downloaded_bilm_tf_files_load(tmp_path, catalogue, server):
    from spacy_elmo import load_bilm

    path = get("tiny-files", catalogue, tmp_path, server)
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    assert [f["size"] for f in record["files"]] == [
        (TINY_MODEL / n).stat().st_size for n in ("options.json", "weights.hdf5")
    ]
    assert [f["size_in_catalogue"] for f in record["files"]] == [None, None]
    bilm = load_bilm(path / "options.json", path / "weights.hdf5")
    assert bilm.embed([["a", "test"]])[0].shape[1] == 2


def test_an_archive_wrapping_one_folder_installs_that_folder(tmp_path, catalogue, server):
    path = get("tiny-wrapped", catalogue, tmp_path, server)
    assert sorted(p.name for p in path.iterdir()) == ["options.json", "spacy_elmo_download.json", "weights.hdf5"]


def test_a_dropped_connection_is_resumed_by_the_next_run(tmp_path, catalogue, server):
    url_path = f"/{HOST}/elmo/tiny.zip"
    half = len(TINY_ZIP) // 2
    server.drop_after[url_path] = half
    with pytest.raises(DownloadError, match="Run the same command again to resume") as err:
        get("tiny-zip", catalogue, tmp_path, server, retries=0)
    assert url_path.lstrip("/") in str(err.value)
    assert (tmp_path / "downloads" / "tiny-zip" / "tiny.zip.part").stat().st_size == half
    assert_nothing_installed(tmp_path, "tiny-zip")
    path = get("tiny-zip", catalogue, tmp_path, server)
    assert server.requests[-1] == (url_path, f"bytes={half}-")
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()


def test_a_dropped_connection_is_resumed_within_one_run(tmp_path, catalogue, server):
    url_path = f"/{HOST}/elmo/tiny.zip"
    server.drop_after[url_path] = 1000
    path = get("tiny-zip", catalogue, tmp_path, server)
    assert server.requests == [(url_path, None), (url_path, "bytes=1000-")]
    assert (path / "options.json").read_bytes() == (TINY_MODEL / "options.json").read_bytes()


def test_a_server_that_ignores_range_restarts_the_file(tmp_path, catalogue, server):
    server.drop_after[f"/{HOST}/elmo/tiny.zip"] = 1000
    server.ignore_range = True
    path = get("tiny-zip", catalogue, tmp_path, server)
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()


def test_a_directory_not_made_by_download_is_not_replaced_without_force(tmp_path, catalogue, server):
    (tmp_path / "tiny-zip").mkdir()
    (tmp_path / "tiny-zip" / "mine.txt").write_text("keep me")
    with pytest.raises(DownloadError, match="--force"):
        get("tiny-zip", catalogue, tmp_path, server)
    assert (tmp_path / "tiny-zip" / "mine.txt").exists()
    path = get("tiny-zip", catalogue, tmp_path, server, force=True)
    assert sorted(p.name for p in path.iterdir()) == ["options.json", "spacy_elmo_download.json", "weights.hdf5"]


def test_wrong_bytes_fail_the_checksum_and_leave_nothing(tmp_path, catalogue, server):
    server.wrong.add(f"/{HOST}/elmo/tiny.zip")
    with pytest.raises(RemoteFileError, match="sha256") as err:
        get("tiny-zip", catalogue, tmp_path, server)
    assert f"{server.base()}/{HOST}/elmo/tiny.zip" in str(err.value)
    assert_nothing_installed(tmp_path, "tiny-zip")
    assert not list((tmp_path / "downloads" / "tiny-zip").iterdir()), "the bad file is deleted"


def test_404_names_the_url_and_where_to_put_a_file_fetched_by_hand(tmp_path, catalogue, server):
    with pytest.raises(RemoteFileError, match="404") as err:
        get("tiny-gone", catalogue, tmp_path, server)
    message = str(err.value)
    assert f"{server.base()}/{HOST}/elmo/missing.zip" in message
    assert str(tmp_path / "downloads" / "tiny-gone" / "missing.zip") in message
    assert_nothing_installed(tmp_path, "tiny-gone")


def test_a_server_that_is_gone_is_a_network_error(tmp_path, catalogue):
    gone = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = gone.server_address[1]
    gone.server_close()
    with pytest.raises(NetworkError, match="cannot reach 127.0.0.1") as err:
        download_model(
            "tiny-zip", cache=tmp_path, base_url=f"http://127.0.0.1:{port}", catalogue=load_catalogue(catalogue)
        )
    assert "--base-url" in str(err.value)
    assert_nothing_installed(tmp_path, "tiny-zip")


def test_a_file_fetched_by_hand_is_verified_and_used_without_network(tmp_path, catalogue):
    staging = tmp_path / "downloads" / "tiny-zip"
    staging.mkdir(parents=True)
    (staging / "tiny.zip").write_bytes(TINY_ZIP)
    path = download_model(
        "tiny-zip", cache=tmp_path, base_url="http://127.0.0.1:9", catalogue=load_catalogue(catalogue)
    )
    assert (path / "weights.hdf5").exists()


def test_a_mirror_can_be_a_directory(tmp_path, catalogue, server):
    mirror = tmp_path / "mirror"
    for url_path, data in server.files.items():
        (mirror / url_path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (mirror / url_path.lstrip("/")).write_bytes(data)
    path = download_model(
        "tiny-files", cache=tmp_path / "c", base_url=mirror.as_uri(), catalogue=load_catalogue(catalogue)
    )
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()
    with pytest.raises(RemoteFileError, match="mirror directory has no"):
        download_model("tiny-gone", cache=tmp_path / "c", base_url=mirror.as_uri(), catalogue=load_catalogue(catalogue))


@pytest.mark.parametrize("name", ["evil-dotdot", "evil-absolute", "evil-symlink"])
def test_unsafe_archives_are_refused(tmp_path, catalogue, server, name):
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match="refusing to unpack"):
        get(name, catalogue, cache, server)
    assert_nothing_installed(cache, name)
    assert not (tmp_path / "evil.txt").exists() and not (cache / "evil.txt").exists()


def test_a_full_disk_gives_a_clear_error(tmp_path, catalogue, server, monkeypatch):
    class FullDisk(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fetch_module, "open", lambda *args: FullDisk(), raising=False)
    with pytest.raises(DiskFullError, match="is full") as err:
        get("tiny-zip", catalogue, tmp_path, server)
    assert "--cache-dir" in str(err.value)
    assert_nothing_installed(tmp_path, "tiny-zip")


def test_not_downloaded_gives_the_download_command(tmp_path, catalogue):
    with pytest.raises(ModelNotDownloadedError) as err:
        downloaded_model_dir("tiny-zip", tmp_path, catalogue=load_catalogue(catalogue))
    assert f"python -m spacy_elmo download tiny-zip --cache-dir {tmp_path}" in str(err.value)
    assert str(tmp_path / "tiny-zip") in str(err.value)


def test_default_cache_is_the_user_cache_dir(monkeypatch):
    from spacy_elmo.elmo.sources.hub import cache_dir

    assert Path(cache_dir()).name == "spacy-elmo"
    monkeypatch.setenv("SPACY_ELMO_CACHE", "/somewhere/else")
    assert cache_dir() == Path("/somewhere/else")


def write_catalogue(tmp_path, models):
    path = tmp_path / "own-catalogue.json"
    path.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": models}))
    return path


@pytest.mark.parametrize("last", ["..", "%2e%2e", "a%2Fb", "x%2F..", "%2E"])
def test_a_url_whose_file_name_is_not_plain_is_refused_with_the_catalogue(tmp_path, last):
    url = f"https://{HOST}/elmo/{last}"
    path = write_catalogue(tmp_path, [entry("odd", [{"url": url}])])
    with pytest.raises(InputFileError, match="a plain file name is needed") as err:
        load_catalogue(path)
    assert url in str(err.value)
    result = CliRunner().invoke(app, ["download", "odd", "--catalogue", str(path), "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and "IsADirectoryError" not in result.output


def test_a_model_named_like_the_cache_folders_is_refused(tmp_path, catalogue, server):
    partial = tmp_path / "cache" / "downloads" / "tiny-zip" / "tiny.zip.part"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"partial")
    path = write_catalogue(tmp_path, [entry("downloads", [zip_file("tiny.zip", TINY_ZIP)])])
    with pytest.raises(InputFileError, match="'downloads' is reserved"):
        load_catalogue(path)
    with pytest.raises(DownloadError, match="reserved"):
        model_dir("downloads", tmp_path / "cache")
    assert partial.exists()


def test_a_damaged_deflate_stream_is_a_download_error(tmp_path, server):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(TINY_MODEL.iterdir()):
            zf.writestr(p.name, p.read_bytes())
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("weights.hdf5")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 10, start + info.compress_size - 10):
        data[i] ^= 0x55
    server.files[f"/{HOST}/elmo/deflate.zip"] = bytes(data)
    path = write_catalogue(tmp_path, [entry("deflate", [zip_file("deflate.zip", bytes(data), known=False)])])
    with pytest.raises(DownloadError, match="deflate.zip is damaged"):
        get("deflate", path, tmp_path / "cache", server)
    assert_nothing_installed(tmp_path / "cache", "deflate")
    assert not (tmp_path / "cache" / "downloads" / "deflate" / "deflate.zip").exists(), "the damaged archive goes"


def test_an_html_page_served_for_the_weights_is_not_installed(tmp_path, catalogue, server):
    server.files[f"/{HOST}/elmo/tiny_weights.hdf5"] = b"<!DOCTYPE html><html>Please log in</html>"
    with pytest.raises(RemoteFileError, match="weights.hdf5 .*not a readable HDF5 file .*DOCTYPE"):
        get("tiny-files", catalogue, tmp_path, server)
    assert_nothing_installed(tmp_path, "tiny-files")
    assert not (tmp_path / "downloads" / "tiny-files" / "tiny_weights.hdf5").exists()


def test_an_archive_without_a_model_is_not_installed(tmp_path, server):
    data = zip_bytes([("index.html", b"<html></html>")])
    server.files[f"/{HOST}/elmo/page.zip"] = data
    path = write_catalogue(tmp_path, [entry("page", [zip_file("page.zip", data, known=False)])])
    with pytest.raises(RemoteFileError, match="do not make a model .*no ELMo model"):
        get("page", path, tmp_path, server)
    assert_nothing_installed(tmp_path, "page")


def test_verify_says_whether_the_cache_was_altered(tmp_path, catalogue, server):
    path = get("tiny-zip", catalogue, tmp_path, server)
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    weights_sha = hashlib.sha256((TINY_MODEL / "weights.hdf5").read_bytes()).hexdigest()
    assert record["installed"]["weights.hdf5"] == weights_sha
    args = ["download", "tiny-zip", "--verify", "--catalogue", str(catalogue), "--cache-dir", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and "is as downloaded" in result.output, result.output
    with open(path / "weights.hdf5", "r+b") as f:
        f.seek(-1, 2)
        f.write(b"\x00")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "weights.hdf5: changed" in result.output and "download --force tiny-zip" in result.output


def test_a_damaged_downloaded_model_names_the_command_that_replaces_it(tmp_path, catalogue, server):
    from spacy_elmo import load_bilm
    from spacy_elmo.elmo.errors import InputFileError

    path = get("tiny-files", catalogue, tmp_path, server)
    (path / "weights.hdf5").write_bytes(b"<html></html>")
    with pytest.raises(InputFileError, match=f"download --force tiny-files --cache-dir {tmp_path}"):
        load_bilm(path)


OTHER_TINY_ZIP = zip_bytes([(p.name, p.read_bytes()) for p in sorted(TINY_MODEL.iterdir(), reverse=True)])


def test_a_resume_uses_if_range_and_restarts_when_the_file_changed(tmp_path, catalogue, server):
    url_path = f"/{HOST}/elmo/tiny.zip"
    server.drop_after[url_path] = len(TINY_ZIP) // 2
    with pytest.raises(DownloadError):
        get("tiny-unverified", catalogue, tmp_path, server, retries=0)
    first_etag = f'"{hashlib.sha256(TINY_ZIP).hexdigest()[:16]}"'
    server.files[url_path] = OTHER_TINY_ZIP  # the publisher replaced the file in between
    path = get("tiny-unverified", catalogue, tmp_path, server)
    assert server.if_ranges[-1] == first_etag
    assert server.requests[-1][1] is not None, "it asked to resume"
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    assert record["files"][0]["sha256"] == hashlib.sha256(OTHER_TINY_ZIP).hexdigest()
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()
    assert not list((tmp_path / "downloads").glob("tiny-unverified/*")), "no .part or validator is left"


def test_a_part_without_a_validator_is_started_again(tmp_path, catalogue, server):
    server.etags = False
    url_path = f"/{HOST}/elmo/tiny.zip"
    server.drop_after[url_path] = 1000
    path = get("tiny-zip", catalogue, tmp_path, server)
    assert server.requests == [(url_path, None), (url_path, None)]
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()


# kill -9 at a named point: the download runs in a subprocess that replaces `module.attr` with a
# function that SIGKILLs its own process on the n-th call (an attribute of a module attribute, such as
# `os.replace` as swap.py sees it, through a proxy of that module).
KILLER = """
import importlib, os, signal, sys
module_name, attr, nth, name, cache, base, catalogue, force = sys.argv[1:9]
from spacy_elmo.elmo.sources.hub import download_model, load_catalogue
module = importlib.import_module(module_name)
owner, _, leaf = attr.rpartition(".")
calls = []
def wrap(real):
    def killing(*args, **kwargs):
        calls.append(1)
        if len(calls) == int(nth):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return killing
if owner:
    real_module = getattr(module, owner)
    class Proxy:
        def __getattr__(self, key):
            return getattr(real_module, key)
    proxy = Proxy()
    setattr(proxy, leaf, wrap(getattr(real_module, leaf)))
    setattr(module, owner, proxy)
else:
    setattr(module, leaf, wrap(getattr(module, leaf)))
download_model(name, cache=cache, base_url=base, catalogue=load_catalogue(catalogue), force=force == "1",
               progress=False)
"""


@pytest.mark.parametrize(
    "name, force, module, attr, nth",
    [
        ("tiny-zip", False, "download", "unpack_archive", 1),
        ("tiny-zip", False, "download", "write_record", 1),
        ("tiny-zip", True, "swap", "os.replace", 1),
        ("tiny-zip", True, "swap", "os.replace", 2),
        ("tiny-files", True, "swap", "os.replace", 2),
        ("tiny-wrapped", True, "swap", "shutil.rmtree", 1),
        ("tiny-files", False, "download", "_remove_installed_copies", 1),
    ],
)
def test_a_kill_at_any_point_leaves_nothing_and_the_rerun_fetches_nothing(
    tmp_path, catalogue, server, name, force, module, attr, nth
):
    import subprocess
    import sys

    cache = tmp_path / "cache"
    if force:
        get(name, catalogue, cache, server)
    args = [f"spacy_elmo.elmo.sources.hub.{module}", attr, str(nth), name, str(cache), server.base(), str(catalogue)]
    killed = subprocess.run([sys.executable, "-c", KILLER, *args, "1" if force else "0"], capture_output=True)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    fetched = len(server.requests)
    path = get(name, catalogue, cache, server, force=force)
    assert len(server.requests) == fetched, "complete files in the cache were fetched again"
    assert sorted(p.name for p in path.iterdir()) == ["options.json", "spacy_elmo_download.json", "weights.hdf5"]
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()
    assert sorted(p.name for p in cache.iterdir()) == ["downloads", name]
    assert [p.name for p in (cache / "downloads").iterdir()] == [f".{name}.lock"], "staging copies were left"
