"""Models shipped inside the package, so that nothing is downloaded at run time.

The package holds what inference needs (options, weights, model card). A model's softmax and vocabulary,
needed only to check its perplexity, live outside the package in the repository's `models/NAME/`
(beside links to the same options and weights), so the wheel stays small; from a checkout that
directory is the one a name resolves to, which is what lets `evaluate NAME` find the softmax.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple, Union

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


def is_model_name(name: str) -> bool:
    """Whether `name` names a bundled model or a published model of the catalogue."""
    from ..hub import is_catalogue_name

    return name in bundled_models() or is_catalogue_name(name)


def named_model_dir(name: str) -> Path:
    """The directory of the model called `name`: a bundled model, else a published model of the catalogue
    that `python -m spacy_elmo download` has put in the cache (one name for `load_bilm`, `dump`, `evaluate`
    and the spaCy config). A catalogue model that is not downloaded fails with the download command."""
    bundled = bundled_models()
    if name in bundled:
        return bundled[name]
    from ..hub import downloaded_model_dir, is_catalogue_name  # the catalogue is read only for other names

    if is_catalogue_name(name):
        return downloaded_model_dir(name)
    raise ElmoError(
        f"no ELMo model {name!r}: not an existing file or directory, not a bundled model ({', '.join(bundled)}), "
        "and not in the catalogue of published models (`python -m spacy_elmo models` lists them)"
    )


def resolve_model(reference: Union[str, Path]) -> Path:
    """A model reference as a path: an existing directory or archive is itself, anything else a name
    (`named_model_dir`)."""
    path = Path(reference)
    return path if path.exists() else named_model_dir(str(reference))
