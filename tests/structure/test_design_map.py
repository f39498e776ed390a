"""docs/design.md's layout table is the map of the package: it names every folder of it (every package,
nested ones too) and nothing that is not there, so a reader following it finds what it says."""

import re
from pathlib import Path
from typing import Set

from tests.support.paths import REPO

PACKAGE = REPO / "spacy_elmo"
DESIGN = REPO / "docs" / "design.md"


def mapped(text: str) -> Set[str]:
    """The paths in the second column of the `## Layout` section's table."""
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("|") and "---" not in line]
    return {path for row in rows[1:] for path in re.findall(r"`([^`]+)`", row[2])}


def folders(package: Path = PACKAGE) -> Set[str]:
    return {init.parent.relative_to(package).as_posix() + "/" for init in package.rglob("__init__.py")} - {"./"}


def test_the_map_names_every_folder_of_the_package():
    assert folders() - mapped(DESIGN.read_text(encoding="utf8")) == set()


def test_everything_the_map_names_is_there():
    missing = [path for path in mapped(DESIGN.read_text(encoding="utf8")) if not (PACKAGE / path).exists()]
    assert not missing, f"docs/design.md maps what the package does not hold: {missing}"


def test_the_reading_finds_a_missing_folder():
    table = "## Layout\n| side | folder | what |\n|---|---|---|\n| library | `elmo/nn/` | x |\n## Next\n"
    assert mapped(table) == {"elmo/nn/"}
    assert "pipeline/" in folders() - mapped(table)
