"""After a window, on the local machine: take its model as the candidate when it lowered the held-out
perplexity, measure it (WSD F1 through projects/wsd, the demo's four "bank" sentences at the vectors
the component writes by default), and make it the default only when it beats the default's recorded
figures on all of them.

The candidate's folder keeps a full language model (biLM, softmax, vocabulary), so the next window
continues from it whether or not it became the default; while it is the default, its weights.hdf5 is a
link to the package's, as in a fresh checkout.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from spacy_elmo.cli.demo import SENTENCES as BANK_SENTENCES
from spacy_elmo.cli.demo import same_sense_count
from spacy_elmo.elmo.nn.options import ElmoOptions
from spacy_elmo.elmo.pretrain.export import OPTIONS_FILE, SOFTMAX_FILE, VOCAB_FILE, WEIGHTS_FILE, load_language_model
from spacy_elmo.elmo.pretrain.start import architecture_differences

from .begin import LINE_KEY
from .device import copy_file
from .errors import WindowError
from .paths import RECORD_FILE, REPO, STATE_FILE
from .state import load_state, write_state

WSD_PROJECT = REPO / "projects" / "wsd"
# Why a new size's model that beats the default's figures stays a candidate (begin.py).
ANOTHER_SIZE = "another size than the bundled default's: bundle it under its own name, with its card"


def bank_sentences_right(options: Path, weights: Path) -> int:
    """How many of the demo's "bank" sentences have the other sentence of their own sense as the nearest
    (cosine of `token.vector`, the `elmo` component's default settings)."""
    import spacy

    nlp = spacy.blank("en")
    model = {"@architectures": "spacy-elmo.BiLM.v2", "options": str(options), "weights": str(weights)}
    nlp.add_pipe("elmo", config={"model": model})
    banks = [next(t for t in doc if t.text == "bank") for doc in nlp.pipe(BANK_SENTENCES)]
    vectors = np.stack([np.asarray(t.vector, dtype=np.float32) for t in banks])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return same_sense_count((unit @ unit.T).tolist())


def wsd_f1(options: Path, weights: Path, data: Path) -> float:
    """WSD F1 on ALL at the best view (layer or mean of layers): projects/wsd's own script."""
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        command = [sys.executable, "scripts/evaluate.py", str(results), str(Path(tmp) / "results.md")]
        command += [f"--data={data}", f"--options={options}", f"--weights={weights}"]
        done = subprocess.run(command, cwd=WSD_PROJECT, capture_output=True, text=True)
        if done.returncode != 0:
            raise WindowError(f"the WSD benchmark failed on {weights}:\n{done.stderr[-2000:]}")
        table = json.loads(results.read_text(encoding="utf8"))
    return max(table["f1"][view]["ALL"]["f1"] for view in table["views"])


def measure(model_dir: Path, perplexity: float, wsd_data: Optional[Path]) -> Dict[str, Any]:
    options, weights = model_dir / OPTIONS_FILE, model_dir / WEIGHTS_FILE
    return {
        "perplexity": perplexity,
        "wsd_f1": wsd_f1(options, weights, wsd_data) if wsd_data else None,
        "bank": bank_sentences_right(options, weights),
    }


def beats(candidate: Dict[str, Any], default: Dict[str, Any]) -> Tuple[bool, List[str]]:
    """Better held-out perplexity and WSD F1 than the default, and no fewer "bank" sentences right; with
    the reasons it is not. A candidate without a WSD figure never replaces the default."""
    reasons = []
    if not candidate["perplexity"] < default["perplexity"]:
        reasons.append(f"perplexity {candidate['perplexity']:.2f} is not below {default['perplexity']:.2f}")
    if candidate["wsd_f1"] is None:
        reasons.append("WSD F1 not measured (give --wsd-data)")
    elif not candidate["wsd_f1"] > default["wsd_f1"]:
        reasons.append(f"WSD F1 {candidate['wsd_f1']:.1f} is not above {default['wsd_f1']:.1f}")
    if candidate["bank"] < default["bank"]:
        reasons.append(f"{candidate['bank']} bank sentences right, fewer than {default['bank']}")
    return not reasons, reasons


def link(path: Path, target: Path) -> None:
    """`path` becomes a relative link to `target`, replacing what was there in one rename."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.link")
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(os.path.relpath(target, path.parent))
    os.replace(temporary, path)


def install_candidate(returned: Path, candidate: Path) -> None:
    differences = architecture_differences(
        ElmoOptions.from_file(returned / OPTIONS_FILE), ElmoOptions.from_file(candidate / OPTIONS_FILE)
    )
    if differences:
        raise WindowError(f"{returned} holds another architecture than {candidate}: {'; '.join(differences)}")
    weights = candidate / WEIGHTS_FILE
    if weights.is_symlink():
        weights.unlink()
    for name in (WEIGHTS_FILE, SOFTMAX_FILE, VOCAB_FILE):
        copy_file(returned / name, candidate / name)


def accept_window(
    returned: Path, candidate: Path, default_weights: Path, wsd_data: Optional[Path], card: Path
) -> Dict[str, Any]:
    """Record the window brought back in `returned`; returns its record with `outcome`: "dropped" (its
    perplexity did not fall: the candidate stays), "candidate" or "default"."""
    record = json.loads((returned / RECORD_FILE).read_text(encoding="utf8"))
    if "end" not in record:
        raise WindowError(
            f"{returned / RECORD_FILE} has no end perplexity (the command was cut short); measure it with "
            f"python -m spacy_elmo evaluate {returned} HELDOUT, and put it there as the record's 'end'"
        )
    load_language_model(returned)  # the four files are whole and from one step
    state_path = candidate / STATE_FILE
    state = load_state(state_path)
    if any(w.get("id") == record.get("id") for w in state["windows"]):
        raise WindowError(f"the window in {returned} was accepted already ({state_path} records it)")
    record["date"] = datetime.date.today().isoformat()
    record["outcome"] = "dropped"
    if record["start"] is None or record["end"]["average"] < record["start"]["average"]:
        install_candidate(returned, candidate)
        record["figures"] = measure(candidate, record["end"]["average"], wsd_data)
        better, record["not_better"] = beats(record["figures"], state["default"])
        record["outcome"] = "candidate"
        if better and LINE_KEY in state:
            better = False
            record["not_better"].append(ANOTHER_SIZE)
        if better:
            make_default(candidate, default_weights, state, record, len(state["windows"]) + 1)
    state["windows"].append({k: v for k, v in record.items() if k != "extra"})
    write_state(candidate, state, card)
    return record


def make_default(
    candidate: Path, default_weights: Path, state: Dict[str, Any], record: Dict[str, Any], number: int
) -> None:
    """The candidate's weights become the package's, the candidate's file a link to them; window
    `number` (its `record`) the source of the default's figures."""
    copy_file(candidate / WEIGHTS_FILE, default_weights)
    link(candidate / WEIGHTS_FILE, default_weights)
    record["outcome"] = "default"
    state["default"] = {**record["figures"], "source": f"window {number}"}


def promote_candidate(candidate: Path, default_weights: Path, card: Path, why: str) -> Dict[str, Any]:
    """Make the latest window that passed `beats` but was kept a candidate (its outcome "candidate",
    nothing in `not_better`: held back until the README's downstream table was measured for it) the
    default; `why` (that measurement) goes into its record. Returns the record."""
    state_path = candidate / STATE_FILE
    state = load_state(state_path)
    windows = state["windows"]
    if not windows or windows[-1]["outcome"] != "candidate" or windows[-1].get("not_better") != []:
        raise WindowError(
            f"{state_path}: the latest window is not a candidate that beat the default; nothing to promote "
            "(a window that beat it became the default when accepted)"
        )
    record = windows[-1]
    make_default(candidate, default_weights, state, record, len(windows))
    record["promoted"] = {"date": datetime.date.today().isoformat(), "why": why}
    write_state(candidate, state, card)
    return record
