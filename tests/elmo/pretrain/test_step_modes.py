"""The step modes run on the CPU through the same code (CI runs it; tests/device/test_gpu.py keeps what
needs CUDA): char ids gathered from the run's token table on the device, negatives drawn per step from a
generator on the device, no host read in a step, the step compiled, each against the plain step."""

import pytest
import torch
from torch._inductor import config as inductor_config
from torch._inductor.compile_fx import compile_fx, compile_fx_inner

from benchmarks.bench_pretrain_launches import count_step_launches
from spacy_elmo.elmo.pretrain import load_config, train
from spacy_elmo.elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.config import ConfigError
from spacy_elmo.elmo.pretrain.distributed import Context
from spacy_elmo.elmo.pretrain.step_modes import CompiledStep, chosen_step_mode, deterministic_algorithms
from tests.support.paths import PRETRAIN_TINY_CONFIG
from tests.support.tiny_corpus import write_tiny_corpus

SAMPLED = {"training.softmax": "sampled", "training.n_negative_samples": 8, "logging.plot": False}


def run(tmp_path, name, resume=False, **settings):
    overrides = {**write_tiny_corpus(tmp_path / "corpus"), **SAMPLED, "training.max_steps": 6, **settings}
    out = tmp_path / name
    return train(load_config(PRETRAIN_TINY_CONFIG, overrides), out, resume=resume, show_progress=False), MetricsLog(
        out / LOG_FILE
    )


def perplexities(log):
    return [r["perplexity"] for r in log.records() if r["event"] == "train"]


def check_against_plain_and_resume(tmp_path, mode):
    """The mode's per-step perplexities within 1e-4 of the plain step's; a run stopped at step 3 and
    resumed ends where the uninterrupted run of the mode ends, bit for bit."""
    each_step = {"logging.log_every": 1, "logging.checkpoint_every": 3}
    _, plain = run(tmp_path, "plain", **each_step)
    straight, log = run(tmp_path, mode, **each_step, **{"training.step_mode": mode})
    assert perplexities(log) == pytest.approx(perplexities(plain), rel=1e-4)
    run(tmp_path, "resumed", **each_step, **{"training.step_mode": mode, "training.max_steps": 3})
    resumed, _ = run(tmp_path, "resumed", resume=True, **each_step, **{"training.step_mode": mode})
    assert resumed.step == straight.step == 6 and resumed.digests == straight.digests


@pytest.mark.slow
def test_no_sync_step_reads_nothing_on_the_host_trains_as_the_plain_step_and_resumes_exactly(tmp_path):
    check_against_plain_and_resume(tmp_path, "no_sync")
    assert count_step_launches("tiny", "plain").host_reads > 0
    assert count_step_launches("tiny", "no_sync").host_reads == 0


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a cold compile on 2 busy cores takes minutes
def test_compiled_step_trains_as_the_plain_step_resumes_exactly_and_launches_a_fifth(tmp_path):
    # The launch count profiles the generated kernels: compiled so from the start, on the runs' own corpus
    # and settings, the count's steps reuse the runs' graphs instead of compiling their own (minutes).
    with inductor_config.patch({"cpp.enable_kernel_profile": True}):
        check_against_plain_and_resume(tmp_path, "compiled")
        same = {**write_tiny_corpus(tmp_path / "corpus"), **SAMPLED}
        plain, compiled = (count_step_launches("tiny", mode, overrides=same) for mode in ("plain", "compiled"))
    # tiny's 10-step window leaves the recurrence's per-step kernels a larger share than the presets'
    # 20-step one (results.md has the small preset's ratio); a graph break would multiply the count.
    assert compiled.host_reads == 0 and compiled.launches <= plain.launches / 5


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_compiled_step_writes_only_inputs_that_keep_their_address(tmp_path, monkeypatch):
    """What CUDA graphs need to capture a compiled graph (torch's cudagraph trees skip one that writes an
    input of another kind), checked where inductor decides it, on the CPU: each graph the compiled step
    runs (forward, backward, update) writes only inputs marked static. The update used to write the
    accumulators, the step counter, the guard and the gradients, and ran uncaptured on the H200."""
    graphs = []

    def recording_inner(gm, example_inputs, **kwargs):
        compiled = compile_fx_inner(gm, example_inputs, **kwargs)
        graphs.append((set(compiled.mutated_input_idxs), set(kwargs.get("static_input_idxs", ()))))
        return compiled

    def backend(gm, example_inputs):
        return compile_fx(gm, example_inputs, inner_compile=recording_inner)

    # Compiled graphs taken from torch's caches would not pass through the recording compiler. torch's
    # configs are patched their own way: monkeypatching one left the option deleted after the test.
    compile_with_options = torch.compile
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: compile_with_options(fn, backend=backend, dynamic=False))
    with inductor_config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        result, _ = run(tmp_path, "compiled", **{"training.step_mode": "compiled", "training.max_steps": 3})
    assert result.step == 3 and len(graphs) >= 3
    assert any(written for written, _ in graphs)  # the update writes the weights, so the check sees writes
    assert all(written <= static for written, static in graphs), graphs


@pytest.mark.parametrize("enabled, warn_only", [(False, False), (True, False), (True, True)])
def test_the_compiled_step_runs_deterministic_algorithms_and_gives_back_the_callers_setting(enabled, warn_only):
    """The compiler lowers the character embedding's backward pass to unordered atomic adds unless the
    flag is set (a compiled run and its resumed copy then ended a few ulps apart on a cold compile)."""
    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
    try:
        with deterministic_algorithms():
            assert torch.are_deterministic_algorithms_enabled()
            assert not torch.utils.deterministic.fill_uninitialized_memory
        assert torch.are_deterministic_algorithms_enabled() == enabled
        assert torch.is_deterministic_algorithms_warn_only_enabled() == warn_only
        assert torch.utils.deterministic.fill_uninitialized_memory == fill
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])


def test_the_compiled_step_holds_the_flag_for_its_whole_step(tmp_path, monkeypatch):
    seen = []

    def recording(self, item, states, number):
        seen.append(torch.are_deterministic_algorithms_enabled())
        return original(self, item, states, number)

    original = CompiledStep._step
    monkeypatch.setattr(CompiledStep, "_step", recording)
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # the wiring, not the compiler
    run(tmp_path, "compiled", **{"training.step_mode": "compiled", "training.max_steps": 2})
    assert seen and all(seen) and not torch.are_deterministic_algorithms_enabled()


def failing_compile(fail_update: bool):
    """torch.compile as it behaves where its backend cannot compile the step (seen on a GPU at the
    `small` preset): the error comes at the compiled function's first call, before anything runs."""

    def compile_(fn, **kwargs):
        is_update = "apply_update" in repr(fn)

        def compiled(*args, **kw):
            if is_update == fail_update:
                raise torch._inductor.exc.InductorError(AssertionError("from the backend"), None)
            return fn(*args, **kw)

        return compiled

    return compile_


@pytest.mark.parametrize("fail_update", [False, True])
def test_a_step_torch_cannot_compile_warns_and_the_run_goes_on_uncompiled(tmp_path, monkeypatch, caplog, fail_update):
    """The forward graph failing first: nothing ran, so the run is the no_sync run, bit for bit. The
    update failing after the forward and backward graphs ran: the step is taken again uncompiled."""
    each_step = {"logging.log_every": 1, "logging.checkpoint_every": 3}
    no_sync, _ = run(tmp_path, "no_sync", **each_step, **{"training.step_mode": "no_sync"})
    monkeypatch.setattr(torch, "compile", failing_compile(fail_update))
    with caplog.at_level("WARNING", logger="spacy_elmo.elmo.pretrain.step_modes"):
        result, _ = run(tmp_path, "compiled", **each_step, **{"training.step_mode": "compiled"})
    warned = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert result.step == 6 and len(warned) == 1
    assert "failed at step 1 (InductorError: AssertionError: from the backend)" in warned[0]
    if not fail_update:
        assert result.digests == no_sync.digests


@pytest.mark.parametrize("setting", [{"training.optimizer": "adam"}, {"training.sparse_softmax": True}])
def test_a_device_update_step_mode_refuses_adam_and_the_sparse_softmax(tmp_path, setting):
    overrides = {**write_tiny_corpus(tmp_path), **SAMPLED, "training.step_mode": "no_sync", **setting}
    with pytest.raises(ConfigError, match='step_mode = "no_sync" updates the weights on the device'):
        load_config(PRETRAIN_TINY_CONFIG, overrides)


@pytest.mark.parametrize(
    "device, world_size, setting, expected",
    [
        ("cuda", 1, {}, "compiled"),
        ("cuda", 2, {}, "no_sync"),
        ("cpu", 1, {}, "plain"),
        ("cuda", 1, {"training.optimizer": "adam"}, "plain"),
        ("cuda", 1, {"training.sparse_softmax": True}, "plain"),
        ("cpu", 1, {"training.step_mode": "compiled"}, "compiled"),
    ],
)
def test_auto_step_mode_picks_the_fastest_exact_mode_the_settings_allow(
    tmp_path, device, world_size, setting, expected
):
    """The presets' `step_mode = "auto"`: the compiled step where the GPU measurement found it fastest, the
    plain step where a device update does not apply; a mode named explicitly is kept."""
    config = load_config(PRETRAIN_TINY_CONFIG, {**write_tiny_corpus(tmp_path), **SAMPLED, **setting})
    assert chosen_step_mode(config.training, Context(device=torch.device(device), world_size=world_size)) == expected
