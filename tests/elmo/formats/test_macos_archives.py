"""Archives made on macOS carry its metadata beside the model (the zip tool's `__MACOSX/` folder,
AppleDouble `._NAME` files from tar, Finder's `.DS_Store`): `load_bilm(ARCHIVE)` and `download` both
skip it, so the same archive gets the same answer whichever path reads it."""

import hashlib
import io
import json
import tarfile

import pytest

from spacy_elmo import load_bilm
from tests.elmo.sources.hub.test_download import HOST, entry, get, zip_bytes
from tests.support.paths import TINY_MODEL as TINY

pytestmark = pytest.mark.usefixtures("no_proxy_no_env")

APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + b"\x00" * 40
MODEL = [(name, (TINY / name).read_bytes()) for name in ("options.json", "weights.hdf5")]


def _tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


ARCHIVES = {
    "zip": (
        "tiny.zip",
        zip_bytes(
            [(f"tiny/{name}", data) for name, data in MODEL]
            + [("tiny/.DS_Store", b"\x00\x00\x00\x01Bud1"), ("__MACOSX/._tiny", APPLE_DOUBLE)]
            + [(f"__MACOSX/tiny/._{name}", APPLE_DOUBLE) for name, _ in MODEL]
        ),
    ),
    "tar": ("tiny.tgz", _tar_bytes([m for name, data in MODEL for m in ((f"._{name}", APPLE_DOUBLE), (name, data))])),
}


@pytest.mark.parametrize("kind", sorted(ARCHIVES))
def test_an_archive_made_on_macos_loads_and_downloads_alike(tmp_path, server, kind):
    file_name, data = ARCHIVES[kind]
    archive = tmp_path / file_name
    archive.write_bytes(data)
    expected = load_bilm(TINY / "options.json", TINY / "weights.hdf5").embed([["a", "test"]])[0]
    assert (load_bilm(archive).embed([["a", "test"]])[0] == expected).all()

    server.files[f"/{HOST}/elmo/{file_name}"] = data
    files = [{"url": f"https://{HOST}/elmo/{file_name}", "archive": kind, "sha256": hashlib.sha256(data).hexdigest()}]
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(
        json.dumps({"catalogue_version": 1, "about": "test", "models": [entry("mac", files, "bilm-tf")]})
    )
    path = get("mac", catalogue, tmp_path / "cache", server)
    assert sorted(p.name for p in path.iterdir()) == ["options.json", "spacy_elmo_download.json", "weights.hdf5"]
    assert (load_bilm(path).embed([["a", "test"]])[0] == expected).all()
