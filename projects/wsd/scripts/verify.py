"""Checks a data folder against the checksums in project.yml: each file asset's and WordNet package's
MD5, and one SHA-256 over the SemCor tree (a git asset, which spaCy does not check). A local copy made by hand gets the
same check as a download.

    python scripts/verify.py project.yml [--data DATA]
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import List, Optional, Sequence

import srsly

SEMCOR = "semcor3.0"


def file_md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def tree_sha256(root: Path) -> str:
    """SHA-256 over the sorted relative paths and contents' SHA-256 of every `.naf` file under `root`."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.naf")):
        digest.update(f"{path.relative_to(root).as_posix()} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def problems(data: Path, project: dict) -> List[str]:
    found = []
    for asset in project.get("assets", []):
        name = Path(asset["dest"]).name
        if "checksum" in asset:
            path = data / name
            if not path.exists():
                found.append(f"{path} is missing (asset {asset['dest']}, from {asset['url']})")
            elif file_md5(path) != asset["checksum"]:
                found.append(f"{path} has MD5 {file_md5(path)}, expected {asset['checksum']}: download it again")
    for name, md5 in project["vars"]["wordnet_packages"].items():
        path = data / name
        if not path.exists():
            found.append(f"{path} is missing (run `python -m spacy project run wordnet projects/wsd`)")
        elif file_md5(path) != md5:
            found.append(f"{path} has MD5 {file_md5(path)}, expected {md5}: fetch it again")
    semcor = data / SEMCOR
    expected = project["vars"]["semcor_sha256"]
    if not semcor.is_dir():
        found.append(f"{semcor} is missing (the SemCor NAF files: brown1/, brown2/, brownv/)")
    elif tree_sha256(semcor) != expected:
        found.append(f"{semcor} has tree SHA-256 {tree_sha256(semcor)}, expected {expected}: copy it again")
    return found


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="", help="A local copy laid out as assets/ (empty: assets).")
    parser.add_argument("project", type=Path)
    args = parser.parse_args(argv)
    data = Path(args.data or "assets")
    found = problems(data, srsly.read_yaml(args.project))
    if found:
        raise SystemExit("the WSD data does not match project.yml:\n  " + "\n  ".join(found))
    print(f"{data}: every WSD data file matches its checksum")


if __name__ == "__main__":
    main()
