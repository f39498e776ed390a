"""A trained language model as files: the published pair (`options.json` + `weights.hdf5`, readable by
`load_bilm`, the `elmo` component and the original tools) and, beside it, what only further training and
perplexity need: the softmax (`softmax.hdf5`) and the vocabulary it scores (`vocab.txt`).

Every file is written atomically, so an export interrupted at any moment leaves the previous one whole.
The weights and the softmax carry the training step they are from (an HDF5 attribute), so a pair from
two steps (a kill between the two writes) is refused by `load_language_model` and repaired by
`pretrain --resume`, which exports again whenever the export is not the checkpoint's.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Optional, Tuple, Union

import h5py
import numpy as np
import torch

from ..formats import WeightsError, load_weights, save_weights
from ..formats.base import read_float_array
from ..nn.chars import N_CHARS_PREDICT
from ..nn.options import ElmoOptions
from ..util.io import HDF5_DAMAGE, atomic_output, open_hdf5
from .model import LanguageModel
from .vocab import Vocabulary

logger = logging.getLogger(__name__)

OPTIONS_FILE = "options.json"
WEIGHTS_FILE = "weights.hdf5"
SOFTMAX_FILE = "softmax.hdf5"
VOCAB_FILE = "vocab.txt"
STEP_ATTRIBUTE = "training_step"


def export_model(
    model: LanguageModel,
    vocab: Vocabulary,
    output_dir: Union[str, Path],
    options: Optional[ElmoOptions] = None,
    step: Optional[int] = None,
) -> None:
    """Write the four files of a trained model into `output_dir`. `options` (default: the model's)
    may carry the training keys the original wrote beside the architecture; `step`, the training step
    the weights are from, is stamped on the weights and the softmax."""
    output_dir = Path(output_dir)
    options = options or model.options
    options = replace(options, char_cnn=replace(options.char_cnn, n_characters=N_CHARS_PREDICT))
    with atomic_output(output_dir / OPTIONS_FILE) as tmp:
        tmp.write_text(json.dumps(options.to_dict(), indent=2) + "\n", encoding="utf8")
    vocab.to_file(output_dir / VOCAB_FILE)
    with atomic_output(output_dir / WEIGHTS_FILE) as tmp:
        save_weights(model.bilm, tmp)
        if step is not None:
            with h5py.File(tmp, "a") as f:
                f.attrs[STEP_ATTRIBUTE] = step
    write_softmax(model, output_dir / SOFTMAX_FILE, step)


def write_softmax(model: LanguageModel, path: Path, step: Optional[int], dtype: type = np.float32) -> None:
    """The softmax's rows and biases, stamped with `step`. float16 rows halve the file (for a run whose
    files must be small to travel); `load_softmax` reads either back as float32."""
    with atomic_output(path) as tmp, h5py.File(tmp, "w") as f:
        f.create_dataset("softmax/W", data=model.softmax.weight.detach().cpu().numpy().astype(dtype))
        f.create_dataset("softmax/b", data=model.softmax.bias.detach().cpu().numpy())
        if step is not None:
            f.attrs[STEP_ATTRIBUTE] = step


def _step_stamp(path: Path) -> Optional[int]:
    """The training step stamped on an exported file; None for a missing or unreadable file or none."""
    if not path.is_file():
        return None
    try:
        with h5py.File(path, "r") as f:
            value = f.attrs.get(STEP_ATTRIBUTE)
    except HDF5_DAMAGE:
        return None
    return int(value) if value is not None else None


def exported_step(output_dir: Union[str, Path]) -> Optional[int]:
    """The step of the complete export in `output_dir`, or None when a file is missing or the weights
    and the softmax are from different steps."""
    output_dir = Path(output_dir)
    if not all((output_dir / name).is_file() for name in (OPTIONS_FILE, VOCAB_FILE)):
        return None
    weights, softmax = _step_stamp(output_dir / WEIGHTS_FILE), _step_stamp(output_dir / SOFTMAX_FILE)
    return weights if weights == softmax else None


def _softmax_arrays(f: h5py.File, path: Union[str, Path], expected: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
    """softmax/W `expected` and softmax/b, each a dataset of the expected shape (checked before reading:
    the shape is what gets allocated) holding finite floats."""
    if "softmax/W" not in f or "softmax/b" not in f:
        raise WeightsError(f"{path} holds no softmax (datasets softmax/W and softmax/b)")
    for name, shape in (("softmax/W", expected), ("softmax/b", expected[:1])):
        if not isinstance(f[name], h5py.Dataset):
            kind = type(f[name]).__name__.lower()
            raise WeightsError(f"{path}: {name} is an HDF5 {kind}, not a dataset of weights; is it a softmax file?")
        if f[name].shape != shape:
            raise WeightsError(
                f"{path}: {name} has shape {f[name].shape}, expected {shape} for its vocabulary and options"
            )
    return read_float_array(f["softmax/W"], path, "softmax/W"), read_float_array(f["softmax/b"], path, "softmax/b")


def load_softmax(model: LanguageModel, path: Union[str, Path], vocab: Vocabulary, saved_vocab: Vocabulary) -> int:
    """Copy the rows of a saved softmax whose words are in `vocab`; returns how many were copied.
    Words new to `vocab` keep their fresh initialisation, so training can continue on new text with a
    different vocabulary."""
    with open_hdf5(path, "softmax", WeightsError) as f:
        try:
            weight, bias = _softmax_arrays(f, path, (len(saved_vocab), model.options.projection_dim))
        except WeightsError:
            raise
        except HDF5_DAMAGE as err:  # an object header or B-tree damaged where the file's links did not show it
            raise WeightsError(f"softmax file {path} cannot be read ({err}); it is damaged or truncated") from None
    pairs = [(i, saved_vocab.index[w]) for i, w in enumerate(vocab.words) if w in saved_vocab.index]
    new_rows = torch.tensor([i for i, _ in pairs], dtype=torch.long)
    old_rows = torch.tensor([j for _, j in pairs], dtype=torch.long)
    with torch.no_grad():
        model.softmax.weight[new_rows] = torch.from_numpy(weight)[old_rows]
        model.softmax.bias[new_rows] = torch.from_numpy(bias)[old_rows]
    return len(pairs)


def load_language_model(model_dir: Union[str, Path]) -> Tuple[LanguageModel, Vocabulary]:
    """A pretraining output directory as a LanguageModel (eval mode) and its vocabulary."""
    model_dir = Path(model_dir)
    files = (OPTIONS_FILE, WEIGHTS_FILE, SOFTMAX_FILE, VOCAB_FILE)
    missing = [name for name in files if not (model_dir / name).is_file()]
    scoring = [name for name in missing if name in (SOFTMAX_FILE, VOCAB_FILE)]
    if scoring:
        raise WeightsError(
            f"{model_dir} has no {' and no '.join(scoring)}: perplexity scores each next word with the language "
            "model's softmax over its vocabulary, which a biLM's files alone (an `export`, a published model) "
            "leave out. Evaluate the output directory of the `python -m spacy_elmo pretrain` run that trained "
            f"it, which holds {', '.join(files)}"
        )
    if missing:
        raise WeightsError(
            f"{model_dir} has no {missing[0]}; give the output directory of `python -m spacy_elmo pretrain`"
        )
    weights_step, softmax_step = _step_stamp(model_dir / WEIGHTS_FILE), _step_stamp(model_dir / SOFTMAX_FILE)
    if weights_step != softmax_step:
        raise WeightsError(
            f"{model_dir}: {WEIGHTS_FILE} is from training step {weights_step} but {SOFTMAX_FILE} from step "
            f"{softmax_step} (the export was interrupted); run the same `pretrain` command with --resume "
            "to export the checkpoint's model again"
        )
    options = ElmoOptions.from_file(model_dir / OPTIONS_FILE)
    vocab = Vocabulary.from_file(model_dir / VOCAB_FILE)
    model = LanguageModel(options, len(vocab))
    load_weights(model.bilm, model_dir / WEIGHTS_FILE)
    load_softmax(model, model_dir / SOFTMAX_FILE, vocab, vocab)
    model.eval()
    return model, vocab


def repair_export(model: LanguageModel, vocab: Vocabulary, output_dir: Path, options: ElmoOptions, step: int) -> None:
    """Export the checkpoint's model again when a kill came between writing the checkpoint and its
    export (or within the export): the exported files must be the checkpoint's, whatever the step."""
    exported = exported_step(output_dir)
    if exported != step:
        logger.info(
            "re-exporting the model of step %d (the export in %s was %s)",
            step,
            output_dir,
            f"from step {exported}" if exported is not None else "missing or incomplete",
        )
        export_model(model, vocab, output_dir, options, step=step)
