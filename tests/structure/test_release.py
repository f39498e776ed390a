"""What a release needs that CI's build (`python -m build`, `twine check --strict` in .ci/run) cannot
see: a README whose file names hold on the package index; the Python versions the dependencies allow;
the version in one place; the changelog a section per release."""

import configparser
import re
import subprocess
from importlib.metadata import metadata as distribution_metadata
from importlib.metadata import version

import pytest

import spacy_elmo
from tests.support.paths import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")


def metadata() -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf8")
    return config["metadata"]


def test_the_readme_names_tracked_files_by_path_and_links_only_web_addresses():
    """The README is the package's long description too, where a relative link breaks (it has no
    repository to resolve against, and the project's public address is not chosen yet, so the metadata
    names none): files are named by their path in the repository, and each named Markdown file exists."""
    listing = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if listing.returncode != 0 or not listing.stdout.split():
        pytest.skip("not a git checkout: no list of tracked files")
    tracked = set(listing.stdout.split())
    readme = (REPO / "README.md").read_text(encoding="utf8")
    relative = [link for link in LINK.findall(readme) if not re.match(r"https?://", link)]
    assert not relative, f"relative links break in the long description; name the files by path: {relative}"
    named = re.findall(r"`([\w./-]+\.md|LICENSE)`", readme)
    assert "docs/models.md" in named
    for path in named:
        assert path in tracked, f"{path}: no such file in the repository"
    assert "project_urls" not in metadata() and "url" not in metadata()


def test_python_requires_and_classifiers_match_the_dependencies():
    """The floor is torch's and spaCy's own, and every Python version claimed is one that each core
    dependency claims too (their installed metadata)."""
    options = configparser.ConfigParser()
    options.read(REPO / "setup.cfg", encoding="utf8")
    floor = options["options"]["python_requires"]
    assert floor == f">={_floor('torch')}" == f">={_floor('spacy')}"
    claimed = set(re.findall(r"Python :: (3\.\d+)", metadata()["classifiers"]))
    assert min(claimed, key=lambda v: int(v.split(".")[1])) == floor[2:]
    for dependency in ("torch", "spacy", "thinc", "h5py", "safetensors", "pydantic", "google-crc32c"):
        theirs = {c.rsplit(" :: ", 1)[1] for c in distribution_metadata(dependency).get_all("Classifier") or []}
        assert claimed <= theirs, f"{dependency} does not claim Python {sorted(claimed - theirs)}"


def _floor(dependency: str) -> str:
    return re.search(r">=\s*(3\.\d+)", distribution_metadata(dependency)["Requires-Python"]).group(1)


def test_the_version_has_one_place():
    assert metadata()["version"] == "attr: spacy_elmo.elmo.__version__"
    assert version("spacy-elmo") == spacy_elmo.__version__


def test_the_changelog_is_a_section_per_release_unreleased_first():
    headings = re.findall(r"^## (.+)$", (REPO / "CHANGELOG.md").read_text(encoding="utf8"), flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    for heading in headings[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\)", heading), heading
