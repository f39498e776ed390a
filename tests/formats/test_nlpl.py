"""The NLPL repository's format (formats/nlpl.py): bilm-tf's files plus `meta.json`, told apart only by
that file, so a plain bilm-tf folder is never taken for it."""

from spacy_elmo.formats import FORMATS
from spacy_elmo.formats.bilm_tf import BILM_TF
from spacy_elmo.formats.nlpl import NLPL

NLPL_FILES = {"options.json": "m/options.json", "model.hdf5": "m/model.hdf5", "meta.json": "m/meta.json"}


def test_a_folder_with_meta_json_is_nlpl_and_reads_as_bilm_tf():
    assert NLPL.detect(NLPL_FILES) == {"options": "m/options.json", "weights": "m/model.hdf5"}
    assert NLPL.detect(NLPL_FILES) == BILM_TF.detect(NLPL_FILES)


def test_bilm_tf_files_without_meta_json_are_not_nlpl():
    files = {name: path for name, path in NLPL_FILES.items() if name != "meta.json"}
    assert NLPL.detect(files) is None
    assert BILM_TF.detect(files) is not None


def test_it_is_tried_before_bilm_tf_whose_files_it_holds():
    assert FORMATS.index(NLPL) < FORMATS.index(BILM_TF)
    assert NLPL.name == "nlpl" and "meta.json" in NLPL.expects
