"""The format readers load when a model is read, not before: `download`, in a fresh interpreter, fetches,
checks and installs a model without loading torch (formats are told apart by their files alone,
elmo/formats/detect.py). The imports of the package's faces: tests/test_lazy_imports.py."""

import hashlib
import json
import subprocess
import sys
import textwrap

from tests.support.paths import TINY_MODEL

HOST = "models.example.org"
LOADED = "import json, runpy, sys\n{run}\nprint(json.dumps(sorted({{n.split('.')[0] for n in sys.modules}})))"


def test_download_installs_a_model_without_loading_torch(tmp_path):
    mirror = tmp_path / "mirror"
    files = []
    for name in ("options.json", "weights.hdf5"):
        data = (TINY_MODEL / name).read_bytes()
        (mirror / HOST / "elmo").mkdir(parents=True, exist_ok=True)
        (mirror / HOST / "elmo" / f"tiny_{name}").write_bytes(data)
        url = f"https://{HOST}/elmo/tiny_{name}"
        files.append({"url": url, "save_as": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    model = {
        "name": "tiny",
        "language": "en",
        "language_name": "English",
        "format": "bilm-tf",
        "description": "test model",
        "files": files,
        "source": f"https://{HOST}/",
    }
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": [model]}))
    args = ["download", "tiny", "--catalogue", str(catalogue), "--cache-dir", str(tmp_path / "cache")]
    run = textwrap.dedent(
        f"""
        sys.argv = ["spacy_elmo", *{[*args, "--base-url", mirror.as_uri()]!r}]
        try:
            runpy.run_module("spacy_elmo", run_name="__main__")
        except SystemExit as end:
            assert not end.code, end.code
        """
    )
    result = subprocess.run([sys.executable, "-c", LOADED.format(run=run)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "tiny is in" in result.stdout
    assert (tmp_path / "cache" / "tiny" / "weights.hdf5").is_file()
    assert "torch" not in json.loads(result.stdout.splitlines()[-1])
