"""Where models come from: the bundled models (bundled.py) and the one module that decides what a model
reference is and loads it (sources.py), for `load_bilm`, BiLM.v2, the `elmo` component, `dump` and
`evaluate`."""

from .bundled import DEFAULT_MODEL, MODELS_DIR, bundled_model_paths, bundled_models
from .sources import (
    ModelReference,
    command_line_reference,
    is_model_name,
    load_bilm,
    load_reference,
    model_reference,
    named_model_dir,
    reference_options,
    resolve_model,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODELS_DIR",
    "ModelReference",
    "bundled_model_paths",
    "bundled_models",
    "command_line_reference",
    "is_model_name",
    "load_bilm",
    "load_reference",
    "model_reference",
    "named_model_dir",
    "reference_options",
    "resolve_model",
]
