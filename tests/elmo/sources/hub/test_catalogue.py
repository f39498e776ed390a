"""The packaged catalogue of published models: valid, consistent, and refusing bad catalogue files."""

import json
from urllib.parse import urlsplit

import pytest

from spacy_elmo.elmo.formats import format_names
from spacy_elmo.elmo.sources.hub import InputFileError, ModelReferenceError, is_catalogue_name, load_catalogue
from spacy_elmo.elmo.sources.hub.catalogue import CATALOGUE_PATH
from tests.support.paths import REPO

CATALOGUE = load_catalogue()


def test_names_are_unique():
    names = CATALOGUE.names()
    assert len(names) == len(set(names))


def test_every_url_is_https_and_names_a_file():
    for entry in CATALOGUE.models:
        assert urlsplit(entry.source).scheme == "https", entry.name
        for file in entry.files:
            for url in file.sources or [file.by_hand]:
                parts = urlsplit(url)
                assert parts.scheme == "https" and parts.netloc, url
            assert file.file_name, file.url


def test_the_catalogue_holds_95_models_or_more_each_with_its_source():
    assert len(CATALOGUE.models) >= 95
    assert all(urlsplit(e.source).netloc for e in CATALOGUE.models)


def test_cross_lingual_models_ship_their_alignment_first_from_allennlp_then_from_the_authors():
    entries = [e for e in CATALOGUE.models if e.name.startswith("schuster-aligned-")]
    assert sorted(e.language for e in entries) == ["de", "en", "es", "fr", "it", "pt", "sv"]
    for entry in entries:
        assert [f.save_as for f in entry.files] == ["options.json", "weights.hdf5", "alignment.pth"]
        for file in entry.files:
            first, mirror = file.sources
            assert first.startswith("https://s3-us-west-2.amazonaws.com/allennlp/models/multilingual_elmo/")
            assert mirror.startswith("https://www.dropbox.com/s/") and mirror.endswith("?dl=1")
            assert urlsplit(first).path.rpartition("/")[2] == urlsplit(mirror).path.rpartition("/")[2]


def test_models_served_only_to_browsers_are_fetched_by_hand_and_say_so():
    by_hand = {e.name for e in CATALOGUE.models if any(f.by_hand for f in e.files)}
    assert by_hand == {"bioelmo-pubmed", "materials-olivetti"}
    for name in by_hand:
        assert all(not f.sources and f.by_hand and f.name for f in CATALOGUE.get(name).files)


def test_every_entrys_format_has_a_loader():
    assert {e.format for e in CATALOGUE.models} <= set(format_names())


def test_a_format_without_a_loader_is_refused(tmp_path):
    data = json.loads(CATALOGUE_PATH.read_text(encoding="utf8"))
    data["models"][0]["format"] = "word2vec"
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(data), encoding="utf8")
    with pytest.raises(InputFileError, match="'word2vec' has no loader"):
        load_catalogue(path)


def test_portuguese_is_allennlps_two_contributed_models():
    assert "allennlp-pt" not in CATALOGUE.names()
    wikipedia, brwac = CATALOGUE.get("allennlp-pt-wikipedia"), CATALOGUE.get("allennlp-pt-brwac")
    assert [f.url.rsplit("/", 2)[1:] for f in wikipedia.files] == [
        ["wikipedia", "options.json"],
        ["wikipedia", "elmo_pt_weights.hdf5"],
    ]
    assert [f.file_name for f in brwac.files] == ["options.json", "elmo_pt_weights_dgx1.hdf5"]


def test_allennlps_japanese_and_basque_contributions_point_at_their_publishers_files():
    japanese, basque = CATALOGUE.get("allennlp-ja-exawizards"), CATALOGUE.get("allennlp-eu-schweter")
    assert (japanese.language, basque.language) == ("ja", "eu")
    assert [f.url for f in japanese.files] == [
        "https://exawizardsallenlp.blob.core.windows.net/data/options.json",
        "https://exawizardsallenlp.blob.core.windows.net/data/weights.hdf5",
    ]
    assert [f.url for f in basque.files] == [
        "https://schweter.eu/cloud/eu-elmo/options.json",
        "https://schweter.eu/cloud/eu-elmo/weights.hdf5",
    ]
    assert all(sorted(f.save_as for f in e.files) == ["options.json", "weights.hdf5"] for e in (japanese, basque))


def test_norelmo_models_are_cc_by_and_the_joint_ones_norwegian():
    for name in ("nlpl-210", "nlpl-211", "nlpl-217", "nlpl-218"):
        assert CATALOGUE.get(name).license == "CC BY 4.0"
    assert [CATALOGUE.get(n).language for n in ("nlpl-210", "nlpl-217", "nlpl-218")] == ["nb", "no", "no"]
    assert CATALOGUE.get("nlpl-212").language == "ru"


def test_elmoformanylangs_covers_its_44_languages():
    entries = [e for e in CATALOGUE.models if e.format == "elmoformanylangs" and e.name != "elmoformanylangs-zhs"]
    assert len(entries) == 44
    assert len({e.language for e in entries}) == 44
    assert all(len(e.files) == 1 and e.files[0].archive == "zip" for e in entries)


def test_allennlp_english_models_are_there_with_their_published_sizes():
    small = CATALOGUE.get("allennlp-small")
    original = CATALOGUE.get("allennlp-original")
    assert (small.lstm_dim, small.projection_dim, small.parameters_millions) == (1024, 128, 13.6)
    assert (original.lstm_dim, original.projection_dim, original.highway_layers) == (4096, 512, 2)
    assert {"allennlp-medium", "allennlp-original-5.5b", "allennlp-pubmed"} <= set(CATALOGUE.names())
    # bilm-tf files are saved under the layout load_bilm reads: options.json + weights.hdf5
    assert sorted(f.save_as for f in small.files) == ["options.json", "weights.hdf5"]


def test_known_checksums_are_well_formed():
    for entry in CATALOGUE.models:
        for file in entry.files:
            assert file.sha256 is None or len(file.sha256) == 64
            assert file.size is None or file.size > 0


def test_language_filter_takes_a_code_or_a_name():
    assert {e.name for e in CATALOGUE.in_language("de")} == {e.name for e in CATALOGUE.in_language("German")}
    assert all(e.language == "ru" for e in CATALOGUE.in_language("ru"))
    assert CATALOGUE.in_language("xx") == []


def test_names_and_unknown_names():
    assert is_catalogue_name("allennlp-original")
    assert not is_catalogue_name("path/to/model")
    with pytest.raises(ModelReferenceError, match="did you mean allennlp-small"):
        CATALOGUE.get("allennlp-smal")


def _entry(name="m", url="https://example.org/m.zip", **extra):
    return {
        "name": name,
        "language": "en",
        "language_name": "English",
        "format": "nlpl",
        "description": "d",
        "files": [{"url": url, "archive": "zip"}],
        "source": "https://example.org/",
        **extra,
    }


@pytest.mark.parametrize(
    "models, problem",
    [
        ([_entry(), _entry()], "appears twice"),
        ([_entry(url="http://example.org/m.zip")], "https"),
        ([_entry(format="word2vec")], "format"),
        ([_entry(files=[{"url": "https://example.org/m.zip", "sha256": "abc"}])], "sha256"),
        ([_entry(files=[{"url": "https://e.org/a.json", "save_as": "../x"}])], "plain file name"),
        ([_entry(files=[{"url": "https://e.org/a.zip", "mirrors": ["http://e.org/a.zip"]}])], "not an https URL"),
        ([_entry(files=[{"by_hand": "https://drive.example/view"}])], "needs a name"),
        (
            [_entry(files=[{"url": "https://e.org/a.zip", "by_hand": "https://e.org/", "name": "a.zip"}])],
            "either a url",
        ),
        ([_entry(files=[{"by_hand": "http://drive.example/view", "name": "a.zip"}])], "not an https page"),
    ],
)
def test_bad_catalogue_files_are_refused(tmp_path, models, problem):
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"catalogue_version": 1, "about": "test", "models": models}))
    with pytest.raises(InputFileError, match=problem):
        load_catalogue(path)


def test_unreadable_catalogue_files_are_refused(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        load_catalogue(tmp_path / "missing.json")
    for text in ("{", "[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"):  # nested too deep, too many digits
        (tmp_path / "broken.json").write_text(text)
        with pytest.raises(InputFileError, match="not readable JSON"):
            load_catalogue(tmp_path / "broken.json")


def test_docs_list_every_model():
    text = (REPO / "docs" / "models.md").read_text(encoding="utf8")
    for entry in CATALOGUE.models:
        family = f"`{entry.name.rpartition('-')[0]}-<code>`"  # a family listed once, as `prefix-<code>`
        assert f"`{entry.name}`" in text or family in text, entry.name
