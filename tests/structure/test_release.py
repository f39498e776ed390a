"""What a release needs that CI's build (`python -m build`, `twine check --strict` in .ci/run) cannot
see: README links that name real files; the version in one place; the changelog a section per release."""

import configparser
import re
import subprocess
from importlib.metadata import version
from pathlib import PurePosixPath

import pytest

import spacy_elmo
from tests.support.paths import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")


def metadata() -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf8")
    return config["metadata"]


def test_readme_links_name_tracked_files_or_web_addresses():
    """The README's relative links must name files of the repository (they are the docs a reader follows
    from the checkout or the forge); the package's metadata names no address, as the project's public
    home is not chosen yet, so no link is made absolute under an invented one."""
    listing = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if listing.returncode != 0 or not listing.stdout.split():
        pytest.skip("not a git checkout: no list of tracked files")
    tracked = set(listing.stdout.split())
    folders = {str(parent) for name in tracked for parent in PurePosixPath(name).parents}
    links = LINK.findall((REPO / "README.md").read_text(encoding="utf8"))
    assert links
    for link in links:
        if re.match(r"https?://", link):
            continue
        path = link.split("#")[0].rstrip("/")
        assert path in tracked or path in folders, f"{link}: no such file in the repository"


def test_the_version_has_one_place():
    assert metadata()["version"] == "attr: spacy_elmo.__version__"
    assert version("spacy-elmo") == spacy_elmo.__version__


def test_the_changelog_is_a_section_per_release_unreleased_first():
    headings = re.findall(r"^## (.+)$", (REPO / "CHANGELOG.md").read_text(encoding="utf8"), flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    for heading in headings[1:]:
        assert re.fullmatch(r"\d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\)", heading), heading
