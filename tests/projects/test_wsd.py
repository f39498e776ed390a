"""The WSD benchmark's pieces (projects/wsd/scripts/wsd.py) on tiny made-up data: reading
Raganato's XML and keys, SemCor's NAF, WordNet's index.sense out of a Debian package; centroids, the
nearest-centroid choice with its first-sense back-off; Raganato's scoring. The last test runs the whole
benchmark on that data with the tiny bundled model."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from projects.wsd.scripts.verify import tree_sha256
from projects.wsd.scripts.wsd import (
    Centroids,
    SenseInventory,
    WsdDataError,
    nearest_sense,
    read_deb_member,
    read_keys,
    read_naf,
    read_raganato,
    score,
    scores_by_set,
)
from tests.support.paths import REPO, TINY_MODEL
from tests.support.wsd_data import INDEX_SENSE, NAF, RAGANATO_XML, debian_package, write_wsd_data


@pytest.fixture
def inventory():
    return SenseInventory(INDEX_SENSE.splitlines())


def test_raganato_xml_gives_sentences_and_instances_over_their_words(tmp_path):
    path = tmp_path / "ALL.data.xml"
    path.write_text(RAGANATO_XML)
    corpus = read_raganato(path)
    assert corpus.sentences == [["The", "change", "ringing", "is", "old"], ["A", "bank"]]
    first, second, third = corpus.targets
    assert (first.id, first.sentence, first.tokens, first.lemma, first.pos) == (
        "senseval2.d000.s000.t000",
        0,
        (1, 2),
        "change_ringing",
        "NOUN",
    )
    assert (second.tokens, second.pos) == ((4,), "ADJ")
    assert (third.sentence, third.tokens) == (1, (1,))


def test_xml_without_instances_is_a_clear_error(tmp_path):
    path = tmp_path / "empty.xml"
    path.write_text("<corpus><text><sentence><wf>a</wf></sentence></text></corpus>")
    with pytest.raises(WsdDataError, match="empty.xml has no <instance>"):
        read_raganato(path)


def test_keys_take_every_gold_key_of_a_line(tmp_path):
    path = tmp_path / "gold.key.txt"
    path.write_text("a.t0 old%3:00:01::\na.t1 old%5:00:00:past:00 old%3:00:02::\n\n")
    assert read_keys(path) == {"a.t0": {"old%3:00:01::"}, "a.t1": {"old%5:00:00:past:00", "old%3:00:02::"}}
    path.write_text("a.t0\n")
    with pytest.raises(WsdDataError, match="line 1"):
        read_keys(path)


def test_naf_sense_keys_are_the_lowercased_lemma_and_the_lexical_key(tmp_path):
    path = tmp_path / "br-x01.naf"
    path.write_text(NAF)
    corpus = read_naf(path)
    assert corpus.sentences == [["The", "Fulton", "County", "said"], ["Banks", "lend"]]
    assert [(t.sentence, t.tokens, t.keys) for t in corpus.targets] == [
        (0, (1, 2), ("group%1:03:00::",)),
        (0, (3,), ("say%2:32:00::",)),
        (1, (0,), ("bank%1:14:00::",)),
    ]
    read_naf(path, corpus)  # a second file appends its sentences after the first's
    assert len(corpus.sentences) == 4 and corpus.targets[-1].sentence == 3


def test_senses_follow_wordnet_numbers_and_merge_satellite_adjectives(inventory):
    assert inventory.senses("bank", "NOUN") == ["bank%1:17:01::", "bank%1:14:00::"]
    assert inventory.first_sense("Bank", "VERB") == "bank%2:40:00::"
    assert inventory.senses("old", "ADJ") == ["old%5:00:00:past:00", "old%3:00:01::", "old%3:00:02::"]
    assert inventory.first_sense("unknown", "NOUN") is None
    with pytest.raises(WsdDataError, match="unknown part of speech 'X'"):
        inventory.senses("bank", "X")


def test_index_sense_is_read_out_of_the_debian_package(tmp_path):
    deb = tmp_path / "wordnet-sense-index.deb"
    deb.write_bytes(debian_package({"usr/share/doc/x": b"odd", "usr/share/wordnet/index.sense": INDEX_SENSE.encode()}))
    assert read_deb_member(deb, "usr/share/wordnet/index.sense").decode() == INDEX_SENSE
    with pytest.raises(WsdDataError, match="has no usr/share/wordnet/data.noun"):
        read_deb_member(deb, "usr/share/wordnet/data.noun")
    deb.write_bytes(b"not a package")
    with pytest.raises(WsdDataError, match="is not a Debian package"):
        read_deb_member(deb, "usr/share/wordnet/index.sense")


def test_centroids_are_means_per_key_and_view():
    centroids = Centroids(n_views=2, dim=2)
    centroids.add(["a"], np.array([[1.0, 0.0], [0.0, 2.0]]))
    centroids.add(["a", "b"], np.array([[3.0, 0.0], [0.0, 4.0]]))
    for i in range(2000):  # past the first allocation
        centroids.add([f"k{i}"], np.ones((2, 2)))
    np.testing.assert_allclose(centroids.centroid("a"), [[2.0, 0.0], [0.0, 3.0]])
    np.testing.assert_allclose(centroids.centroid("b"), [[3.0, 0.0], [0.0, 4.0]])
    assert "b" in centroids and "c" not in centroids and len(centroids) == 2002


def test_nearest_centroid_is_by_cosine_per_view_among_seen_senses():
    centroids = Centroids(n_views=2, dim=2)
    centroids.add(["river"], np.array([[10.0, 1.0], [0.0, 1.0]]))
    centroids.add(["money"], np.array([[0.0, 1.0], [1.0, 0.0]]))
    vectors = np.array([[1.0, 0.2], [0.3, 0.1]])  # view 0 points like river's, view 1 like money's
    # Cosine, not distance: river's long first-view centroid is still the nearest in angle.
    assert nearest_sense(vectors, ["money", "river", "unseen"], centroids, "money") == ["river", "money"]
    assert nearest_sense(vectors, ["money"], centroids, "river") == ["money", "money"]


def test_lemmas_with_no_seen_sense_back_off_to_the_first_sense():
    centroids = Centroids(n_views=3, dim=2)
    centroids.add(["other"], np.ones((3, 2)))
    assert nearest_sense(np.ones((3, 2)), ["a", "b"], centroids, "a") == ["a", "a", "a"]
    assert nearest_sense(np.ones((3, 2)), [], centroids, None) == [None, None, None]


def test_scores_count_any_gold_key_and_unanswered_instances_lower_recall_only():
    gold = {"senseval2.a": {"x", "y"}, "senseval2.b": {"z"}, "semeval2015.c": {"w"}, "semeval2015.d": {"v"}}
    predictions = {"senseval2.a": "y", "senseval2.b": "x", "semeval2015.c": "w", "semeval2015.d": None}
    by_set = scores_by_set(predictions, gold)
    assert by_set["ALL"].precision == pytest.approx(200 / 3)
    assert by_set["ALL"].recall == pytest.approx(50.0)
    assert by_set["ALL"].f1 == pytest.approx(2 * (200 / 3) * 50 / (200 / 3 + 50))
    assert (by_set["senseval2"].f1, by_set["senseval2"].n) == (pytest.approx(50.0), 2)
    assert by_set["semeval2015"].precision == pytest.approx(100.0)
    assert set(by_set) == {"ALL", "senseval2", "semeval2015"}
    assert score({}, gold, gold).f1 == 0.0


def test_semcor_tree_digest_changes_with_a_file(tmp_path):
    (tmp_path / "brown1").mkdir()
    (tmp_path / "brown1" / "a.naf").write_text("one")
    before = tree_sha256(tmp_path)
    (tmp_path / "brown1" / "a.naf").write_text("two")
    assert tree_sha256(tmp_path) != before


@pytest.mark.slow
def test_benchmark_runs_end_to_end_on_made_up_data(tmp_path):
    data = write_wsd_data(tmp_path / "data")
    tiny = TINY_MODEL
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "scripts/evaluate.py", str(out / "r.json"), str(out / "r.md"), f"--data={data}"]
        + [f"--options={tiny / 'options.json'}", f"--weights={tiny / 'weights.hdf5'}"],
        cwd=REPO / "projects" / "wsd",
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    results = json.loads((out / "r.json").read_text())
    first = results["f1"]["WordNet first sense"]
    assert first["ALL"]["n"] == 3 and first["ALL"]["f1"] == pytest.approx(0.0)
    # bank: SemCor saw only the money sense, so every view answers it, and it is right.
    assert all(results["f1"][view]["semeval2015"]["f1"] == pytest.approx(100.0) for view in results["views"])
    assert [row["nearest"][0] for row in results["bank"]] == ["bank%1:14:00:: (a financial institution)"] * 4
    assert "| WordNet first sense |" in (out / "r.md").read_text()
