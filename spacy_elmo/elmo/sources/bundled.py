"""Models shipped inside the package, so that nothing is downloaded at run time.

The package holds what inference needs (options, weights, model card). A model's softmax and vocabulary,
needed only to check its perplexity, live outside the package in the repository's `models/NAME/`, so the
wheel stays small. A bundled name always means the package's copy, whether the package is a wheel or an
editable install of a checkout; `evaluate` takes the checkout's directory by its path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

from ..errors import InputError

MODELS_DIR = Path(__file__).parent / "models"
DEFAULT_MODEL = "gutenberg-web-2x512"


def bundled_models() -> Dict[str, Path]:
    """Name -> directory (inside the package) of every bundled model."""
    return {p.name: p for p in sorted(MODELS_DIR.iterdir()) if (p / "options.json").exists()}


def bundled_model_paths(name: str = DEFAULT_MODEL) -> Tuple[Path, Path]:
    """(options.json, weights.hdf5) of a bundled model."""
    models = bundled_models()
    if name not in models:
        raise InputError(
            f"no bundled ELMo model named {name!r}; bundled: {', '.join(models)}. "
            "For other weights give the paths to options.json and the .hdf5 file."
        )
    return models[name] / "options.json", models[name] / "weights.hdf5"
