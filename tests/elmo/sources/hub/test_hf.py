"""Models on the Hugging Face Hub (spacy_elmo/elmo/sources/hub/hf.py): `hf:ORG/REPO[@REVISION]`, checked as
the Hub checks names and git checks refs (any string: a reference or ModelReferenceError), is read from
huggingface_hub's cache, here one made in the test and read offline, so that the cache, offline mode and
revisions are huggingface_hub's own; one not cached offline fails saying how to fetch it. A push goes
through huggingface_hub's HfApi with its token (the calls it makes are checked, HfApi.create_repo and
upload_folder patched: no Hub is reachable), and without a token fails naming HF_TOKEN and `hf auth login`.
"""

import shutil
import sys

import huggingface_hub
import pytest
import torch
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.sources.hub.errors import InputError, ModelNotDownloadedError, ModelReferenceError, RemoteFileError
from spacy_elmo.elmo.sources.hub.hf import HubRepo, hub_snapshot, parse_hf_reference, push_folder
from tests.support.hub_cache import COMMIT, add_repo, offline_cache
from tests.support.paths import BILM_TF_DIR, TINY_MODEL

SENTENCES = [["The", "bank", "by", "the", "river", "."]]
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    cache = offline_cache(monkeypatch, tmp_path / "hub")
    add_repo(cache, "org/tiny", sorted(TINY_MODEL.iterdir()))
    add_repo(cache, "org/tiny", [BILM_TF_DIR / "options.json", BILM_TF_DIR / "lm_weights.hdf5"], OTHER, "v2")
    return cache


@pytest.mark.parametrize(
    "name, repo",
    [
        ("hf:org/tiny", HubRepo("org/tiny")),
        ("hf:my-org/elmo.small_v1@v2", HubRepo("my-org/elmo.small_v1", "v2")),
        (f"hf:org/tiny@{COMMIT}", HubRepo("org/tiny", COMMIT)),
    ],
)
def test_a_reference_names_a_repository_and_a_revision(name, repo):
    assert parse_hf_reference(name) == repo
    assert str(repo) == name


@pytest.mark.parametrize("name", ["hf:tiny", "hf:org/tiny@", "hf:org/a/b", "hf:/tiny", "hf:org/ti ny"])
def test_a_malformed_reference_names_the_form(name):
    with pytest.raises(ModelReferenceError, match="hf:ORG/REPO@REVISION"):
        parse_hf_reference(name)


@pytest.mark.parametrize(
    "name, rule",
    [
        ("hf:a..b/c", "'--' and '..'"),
        ("hf:a--b/c", "'--' and '..'"),
        ("hf:-org/tiny", "starting and ending"),
        ("hf:org/tiny.", "starting and ending"),
        ("hf:org/tiny.git", "'.git'"),
        (f"hf:org/{'a' * 97}", "1 to 96"),
        ("hf:org/tïny", "1 to 96"),
    ],
)
def test_a_repository_name_the_hub_forbids_names_the_rule(name, rule):
    with pytest.raises(ModelReferenceError, match="is not a Hugging Face Hub model reference") as info:
        parse_hf_reference(name)
    assert rule in str(info.value)


@pytest.mark.parametrize(
    "revision",
    [
        "../../evil",
        "a..b",
        "a b",
        "v1:2",
        "x~1",
        "x^",
        "a?",
        "a*",
        "a[b",
        "a\\b",
        ".hidden",
        "a/.b",
        "a.lock",
        "a/",
        "/a",
        "a//b",
        "a.",
        "@",
        "a@{1}",
        "a\x00b",
        "a\x7fb",
        "a" * 256,
        "\ud800",
    ],
)
def test_a_revision_git_forbids_is_refused(revision):
    with pytest.raises(ModelReferenceError, match="give a branch, tag or commit"):
        parse_hf_reference(f"hf:org/tiny@{revision}")


@pytest.mark.parametrize("revision", ["refs/pr/1", "v1.0", "feature/new-vocab", "a" * 255, "ünïcode", COMMIT])
def test_a_revision_git_allows_is_kept(revision):
    assert parse_hf_reference(f"hf:org/tiny@{revision}") == HubRepo("org/tiny", revision)


def test_a_revision_never_reads_a_model_outside_the_cache(cache, tmp_path):
    shutil.copytree(TINY_MODEL, tmp_path / "outside-model")
    (tmp_path / "evil").write_text("../../../outside-model", encoding="utf8")  # a ref, outside the cache
    with pytest.raises(ModelReferenceError, match="'..'"):
        load_bilm("hf:org/tiny@../../../evil")
    (cache / "models--org--tiny" / "refs" / "main").write_text("../../../outside-model", encoding="utf8")
    with pytest.raises(RemoteFileError, match="outside the cache"):
        load_bilm("hf:org/tiny")


_REFERENCE_PARTS = st.text(alphabet="ab_-./@:~^ \\\x00é{}", max_size=12)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.text(max_size=30).map("hf:".__add__)
    | st.tuples(_REFERENCE_PARTS, _REFERENCE_PARTS, _REFERENCE_PARTS).map(lambda p: f"hf:{p[0]}/{p[1]}@{p[2]}")
    | st.tuples(_REFERENCE_PARTS, _REFERENCE_PARTS).map(lambda p: f"hf:org{p[0]}/tiny{p[1]}")
)
def test_any_reference_is_one_the_hub_takes_or_a_package_error(cache, name):
    try:
        repo = parse_hf_reference(name)
    except ModelReferenceError:
        repo = None
    if repo is not None:
        validate_repo_id(repo.repo_id)  # what the Hub takes
        if repo.revision is not None:
            refs = cache / "models--org--tiny" / "refs"
            assert (refs / repo.revision).resolve().is_relative_to(refs.resolve())
    try:
        folder = hub_snapshot(name, cached_only=True)
    except ElmoError:
        return
    except HFValidationError as err:
        pytest.fail(f"huggingface_hub's own error escaped: {err}")
    assert folder.resolve().is_relative_to(cache.resolve())


def test_a_cached_repository_loads_offline_at_each_revision(cache):
    assert hub_snapshot("hf:org/tiny") == cache / "models--org--tiny" / "snapshots" / COMMIT
    expected = load_bilm(TINY_MODEL).forward_sentences(SENTENCES).layers
    assert torch.equal(load_bilm("hf:org/tiny").forward_sentences(SENTENCES).layers, expected)
    assert torch.equal(load_bilm(f"hf:org/tiny@{COMMIT}").forward_sentences(SENTENCES).layers, expected)
    tagged = load_bilm("hf:org/tiny@v2").forward_sentences(SENTENCES).layers
    other = load_bilm(BILM_TF_DIR / "options.json", BILM_TF_DIR / "lm_weights.hdf5")
    assert torch.equal(tagged, other.forward_sentences(SENTENCES).layers)


def test_one_not_cached_offline_says_how_to_fetch_it(cache):
    with pytest.raises(ModelNotDownloadedError, match="hf download org/missing") as info:
        load_bilm("hf:org/missing")
    assert "HF_HUB_OFFLINE" in str(info.value) and str(cache) in str(info.value)
    with pytest.raises(ModelNotDownloadedError):
        hub_snapshot("hf:org/tiny@no-such-tag")


def test_without_huggingface_hub_the_error_names_the_extra(cache, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(InputError, match=r"spacy-elmo\[hf\]"):
        load_bilm("hf:org/tiny")


def test_a_push_without_a_token_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(InputError, match="HF_TOKEN.*hf auth login"):
        push_folder(tmp_path, "org/tiny")


def test_a_push_creates_the_repository_and_uploads_the_folder_in_one_commit(tmp_path, monkeypatch):
    calls = []

    class Commit:
        commit_url = "https://hub.example/org/tiny/commit/1"

    def create_repo(self, repo_id, **kwargs):
        calls.append(("create_repo", self.token, repo_id, kwargs))

    def upload_folder(self, **kwargs):
        calls.append(("upload_folder", self.token, kwargs))
        return Commit()

    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", create_repo)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", upload_folder)
    assert push_folder(tmp_path, "org/tiny", private=True) == Commit.commit_url
    assert calls[0] == (
        "create_repo",
        "hf_test_token",
        "org/tiny",
        {"repo_type": "model", "private": True, "exist_ok": True},
    )
    name, token, upload = calls[1]
    assert (name, token, upload["repo_id"], upload["folder_path"]) == (
        "upload_folder",
        "hf_test_token",
        "org/tiny",
        str(tmp_path),
    )
    assert upload["repo_type"] == "model" and tmp_path.name in upload["commit_message"]
    for bad in ("tiny", "a..b/c", "org/-tiny"):
        with pytest.raises(ModelReferenceError, match="is not a Hub repository name"):
            push_folder(tmp_path, bad)
