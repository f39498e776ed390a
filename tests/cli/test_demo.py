from spacy_elmo.cli.demo import SENSES, nearest_others
from spacy_elmo.elmo.sources import DEFAULT_MODEL
from tests.support.cli import assert_clear_error, run_cli


def test_demo_runs_on_the_bundled_default_model():
    result = run_cli("demo")
    assert result.returncode == 0, result.stderr
    assert f"model {DEFAULT_MODEL}" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("  [") and "1.000" in line]
    assert len(rows) == 4


def test_demo_unknown_model_is_a_clear_error():
    assert_clear_error(run_cli("demo", "--model", "nope"), "no ELMo model 'nope'", "not a bundled model")


def test_demo_says_which_sentence_is_nearest_and_whether_its_bank_has_the_same_sense():
    lines = run_cli("demo").stdout.splitlines()
    at = lines.index('cosine similarity of "bank" in sentence i and j:')
    matrix = [[float(v) for v in line.split("]", 1)[1].split()] for line in lines[at + 2 : at + 6]]
    at = lines.index('nearest other "bank" of each sentence:')
    right = 0
    for i, claim in enumerate(lines[at + 1 : at + 5]):
        j = max((k for k in range(4) if k != i), key=lambda k: matrix[i][k])
        same = SENSES[i] == SENSES[j]
        assert claim.startswith(f"  [{i}] -> [{j}] {matrix[i][j]:.3f}  ") and claim.endswith("same sense") == same
        right += same
    assert lines[at + 5] == f"{right} of 4 nearest the other sentence of their own sense"


def test_nearest_others_skips_each_item_itself_and_takes_the_first_of_a_tie():
    assert nearest_others([[1.0, 0.2, 0.9], [0.3, 1.0, 0.3], [0.9, 0.5, 1.0]]) == [2, 0, 0]
