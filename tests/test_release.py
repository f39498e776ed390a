"""What a release needs that CI's build (`python -m build`, `twine check --strict` in .ci/run) cannot
see: the README, the package index's page, links only to addresses that exist off GitHub; the version
in one place; the changelog a section per release."""

import configparser
import re
import subprocess
from importlib.metadata import version
from pathlib import PurePosixPath

import pytest

import spacy_elmo

from .paths import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")


def metadata() -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf8")
    return config["metadata"]


def test_readme_links_are_absolute_and_those_into_the_repository_name_tracked_files():
    listing = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if listing.returncode != 0 or not listing.stdout.split():
        pytest.skip("not a git checkout: no list of tracked files")
    tracked = set(listing.stdout.split())
    folders = {str(parent) for name in tracked for parent in PurePosixPath(name).parents}
    base = metadata()["url"]
    links = LINK.findall((REPO / "README.md").read_text(encoding="utf8"))
    assert links
    for link in links:
        assert re.match(r"https?://", link), f"{link}: relative, broken on the package index's page"
        if link.startswith(base + "/"):
            path = re.sub(r"^(blob|tree)/main/", "", link[len(base) + 1 :]).split("#")[0]
            assert path in tracked or path in folders or path == "issues", f"{link}: no such file in the repository"


def test_the_version_has_one_place():
    assert metadata()["version"] == "attr: spacy_elmo.__version__"
    assert version("spacy-elmo") == spacy_elmo.__version__


def test_the_changelog_is_a_section_per_release_unreleased_first():
    headings = re.findall(r"^## (.+)$", (REPO / "CHANGELOG.md").read_text(encoding="utf8"), flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    for heading in headings[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\)", heading), heading
