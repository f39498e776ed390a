"""The public entry points' arguments, fuzzed: `load_bilm`'s model references, `BiLM.embed`'s sentences
and settings, and `dump`'s options (its settings in-process in both runs, through the command line in the
long one). Each gives a correct result or an InputError (the command: one `error:` line, no traceback)."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spacy_elmo import load_bilm
from spacy_elmo.elmo.embed.dump import DumpSettings
from spacy_elmo.elmo.errors import ElmoError, InputError
from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.nn.layer_choice import layers_from_text
from tests.support.cli import run_cli
from tests.support.fuzz import RUNS, fuzz_settings
from tests.support.paths import ALLENNLP_DIR, TINY_MODEL, TRAIN_TEXT

OPTIONS, WEIGHTS = ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"
NUMBERS = st.one_of(st.integers(-3, 300), st.floats(), st.sampled_from([0, -1, 2**63, 1e39]))
ODD = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=6), st.lists(st.integers(), max_size=2))
REFERENCES = st.one_of(
    st.sampled_from(
        [
            str(OPTIONS),
            str(WEIGHTS),
            str(ALLENNLP_DIR),
            str(TINY_MODEL),
            str(TRAIN_TEXT),
            "fixture-tiny",
            "",
            ".",
            "/",
            "nope",
            "allennlp-small",
            "hf:",
            "hf:a/b",
            "hf:a/b@",
            "../../x",
            "a\x00b",
            "x" * 5000,
        ]
    ),
    st.text(max_size=12),
    st.none(),
    st.integers(),
)


@pytest.mark.parametrize("slow", RUNS)
def test_load_bilm_takes_any_reference_or_says_why_not(slow, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("SPACY_ELMO_CACHE", str(tmp_path))  # no downloaded model: names are not fetched

    @fuzz_settings(slow)
    @given(
        options=REFERENCES,
        weights=st.one_of(st.none(), REFERENCES),
        warm_start=st.one_of(st.booleans(), ODD),
        fast_mode=st.one_of(st.none(), st.sampled_from(["int8", "bf16", "x"]), ODD),
    )
    @example(options=None, weights=None, warm_start=False, fast_mode=None)  # Path(None)
    @example(options="x" * 5000, weights=None, warm_start=False, fast_mode=None)  # ENAMETOOLONG
    def check(options, weights, warm_start, fast_mode):
        try:
            bilm = load_bilm(options, weights, warm_start=warm_start, fast_mode=fast_mode)
        except ElmoError:  # bad input, or a name not downloaded
            return
        assert isinstance(bilm, BiLM) or hasattr(bilm, "embed")

    check()


TOKENS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
# Valid values of each argument of `embed`, and values of any kind, one argument at a time.
EMBED_ARGUMENTS = {
    "sentences": st.lists(st.lists(TOKENS, max_size=6), max_size=5),
    "stateful": st.booleans(),
    "batch_size": st.integers(1, 8),
    "layers": st.one_of(st.sampled_from(["all", "top", "average"]), st.lists(st.floats(-2, 2), min_size=3, max_size=3)),
    "pool": st.sampled_from([None, "mean"]),
    "max_batch_tokens": st.one_of(st.none(), st.integers(1, 40)),
}
ODD_SENTENCES = st.lists(st.one_of(st.lists(TOKENS, max_size=3), TOKENS, ODD), max_size=3)


@st.composite
def _embed_arguments(draw):
    arguments = {name: draw(valid) for name, valid in EMBED_ARGUMENTS.items()}
    odd = draw(st.sampled_from([None, *EMBED_ARGUMENTS]))
    if odd is not None:
        arguments[odd] = draw(st.one_of(ODD, ODD_SENTENCES, st.sampled_from(["bogus", "max", [0.5] * 4])))
    return arguments


@pytest.mark.parametrize("slow", RUNS)
def test_embed_takes_any_arguments_or_says_why_not(slow, fixture_bilm):
    n_layers, width = fixture_bilm.options.n_output_layers, fixture_bilm.options.output_dim

    @fuzz_settings(slow)
    @given(arguments=_embed_arguments())
    @example(arguments={"sentences": None})
    @example(arguments={"sentences": [["a"], None]})
    @example(arguments={"sentences": [["a"]], "batch_size": None})
    @example(arguments={"sentences": [["a"]], "max_batch_tokens": ""})
    @example(arguments={"sentences": [["a"]], "layers": 1})
    def check(arguments):
        try:
            arrays = fixture_bilm.embed(**arguments)
        except InputError:
            return
        finally:
            fixture_bilm.reset_states()
        sentences, layers, pool = arguments["sentences"], arguments.get("layers", "all"), arguments.get("pool")
        assert len(arrays) == len(sentences)
        for sentence, array in zip(sentences, arrays):
            per_token = (len(sentence), width) if pool is None else (width,)
            assert array.shape == ((n_layers, *per_token) if layers == "all" else per_token)
            assert array.dtype == np.float32 and np.isfinite(array).all()

    check()


DUMP_TEXT = st.one_of(st.text(max_size=10), st.sampled_from(["all", "top", "none", "mean", "gzip", "0.5,nan,1"]))


@pytest.mark.parametrize("slow", RUNS)
def test_dumps_settings_take_any_options_or_say_why_not(slow):
    @fuzz_settings(slow)
    @given(
        layers=DUMP_TEXT,
        pool=DUMP_TEXT,
        dtype=st.one_of(DUMP_TEXT, st.sampled_from(["float32", "float16"])),
        compression=st.one_of(DUMP_TEXT, st.sampled_from(["lzf", "gzip"])),
        compression_level=st.one_of(st.none(), st.integers()),
        time_loop=st.one_of(DUMP_TEXT, st.sampled_from(["auto", "step"])),
        engine=st.one_of(DUMP_TEXT, st.sampled_from(["local", "ray"])),
        gpu_id=st.integers(-2, 2),
        stateful=st.booleans(),
        max_batch_tokens=st.one_of(st.none(), st.integers()),
    )
    def check(**options):
        try:
            dump_settings = DumpSettings(**options)
        except InputError:
            return
        weights = layers_from_text(dump_settings.layers)
        assert isinstance(weights, str) or all(math.isfinite(w) for w in weights)

    check()


OPTION_VALUES = st.one_of(st.sampled_from(["0", "-1", "1", "nan", "", "all", "0.5,0.5", "gzip", "9" * 30]), DUMP_TEXT)
DUMP_OPTIONS = [
    "--layers",
    "--pool",
    "--dtype",
    "--compression",
    "--compression-level",
    "--time-loop",
    "--batch-size",
    "--max-batch-tokens",
    "--engine",
    "--gpu-id",
    "--model",
]


@pytest.mark.slow
def test_dumps_command_line_options_give_a_file_or_one_error_line(tmp_path):
    """A process per example: 30 examples, in the long run only."""
    output = tmp_path / "out.hdf5"

    @settings(fuzz_settings(True), max_examples=30, deadline=None)
    @given(options=st.lists(st.tuples(st.sampled_from(DUMP_OPTIONS), OPTION_VALUES), max_size=3))
    def check(options):
        output.unlink(missing_ok=True)
        args = [part for option, value in options for part in (option, value.replace("\x00", ""))]
        result = run_cli("dump", TRAIN_TEXT, output, "--model", str(TINY_MODEL), "--no-progress", *args, timeout=120)
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        assert (result.returncode == 0) == output.exists(), result.stderr[-3000:]

    check()
