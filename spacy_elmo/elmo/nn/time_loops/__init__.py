"""How the LSTM stack steps through time: the step loop (the stack's own, ../lstm.py), the wavefront
(wavefront.py, its elementwise step compiled: wave_cell.py) and the wavefront captured as CUDA graphs
(captured.py); dispatch.py picks the one a call's `RunOptions.time_loop` names."""
