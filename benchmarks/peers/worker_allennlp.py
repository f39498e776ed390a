"""One side of benchmarks/peers/run_peers.py: the AllenNLP port of ELMo, in its own virtualenv.

    /path/to/peer-venv/bin/python worker_allennlp.py --options O --weights W --text T --threads N

allennlp 2.10.1 (its last release) needs torch < 1.13, so it runs under Python 3.9 (setup_peers.sh).
Serves the runner as worker_bilm_tf.py does (a batch size per stdin line, one JSON line back: tokens,
seconds; `save N PATH`), on the same text in the same consecutive batches, its LSTM states reset before
each batch. It runs `_ElmoBiLm`, the biLM alone (no scalar mix), the part both other sides compute.
Stand-alone on purpose: it runs in the peer's environment, not in this package's."""

import argparse
import json
import sys
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--options", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--text", required=True, help="one sentence per line, tokens separated by spaces")
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    import allennlp
    import numpy
    import torch
    from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids
    from allennlp.nn.util import remove_sentence_boundaries

    torch.set_num_threads(args.threads)
    model = _ElmoBiLm(args.options, args.weights, requires_grad=False).eval()
    with open(args.text, encoding="utf8") as f:
        sentences = [line.split() for line in f.read().splitlines() if line.strip()]

    def run(batch):
        model._elmo_lstm.reset_states()
        with torch.no_grad():
            return model(batch_to_ids(batch))

    print(json.dumps({"ready": True, "allennlp": allennlp.__version__, "torch": torch.__version__}), flush=True)
    for line in sys.stdin:
        if line.startswith("save "):
            _, batch_size, path = line.split()
            out = run(sentences[: int(batch_size)])
            layers = [remove_sentence_boundaries(a, out["mask"])[0] for a in out["activations"]]
            numpy.save(path, torch.stack(layers, dim=1).numpy())
            print(json.dumps({"saved": path}), flush=True)
            continue
        batch_size = int(line)
        start = time.perf_counter()
        for i in range(0, len(sentences), batch_size):
            run(sentences[i : i + batch_size])
        seconds = time.perf_counter() - start
        print(json.dumps({"tokens": sum(len(s) for s in sentences), "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
