"""The LSTM on its own: clipping, the forget bias, finished rows' states, single-direction use."""

import numpy as np
import torch

from spacy_elmo.elmo.nn.lstm import BiLSTMLayer, BiLSTMStack


def _naive_direction(layer, d, x, h, c):
    """One direction of one layer, step by step in float64, straight from the TF cell's definition."""
    w_x, w_h = layer.input_weight[d].double(), layer.state_weight[d].double()
    b, w_p = layer.input_bias[d].double(), layer.projection_weight[d].double()
    outputs = []
    for t in range(x.shape[0]):
        z = x[t].double() @ w_x + h @ w_h + b
        i, j, f, o = z.chunk(4)
        c = (torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(j)).clamp(-layer.cell_clip, layer.cell_clip)
        h = ((torch.sigmoid(o) * torch.tanh(c)) @ w_p).clamp(-layer.proj_clip, layer.proj_clip)
        outputs.append(h)
    return (torch.stack(outputs) if outputs else None), h, c


def test_layer_matches_the_cell_definition_with_ragged_rows():
    torch.manual_seed(0)
    layer = BiLSTMLayer(input_dim=6, cell_dim=5, projection_dim=4, cell_clip=0.7, proj_clip=0.3)
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 1.0)  # large weights, so that both clips bite
    lengths = [5, 3, 0]
    x = torch.randn(2, 3, 5, 6)
    state = (torch.randn(2, 3, 4) * 0.1, torch.randn(2, 3, 5) * 0.1)
    steps_active = [sum(1 for n in lengths if n > t) for t in range(5)]
    with torch.no_grad():
        out, (h, c) = layer(x, steps_active, state)
    clipped = 0
    for d in range(2):
        for row, n in enumerate(lengths):
            with torch.no_grad():
                ref_out, ref_h, ref_c = _naive_direction(
                    layer, d, x[d, row, :n], state[0][d, row].double(), state[1][d, row].double()
                )
            if n:
                np.testing.assert_allclose(out[d, row, :n].numpy(), ref_out.numpy(), atol=1e-5)
                clipped += int((ref_c.abs() == 0.7).sum()) + int((ref_out.abs() == 0.3).sum())
            assert (out[d, row, n:] == 0).all()
            np.testing.assert_allclose(h[d, row].numpy(), ref_h.numpy(), atol=1e-5)
            np.testing.assert_allclose(c[d, row].numpy(), ref_c.numpy(), atol=1e-5)
    assert clipped > 0, "the test must exercise the clips"


def seeded_stack(seed: int) -> BiLSTMStack:
    """Two layers (input 4, cell 6, projection 4), both clips at 3, skip connections; weights from `seed`."""
    torch.manual_seed(seed)
    return BiLSTMStack(2, 4, 6, 4, 3.0, 3.0, use_skip_connections=True)


def test_one_direction_equals_its_slice_of_both():
    stack = seeded_stack(1)
    x = torch.randn(2, 3, 7, 4)
    lengths = [7, 7, 2]
    with torch.no_grad():
        both, finals = stack(x, lengths)
        backward, back_finals = stack(x[1:], lengths, directions=slice(1, 2))
    for layer_both, layer_back in zip(both, backward):
        np.testing.assert_allclose(layer_back[0].numpy(), layer_both[1].numpy(), atol=1e-6)
    np.testing.assert_allclose(back_finals[-1][1][0].numpy(), finals[-1][1][1].numpy(), atol=1e-6)


def test_skip_connection_adds_the_layer_input():
    torch.manual_seed(2)
    with_skip = BiLSTMStack(2, 4, 6, 4, None, None, use_skip_connections=True)
    without = BiLSTMStack(2, 4, 6, 4, None, None, use_skip_connections=False)
    without.load_state_dict(with_skip.state_dict())
    x = torch.randn(2, 2, 5, 4)
    with torch.no_grad():
        a, _ = with_skip(x, [5, 5])
        b, _ = without(x, [5, 5])
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())  # no residual on the first layer
    assert not np.allclose(a[1].numpy(), b[1].numpy())


def test_gradients_flow_to_every_parameter():
    stack = BiLSTMStack(2, 4, 6, 4, 3.0, 3.0, use_skip_connections=True, dropout=0.1).train()
    out, _ = stack(torch.randn(2, 2, 5, 4), [5, 3])
    out[-1].sum().backward()
    for name, p in stack.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_input_gates_in_chunks_give_the_same_result(monkeypatch):
    import spacy_elmo.elmo.nn.lstm as lstm_module

    stack = seeded_stack(3)
    x = torch.randn(2, 3, 9, 4)
    lengths = [9, 6, 1]
    with torch.no_grad():
        whole, whole_finals = stack(x, lengths)
        # 2 directions x 3 rows x 24 gates: a budget of 150 floats allows one step at a time.
        monkeypatch.setattr(lstm_module, "CPU_INPUT_GATES_BUDGET", 150)
        monkeypatch.setattr(lstm_module, "MIN_INPUT_ROWS", 1)
        chunked, chunked_finals = stack(x, lengths)
    for a, b in zip(whole, chunked):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)
    np.testing.assert_allclose(whole_finals[-1][1].numpy(), chunked_finals[-1][1].numpy(), atol=1e-6)


def test_an_input_chunk_spans_enough_steps_for_its_least_rows(monkeypatch):
    """Where the budget allows one step of few rows, a chunk still spans MIN_INPUT_ROWS rows (a multiply
    of few rows runs far under the product rate): 3 rows, at least 6 rows, so two steps a multiply."""
    import spacy_elmo.elmo.nn.lstm as lstm_module

    stack = seeded_stack(1)
    layer = stack.layers[0]
    rows = []
    products = layer.input_products
    monkeypatch.setattr(
        layer, "input_products", lambda x, directions: rows.append(x.shape[1]) or products(x, directions)
    )
    monkeypatch.setattr(lstm_module, "CPU_INPUT_GATES_BUDGET", 150)
    monkeypatch.setattr(lstm_module, "MIN_INPUT_ROWS", 6)
    with torch.no_grad():
        stack(torch.randn(2, 3, 9, 4), [9, 9, 9])
    assert rows == [6, 6, 6, 6, 3]


def test_the_original_size_s_input_chunks_at_batch_32_and_1():
    """One step of 32 rows by the CPU's budget alone; eight with the least rows. Small cells keep the
    budget's chunk."""
    import spacy_elmo.elmo.nn.lstm as lstm_module

    assert lstm_module.input_chunk_steps(1 << 20, 2, 32, 16384) == 8
    assert lstm_module.input_chunk_steps(1 << 20, 2, 1, 16384) == 256
    assert lstm_module.input_chunk_steps(1 << 20, 2, 256, 2048) == 1


def test_input_gates_budget_is_small_on_the_cpu_only():
    import spacy_elmo.elmo.nn.lstm as lstm_module

    assert lstm_module.input_gates_budget(torch.device("cpu")) == lstm_module.CPU_INPUT_GATES_BUDGET
    assert lstm_module.input_gates_budget(torch.device("meta")) == lstm_module.ACCELERATOR_INPUT_GATES_BUDGET


def test_the_in_place_inference_step_is_bit_identical_to_the_autograd_step(monkeypatch):
    """Without autograd the step overwrites its gates in place and writes into one output; with the
    same (MKL) products it must give the very same bits, clips biting, rows finishing early."""
    from spacy_elmo.elmo.nn import kernels

    monkeypatch.setenv(kernels.KERNEL_VARIABLE, kernels.MKL)
    torch.manual_seed(4)
    stack = BiLSTMStack(2, 8, 12, 8, 0.5, 0.4, use_skip_connections=True)
    with torch.no_grad():
        for p in stack.parameters():
            p.normal_(0, 1.0)
    x = torch.randn(2, 4, 7, 8)
    lengths = [7, 7, 3, 0]
    state = [(torch.randn(2, 4, 8) * 0.1, torch.randn(2, 4, 12) * 0.1) for _ in range(2)]
    given = [(h.clone(), c.clone()) for h, c in state]
    with_grad, grad_finals = stack(x, lengths, state)
    assert with_grad[-1].requires_grad
    with torch.no_grad():
        in_place, finals = stack(x, lengths, state)
    for a, b in zip(with_grad, in_place):
        assert torch.equal(a.detach(), b)
    for (h1, c1), (h2, c2) in zip(grad_finals, finals):
        assert torch.equal(h1.detach(), h2) and torch.equal(c1.detach(), c2)
    assert (in_place[0][:, 2, 3:] == 0).all() and (in_place[0][:, 3] == 0).all()
    assert all(torch.equal(a, b) for pair, kept in zip(state, given) for a, b in zip(pair, kept)), "state untouched"
    assert (in_place[0].abs() == torch.tensor(0.4)).any(), "the test must exercise the projection clip"
