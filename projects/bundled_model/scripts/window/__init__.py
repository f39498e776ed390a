"""The default model's training plan in short GPU windows: `python -m scripts.window --help` from
projects/bundled_model."""
