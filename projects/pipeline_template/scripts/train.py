"""`spacy train`, then the last step scored on dev like any checkpoint, so that `model-best` is never a
step the run went past untested.

spaCy scores the pipeline at step 0 and every `eval_frequency` steps after it, and keeps the best of
those as `model-best`. A run that stops between two scorings (a `max_steps` below `eval_frequency`, or
not a multiple of it; an early stop by `patience` is always on a scoring) leaves its last steps unscored:
with `max_steps` below `eval_frequency`, `model-best` is the untrained step-0 pipeline, and `package`
would ship it. Here the run's `model-last` is scored on the same dev corpus with the same score weights,
and becomes `model-best` when it scores at least as well.

    python -m scripts.train configs/config.cfg training --gpu-id -1 --paths.train ... --training.max_steps 2000
"""

import json
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import spacy
from spacy.cli._util import parse_config_overrides
from spacy.cli.train import train
from spacy.schemas import ConfigSchemaTraining
from spacy.training.loop import create_evaluation_callback
from spacy.util import registry, resolve_dot_names

BEST, LAST = "model-best", "model-last"


def weighted_score(performance: Dict[str, Any], weights: Dict[str, Any]) -> float:
    """spaCy's main score of a checkpoint, from the metrics its meta.json records."""
    return sum(float(performance.get(name) or 0.0) * weight for name, weight in weights.items() if weight)


def score_on_dev(pipeline: Path) -> Tuple[float, Dict[str, float], Dict[str, Any]]:
    """The pipeline's main score on its own config's dev corpus, its metrics and its score weights."""
    nlp = spacy.load(pipeline)
    config = nlp.config.interpolate()
    training = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    (dev_corpus,) = resolve_dot_names(config, [training["dev_corpus"]])
    weights = training["score_weights"]
    score, metrics = create_evaluation_callback(nlp, dev_corpus, weights)()
    return score, metrics, weights


def keep_the_better(output: Path) -> str:
    """Make `model-last` the `model-best` when it scores at least as well on dev; says which was kept.
    The replacement is copied beside its final name and renamed in, so an interruption leaves a whole
    `model-best` (the old or the new)."""
    best, last = output / BEST, output / LAST
    last_score, metrics, weights = score_on_dev(last)
    meta = json.loads((best / "meta.json").read_text(encoding="utf8"))
    best_score = weighted_score(meta.get("performance", {}), weights)
    if last_score < best_score:
        return f"model-best kept: it scored {best_score:.4f} on dev, the last step {last_score:.4f}"
    staged, retired = output / f".{BEST}.new", output / f".{BEST}.old"
    for leftover in (staged, retired):
        shutil.rmtree(leftover, ignore_errors=True)
    shutil.copytree(last, staged)
    last_meta_path = staged / "meta.json"
    last_meta = json.loads(last_meta_path.read_text(encoding="utf8"))
    last_meta["performance"] = {name: metrics.get(name, 0.0) for name in weights if name is not None}
    last_meta_path.write_text(json.dumps(last_meta, indent=2), encoding="utf8")
    best.rename(retired)
    staged.rename(best)
    shutil.rmtree(retired)
    return f"model-best is the last step: it scored {last_score:.4f} on dev, the best checkpoint {best_score:.4f}"


def main(argv: List[str]) -> int:
    config, output, *rest = argv
    gpu_id = -1
    if "--gpu-id" in rest:
        at = rest.index("--gpu-id")
        gpu_id = int(rest[at + 1])
        del rest[at : at + 2]
    train(Path(config), Path(output), use_gpu=gpu_id, overrides=parse_config_overrides(rest))
    print(keep_the_better(Path(output)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
