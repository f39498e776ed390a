"""What a dump's manifest calls "the same model": the digest of the model's files, not their paths, so a
rerun after the weights were replaced at the same path redoes its shards, and a Ray worker whose node
reads other files under the model's paths refuses to write (tests/elmo/embed/test_ray_dump.py runs the reruns)."""

import shutil

import pytest

from spacy_elmo.elmo.embed.manifest import MANIFEST_NAME, model_files, model_identity, read_manifest
from spacy_elmo.elmo.embed.ray_dump import ShardWriter
from spacy_elmo.elmo.errors import ElmoError, InputFileError
from spacy_elmo.elmo.sources import reference_to, resolve
from tests.support.paths import FIXTURES
from tests.support.paths import TINY_MODEL as TINY


def _identity(model, options=None, weights=None):
    reference = reference_to(str(model)) if options is None else reference_to(options, weights)
    return model_identity(model_files(resolve(reference)))


def test_the_same_files_are_the_same_model_wherever_and_however_named(tmp_path):
    copy = shutil.copytree(TINY, tmp_path / "copy")
    assert _identity("fixture-tiny") == _identity(copy) == _identity(copy, copy / "options.json", copy / "weights.hdf5")


def test_weights_replaced_at_the_same_path_are_another_model(tmp_path):
    copy = shutil.copytree(TINY, tmp_path / "copy")
    before = _identity(copy, copy / "options.json", copy / "weights.hdf5")
    raw = bytearray((copy / "weights.hdf5").read_bytes())
    raw[-1] ^= 1
    (copy / "weights.hdf5").write_bytes(bytes(raw))
    assert _identity(copy, copy / "options.json", copy / "weights.hdf5") != before
    assert _identity(copy) != _identity(TINY)


def test_a_tfhub_modules_identity_covers_its_variables(tmp_path):
    module = shutil.copytree(FIXTURES / "elmo-tfhub" / "dp-1shard", tmp_path / "module")
    before = _identity(module)
    shard = module / "variables" / "variables.data-00000-of-00001"
    shard.write_bytes(shard.read_bytes()[::-1])
    assert _identity(module) != before


def test_a_worker_that_reads_other_model_files_refuses_its_shard(tmp_path):
    corpus = tmp_path / "in.txt"
    corpus.write_text("a test\n", encoding="utf8")
    writer = ShardWriter(reference_to("fixture-tiny"), 8, False, None)
    with pytest.raises(ElmoError, match=r"read other model files than the driver"):
        writer.write(str(corpus), str(tmp_path / "out.hdf5"), "0" * 64)
    assert not (tmp_path / "out.hdf5").exists()
    writer.write(str(corpus), str(tmp_path / "out.hdf5"), _identity("fixture-tiny"))
    assert (tmp_path / "out.hdf5").exists()


@pytest.mark.parametrize("text", ["{", "[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"])
def test_a_manifest_that_is_no_json_names_itself(tmp_path, text):
    (tmp_path / MANIFEST_NAME).write_text(text)
    with pytest.raises(InputFileError, match=f"manifest {tmp_path / MANIFEST_NAME} is not a dump manifest"):
        read_manifest(tmp_path)
