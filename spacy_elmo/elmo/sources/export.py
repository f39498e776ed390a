"""A model as a folder to share (`python -m spacy_elmo export`): its options.json, its weights twice, as
`model.safetensors` (what this package and the Hugging Face Hub read without pickles) and as
`lm_weights.hdf5` (bilm-tf's and AllenNLP's layout, for the original tools), and a model card
(`README.md`) saying what the model is, where it came from and how to load it. The folder loads back by
path, and as `hf:ORG/REPO` once pushed (elmo/sources/hub/hf.push_folder); both weight files give the same model,
bit for bit.

Every file is written atomically into a new or empty folder, so an export cut short leaves no file
half-written under its name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from ..errors import InputError
from ..formats import describe, save_weights
from ..formats.bilm_safetensors import WEIGHTS_FILE, save_safetensors
from ..nn.bilm import BiLM
from ..util.io import atomic_output
from .resolver import ModelReference, resolve

OPTIONS_FILE = "options.json"
HDF5_FILE = "lm_weights.hdf5"
CARD_FILE = "README.md"


def export_model(reference: ModelReference, output: Path, repo_id: Optional[str] = None) -> Dict[str, Path]:
    """Write the model `reference` names into `output` (new or empty); its files by role. `repo_id`
    (ORG/REPO), where it will be pushed, goes into the card's loading lines."""
    check_export_folder(Path(output))
    return export_bilm(resolve(reference).load(), output, _source(reference), repo_id)


def export_bilm(bilm: BiLM, output: Path, source: str, repo_id: Optional[str] = None) -> Dict[str, Path]:
    """Write `bilm`, as it is now (a fine-tuned one taken out of a spaCy pipeline, say), into `output`
    (new or empty); `source` says in the card where it came from. Its files by role."""
    output = Path(output)
    check_export_folder(output)
    if describe(bilm):
        raise InputError(
            f"{source} is an ELMoForManyLangs model, whose vocabularies the bilm-tf layout has no "
            "place for; share its folder as it is (it loads by path, and as hf:ORG/REPO once uploaded)"
        )
    output.mkdir(parents=True, exist_ok=True)
    files = {"options": output / OPTIONS_FILE, "safetensors": output / WEIGHTS_FILE, "hdf5": output / HDF5_FILE}
    with atomic_output(files["options"]) as tmp:
        tmp.write_text(json.dumps(bilm.options.to_dict(), indent=2) + "\n", encoding="utf8")
    with atomic_output(files["safetensors"]) as tmp:
        save_safetensors(bilm, tmp)
    with atomic_output(files["hdf5"]) as tmp:
        save_weights(bilm, tmp)
    files["card"] = output / CARD_FILE
    with atomic_output(files["card"]) as tmp:
        tmp.write_text(model_card(bilm, source, output.name, repo_id), encoding="utf8")
    return files


def check_export_folder(output: Path) -> None:
    """Refuse a folder that holds files, before anything slow (loading a model or a pipeline) runs."""
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InputError(f"{output} is not a new or empty folder; give one, so no other model's files mix in")


def _source(reference: ModelReference) -> str:
    described = reference.describe()
    return ", ".join(described.values()) if described else "the default bundled model"


def model_card(bilm: BiLM, source: str, folder: str, repo_id: Optional[str] = None) -> str:
    """The README.md of an exported model: the Hub's metadata header, what the model is, its source, its
    sizes and options, and how spacy-elmo and the original tools load it."""
    options = bilm.options
    reference = f"hf:{repo_id}" if repo_id else "hf:ORG/REPO"
    lines = [
        "---",
        "library_name: spacy-elmo",
        "tags: [elmo, spacy, word-embeddings, contextual-embeddings]",
        "---",
        f"# {repo_id.split('/')[-1] if repo_id else folder}",
        "",
        "An ELMo biLM (Peters et al., 2018): a character CNN and a bidirectional LSTM language model whose "
        "layers give contextual word vectors, exported by spacy-elmo.",
        "",
        f"- **Source**: {source}",
        f"- **Sizes**: {options.lstm.n_layers} LSTM layers of {options.lstm.dim} cells per direction, projection "
        f"{options.projection_dim}, so {options.n_output_layers} layers of vectors {options.output_dim} wide",
        f"- **Files**: `{OPTIONS_FILE}`; the weights as `{WEIGHTS_FILE}` and, in bilm-tf's and AllenNLP's "
        f"layout, `{HDF5_FILE}` (the same values)",
        "",
        "## Load it",
        "",
        "```python",
        "import spacy",
        "from spacy_elmo import load_bilm",
        "",
        f'bilm = load_bilm("{reference}")',
        "nlp = spacy.blank('en')",
        f'nlp.add_pipe("elmo", config={{"model": {{"@architectures": "spacy-elmo.BiLM.v2", "name": "{reference}"}}}})',
        "```",
        "",
        f'A local copy loads by its path (`load_bilm("{folder}")`); AllenNLP and bilm-tf read `{OPTIONS_FILE}` '
        f"with `{HDF5_FILE}`.",
        "",
        "## Options",
        "",
        "```json",
        json.dumps(options.to_dict(), indent=2),
        "```",
        "",
    ]
    return "\n".join(lines)
