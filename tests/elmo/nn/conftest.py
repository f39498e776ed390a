"""The wavefront's elementwise step (spacy_elmo/elmo/nn/time_loops/wave_cell.py) runs compiled only in the tests marked
`compiled`: the TF fixtures and the step's own tests. The others test the loops' logic (shrinking rows,
buckets, layers, widths, fast modes) with the same functions run eagerly: compiled, each structure they
build would cost seconds of compiling, for kernels that compute what the eager functions compute
(test_wave_cell.py). A compiled test may compile many structures: at torch's default recompile limit
the later ones would run uncompiled, untested."""

import pytest

from spacy_elmo.elmo.nn.time_loops import wave_cell
from spacy_elmo.elmo.nn.torch_compat import recompile_limit


@pytest.fixture(autouse=True)
def compiled_only_where_marked(request, monkeypatch):
    if request.node.get_closest_marker("compiled") is None:
        monkeypatch.setattr(wave_cell.WAVE_CELL, "compiling", False)
        yield
    else:
        with recompile_limit(256):
            yield
