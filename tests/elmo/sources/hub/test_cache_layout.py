"""Where downloaded models live (elmo/sources/hub/cache_layout.py): the cache directory's order of precedence, names
checked before they become paths, and a complete model told by its record."""

from pathlib import Path

import pytest

from spacy_elmo.elmo.sources.hub.cache_layout import (
    CACHE_ENV,
    MIRROR_ENV,
    RECORD_NAME,
    cache_dir,
    is_downloaded,
    lock_path,
    mirror_base,
    model_dir,
    name_problem,
    redownload_hint,
    staging_dir,
)
from spacy_elmo.elmo.sources.hub.errors import DownloadError


def test_the_cache_is_the_option_else_the_variable_else_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert cache_dir(tmp_path / "option") == tmp_path / "option"
    assert cache_dir("  ") == tmp_path / "env"
    monkeypatch.setenv(CACHE_ENV, " ")
    assert cache_dir().name == "spacy-elmo"


def test_model_staging_and_lock_paths_sit_under_the_cache(tmp_path):
    assert model_dir("elmo-small", tmp_path) == tmp_path / "elmo-small"
    assert staging_dir("elmo-small", tmp_path) == tmp_path / "downloads" / "elmo-small"
    assert lock_path("elmo-small", tmp_path) == tmp_path / "downloads" / ".elmo-small.lock"


@pytest.mark.parametrize("name", ["../elsewhere", "a/b", "downloads", ""])
def test_a_name_that_would_leave_its_folder_or_replace_the_caches_own_is_refused(tmp_path, name):
    assert name_problem(name, "model name").startswith(f"model name {name!r} ")
    with pytest.raises(DownloadError, match="model name"):
        model_dir(name, tmp_path)


def test_downloads_is_reserved_with_the_reason(tmp_path):
    assert "is reserved" in name_problem("downloads", "model name")
    assert name_problem("elmo-small", "model name") == ""


def test_a_model_is_downloaded_once_its_record_exists(tmp_path):
    (tmp_path / "m").mkdir()
    assert not is_downloaded("m", tmp_path)
    assert redownload_hint(tmp_path / "m") == ""
    (tmp_path / "m" / RECORD_NAME).write_text("{}")
    assert is_downloaded("m", tmp_path)
    assert redownload_hint(tmp_path / "m").endswith(f"download --force m --cache-dir {tmp_path}")


def test_the_mirror_is_the_option_else_the_variable_without_a_trailing_slash(monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, "file:///srv/mirror/ ")
    assert mirror_base() == "file:///srv/mirror"
    assert mirror_base("https://example.org/models/") == "https://example.org/models"
    monkeypatch.setenv(MIRROR_ENV, "")
    assert mirror_base() is None


def test_a_home_folder_is_expanded():
    assert isinstance(cache_dir("~/x"), Path) and "~" not in str(cache_dir("~/x"))
