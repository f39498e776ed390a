"""Models shipped inside the package, so that nothing is downloaded at run time.

The package holds what inference needs (options, weights, model card). A model's softmax and vocabulary,
needed only to check its perplexity, live outside the package in the repository's `models/NAME/`
(beside links to the same options and weights), so the wheel stays small; from a checkout that
directory is the one a name resolves to, which is what lets `evaluate NAME` find the softmax.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

from ..errors import ElmoError

MODELS_DIR = Path(__file__).parent
CHECKOUT_MODELS_DIR = MODELS_DIR.parents[1] / "models"
DEFAULT_MODEL = "gutenberg-web-2x512"


def bundled_models() -> Dict[str, Path]:
    """Name -> directory of every bundled model; the checkout's full copy (with the softmax) where there is one."""
    models = {p.name: p for p in sorted(MODELS_DIR.iterdir()) if (p / "options.json").exists()}
    for name in models:
        full = CHECKOUT_MODELS_DIR / name
        if (full / "options.json").is_file() and (full / "weights.hdf5").is_file():
            models[name] = full
    return models


def bundled_model_paths(name: str = DEFAULT_MODEL) -> Tuple[Path, Path]:
    """(options.json, weights.hdf5) of a bundled model."""
    models = bundled_models()
    if name not in models:
        raise ElmoError(
            f"no bundled ELMo model named {name!r}; bundled: {', '.join(models)}. "
            "For other weights give the paths to options.json and the .hdf5 file."
        )
    return models[name] / "options.json", models[name] / "weights.hdf5"
