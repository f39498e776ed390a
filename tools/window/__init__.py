"""The default model's training plan in short GPU windows: `python -m tools.window --help`."""
