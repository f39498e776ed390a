"""Where models come from: the bundled models (bundled.py) and the one module that decides what a model
reference is and loads it (sources.py), for `load_bilm`, BiLM.v2, the `elmo` component, `dump` and
`evaluate`. Names are imported from their modules on first use: `bundled` alone (the CLI's defaults)
loads no torch."""

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

if TYPE_CHECKING:
    from .bundled import DEFAULT_MODEL, MODELS_DIR, bundled_model_paths, bundled_models
    from .sources import (
        ModelReference,
        ResolvedModel,
        is_model_name,
        load_bilm,
        model_reference,
        reference_options,
        reference_to,
        resolve,
    )

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        ".bundled": ["DEFAULT_MODEL", "MODELS_DIR", "bundled_model_paths", "bundled_models"],
        ".sources": [
            "ModelReference",
            "ResolvedModel",
            "is_model_name",
            "load_bilm",
            "model_reference",
            "reference_options",
            "reference_to",
            "resolve",
        ],
    },
)

__all__ = [
    "DEFAULT_MODEL",
    "MODELS_DIR",
    "ModelReference",
    "ResolvedModel",
    "bundled_model_paths",
    "bundled_models",
    "is_model_name",
    "load_bilm",
    "model_reference",
    "reference_options",
    "reference_to",
    "resolve",
]
