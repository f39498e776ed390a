"""`spacy-elmo.MixLogger.v1` (registered in architectures.py): spaCy's console logger plus, at each
evaluation, every head's layer mix; when training ends, the `elmo` components' training ends too.

The learned s_j (softmaxed) and gamma are the paper's per-task answer to "which biLM layers matter";
printing them next to the scores makes their movement visible during `spacy train`. A logger's
`finalize` is the one call spaCy's training loop makes when it returns (also on an error), so the
logger is where the frozen-layer cache's memory is released (`ElmoComponent.finish_training`).
"""

from __future__ import annotations

import sys
from typing import IO, Any, Callable, Dict, Optional, Tuple

from spacy.language import Language
from spacy.util import registry

from .component import ElmoComponent
from .layers.scalar_mix import mixes_in


def format_mixes(nlp: Language) -> str:
    lines = []
    for name, component in nlp.pipeline:
        # The `elmo` component's model carries its pooling, which no head learns.
        model = None if isinstance(component, ElmoComponent) else getattr(component, "model", None)
        for i, mix in enumerate(mixes_in(model) if model is not None else []):
            mix_weights = mix["weights"]
            if not isinstance(mix_weights, list):
                continue
            weights = " ".join(f"{w:.4f}" for w in mix_weights)
            label = name if i == 0 else f"{name}#{i}"
            lines.append(f"elmo mix {label}: s = [{weights}] gamma = {mix['gamma']:.4f}")
    return "\n".join(lines)


def build_mix_logger_v1(progress_bar: Optional[str] = None) -> Callable:
    """`spacy-elmo.MixLogger.v1`: spaCy's console logger, plus every head's layer mix at each evaluation;
    its `finalize` ends the training of every `elmo` component (`finish_training`).

    progress_bar (Optional[str]): as in `spacy.ConsoleLogger.v3`: null, "train" or "eval".
    RETURNS (Callable): the logger's setup function, as `[training.logger]` takes it.
    """
    console = registry.loggers.get("spacy.ConsoleLogger.v3")(progress_bar=progress_bar)

    def setup(nlp: Language, stdout: IO = sys.stdout, stderr: IO = sys.stderr) -> Tuple[Callable, Callable]:
        log_step, finalize = console(nlp, stdout, stderr)

        def log_step_with_mixes(info: Optional[Dict[str, Any]]) -> None:
            log_step(info)
            if info is not None:
                text = format_mixes(nlp)
                if text:
                    stdout.write(text + "\n")

        def finalize_and_finish_training() -> None:
            finalize()
            for _, component in nlp.pipeline:
                if isinstance(component, ElmoComponent):
                    component.finish_training()

        return log_step_with_mixes, finalize_and_finish_training

    return setup
