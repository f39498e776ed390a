"""The fast modes, inexact copies of an exact biLM for prediction and frozen training: the copy and its
dispatch (fast_bilm.py), the LSTM layer they share (fast_layer.py), and each mode's products (int8.py,
bf16.py)."""
