"""The one batch planner (elmo/nn/batch_plan.py), of the spaCy component and `embed`: stateless batches
longest first within the padded-token budget and an optional row cap, stateful ones consecutive."""

from spacy_elmo.elmo.nn.batch_plan import padded_tokens, plan_batches


def test_plan_batches_sorts_by_length_and_respects_the_budget():
    lengths = [3, 10, 0, 7, 2]
    batches = plan_batches(lengths, max_batch_tokens=20, stateful=False)
    assert batches == [[1, 3], [0, 4]]  # empty rows skip the biLM
    assert all(padded_tokens(lengths, b) <= 20 for b in batches)
    assert plan_batches(lengths, max_batch_tokens=5, stateful=False) == [[1], [3], [0], [4]]
    assert plan_batches(lengths, 1, stateful=True, batch_size=2) == [[0, 1], [2, 3], [4]]


def test_max_rows_caps_a_stateless_batch():
    lengths = [1, 1, 1, 1, 1]
    assert plan_batches(lengths, 100, stateful=False, max_rows=2) == [[0, 1], [2, 3], [4]]
    assert plan_batches(lengths, 100, stateful=False) == [[0, 1, 2, 3, 4]]


def test_padded_tokens_is_rows_times_the_longest_row():
    assert padded_tokens([3, 10, 7], [1, 2]) == 20
    assert padded_tokens([3], []) == 0
