"""`download` of an archive its publisher split into parts (T-Systems' German ELMo: four `.tgz.part-NN`
files and the joined archive's SHA-1): joined in order, checked, unpacked; a wrong part is never
installed. Against the local HTTP server of tests/support/model_server.py."""

import errno
import hashlib
import importlib
import io
import json
import tarfile

import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import DiskFullError
from spacy_elmo.elmo.sources.hub import DownloadError, InputFileError, RemoteFileError, load_catalogue
from tests.elmo.sources.hub.test_download import HOST, assert_nothing_installed, entry, get
from tests.support.full_disk import FullDiskFile
from tests.support.paths import TINY_MODEL

pytestmark = pytest.mark.usefixtures("no_proxy_no_env")


def _german_like_archive():
    """The tiny model laid out as the German archive is: one folder holding options.json, weights.hdf5, the
    vocabulary and the TF checkpoint files bilm-tf's trainer writes (not part of the model)."""
    members = {
        "bilm-output-result/options.json": (TINY_MODEL / "options.json").read_bytes(),
        "bilm-output-result/weights.hdf5": (TINY_MODEL / "weights.hdf5").read_bytes(),
        "bilm-output-result/vocab-train.txt": b"<S>\n</S>\n<UNK>\nthe\n",
        "bilm-output-result/checkpoint": b'model_checkpoint_path: "model.ckpt-5"\n',
        "bilm-output-result/model.ckpt-5.index": b"\x00" * 64,
        "bilm-output-result/model.ckpt-5.meta": b"\x01" * 64,
        "bilm-output-result/model.ckpt-5.data-00000-of-00001": b"\x02" * 256,
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


ARCHIVE = _german_like_archive()
PARTS = [ARCHIVE[i : i + len(ARCHIVE) // 3 + 1] for i in range(0, len(ARCHIVE), len(ARCHIVE) // 3 + 1)]


def _catalogue(tmp_path, server, part_sha1=False, joined=None):
    for i, data in enumerate(PARTS):
        server.files[f"/{HOST}/de/result.tgz.part-{i:02d}"] = data
    files = [
        {
            "url": f"https://{HOST}/de/result.tgz.part-{i:02d}",
            **({"sha1": hashlib.sha1(data).hexdigest()} if part_sha1 else {}),
        }
        for i, data in enumerate(PARTS)
    ]
    joined = joined or {"name": "result.tgz", "archive": "tar", "sha1": hashlib.sha1(ARCHIVE).hexdigest()}
    model = {**entry("tiny-parts", files, fmt="bilm-tf"), "joined_archive": joined}
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": [model]}))
    return path


def test_parts_are_joined_checked_unpacked_and_load(tmp_path, server):
    assert len(PARTS) == 3
    cache = tmp_path / "cache"
    path = get("tiny-parts", _catalogue(tmp_path, server, part_sha1=True), cache, server)
    assert (path / "weights.hdf5").read_bytes() == (TINY_MODEL / "weights.hdf5").read_bytes()
    assert (path / "vocab-train.txt").exists()
    assert load_bilm(path).embed([["a", "test"]])[0].shape[1] == 2
    record = json.loads((path / "spacy_elmo_download.json").read_text())
    assert [f["sha256"] for f in record["files"]] == [hashlib.sha256(p).hexdigest() for p in PARTS]
    assert not (cache / "downloads" / "tiny-parts").exists(), "parts and the joined archive go once installed"


def test_a_wrong_part_fails_the_joined_digest_and_is_fetched_afresh(tmp_path, server):
    catalogue = _catalogue(tmp_path, server)
    cache = tmp_path / "cache"
    server.wrong.add(f"/{HOST}/de/result.tgz.part-01")
    with pytest.raises(
        RemoteFileError, match=r"joined give result.tgz with sha1 [0-9a-f]{40} where the catalogue says"
    ):
        get("tiny-parts", catalogue, cache, server)
    assert_nothing_installed(cache, "tiny-parts")
    assert not list((cache / "downloads" / "tiny-parts").iterdir()), "no part (nor the joined file) is kept"
    server.wrong.clear()
    assert (get("tiny-parts", catalogue, cache, server) / "options.json").exists()


def test_a_part_with_a_stated_sha1_is_checked_on_its_own(tmp_path, server):
    catalogue = _catalogue(tmp_path, server, part_sha1=True)
    server.wrong.add(f"/{HOST}/de/result.tgz.part-02")
    with pytest.raises(RemoteFileError, match=r"result.tgz.part-02 from .* has sha1 [0-9a-f]{40} where the catalogue"):
        get("tiny-parts", catalogue, tmp_path / "cache", server)
    assert_nothing_installed(tmp_path / "cache", "tiny-parts")


@pytest.mark.parametrize(
    "code, error, message",
    [
        (errno.ENOSPC, DiskFullError, r"cannot write \S*result\.tgz: no space left on the device"),
        (errno.EFBIG, DownloadError, r"cannot write \S*result\.tgz, the archive joined from .* \(File too large\)"),
    ],
)
def test_a_joined_archive_that_cannot_be_written_is_blamed_not_its_parts(
    tmp_path, server, monkeypatch, code, error, message
):
    catalogue, cache = _catalogue(tmp_path, server), tmp_path / "cache"
    download = importlib.import_module("spacy_elmo.elmo.sources.hub.download")
    monkeypatch.setattr(download, "open", lambda path, mode: FullDiskFile(open(path, mode), 100, code), raising=False)
    with pytest.raises(error, match=message) as caught:
        get("tiny-parts", catalogue, cache, server)
    assert "part-0" not in str(caught.value)
    assert_nothing_installed(cache, "tiny-parts")
    staged = cache / "downloads" / "tiny-parts"
    assert sorted(p.name for p in staged.iterdir()) == [f"result.tgz.part-{i:02d}" for i in range(3)], "parts kept"
    monkeypatch.undo()
    assert (get("tiny-parts", catalogue, cache, server) / "options.json").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda model: model.update(files=model["files"][:1]), "needs two or more files"),
        (lambda model: model["files"][0].update(save_as="x.tgz"), "no archive or save_as of their own"),
        (lambda model: model["joined_archive"].update(name="result.tgz.part-00"), "has the name of a part"),
        (lambda model: model["joined_archive"].update(name="../x.tgz"), "joined_archive name"),
    ],
)
def test_a_joined_archive_that_cannot_be_assembled_is_refused_with_the_catalogue(tmp_path, server, change, message):
    path = _catalogue(tmp_path, server)
    data = json.loads(path.read_text())
    change(data["models"][0])
    path.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=message):
        load_catalogue(path)
