"""Where models come from: the bundled models (bundled.py) and the one module that decides what a model
reference is and loads it (resolver.py), for `load_bilm`, BiLM.v3, the `elmo` component, `dump` and
`evaluate`. Names are imported from their modules on first use: `bundled` alone (the CLI's defaults)
loads no torch."""

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

if TYPE_CHECKING:
    from .bundled import DEFAULT_MODEL as DEFAULT_MODEL
    from .bundled import MODELS_DIR as MODELS_DIR
    from .bundled import bundled_model_paths as bundled_model_paths
    from .bundled import bundled_models as bundled_models
    from .resolver import ModelReference as ModelReference
    from .resolver import ResolvedModel as ResolvedModel
    from .resolver import is_model_name as is_model_name
    from .resolver import load_bilm as load_bilm
    from .resolver import model_reference as model_reference
    from .resolver import reference_options as reference_options
    from .resolver import reference_to as reference_to
    from .resolver import resolve as resolve

__getattr__, __dir__, __all__ = lazy_names(
    __name__,
    {
        ".bundled": ["DEFAULT_MODEL", "MODELS_DIR", "bundled_model_paths", "bundled_models"],
        ".resolver": [
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
