"""One side of benchmarks/peers/run_peers.py: the original bilm-tf, in its own virtualenv.

    PYTHONPATH=CHECKOUT /path/to/peer-venv/bin/python worker_bilm_tf.py --options O --weights W
        --vocab V --text T --threads N

Runs under TensorFlow 2 through `tf.compat.v1`: bilm-tf's modules say `import tensorflow as tf`, so this
process puts `tensorflow.compat.v1` (graph mode) in `sys.modules` under that name before it imports them;
their files are used as checked out, unchanged. Then it serves the runner: each line read on stdin is a
batch size; it embeds the text's sentences in consecutive batches of that size, in file order, the LSTM
states reset to zero before each batch (as this package's stateless default), and writes one JSON line:
tokens, seconds. A line `save N PATH` writes the first N sentences' activations, `[N, layers, time, 2 *
projection]`, padded, to PATH (.npy). Stand-alone on purpose (numpy, h5py, TensorFlow only): it runs in
the peer's environment, not in this package's."""

import argparse
import json
import sys
import time
import warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--options", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--text", required=True, help="one sentence per line, tokens separated by spaces")
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # TF 2's deprecation notices for the v1 API bilm-tf is written in

    import numpy
    import tensorflow

    tf = tensorflow.compat.v1
    tf.get_logger().setLevel("ERROR")
    tf.disable_v2_behavior()
    sys.modules["tensorflow"] = tf
    from bilm import Batcher, BidirectionalLanguageModel

    sentences = [line.split() for line in open(args.text, encoding="utf8").read().splitlines() if line.strip()]
    options = json.load(open(args.options, encoding="utf8"))
    batcher = Batcher(args.vocab, options["char_cnn"]["max_characters_per_token"])
    ids = tf.placeholder("int32", shape=(None, None, options["char_cnn"]["max_characters_per_token"]))
    model = BidirectionalLanguageModel(args.options, args.weights)
    embeddings = model(ids)["lm_embeddings"]
    graph = model._graphs[ids]
    states = [v for d in ("forward", "backward") for layer in graph.lstm_init_states[d] for v in layer]
    reset = tf.variables_initializer(states)
    config = tf.ConfigProto(
        intra_op_parallelism_threads=args.threads, inter_op_parallelism_threads=1, allow_soft_placement=True
    )
    with tf.Session(config=config) as session:
        session.run(tf.global_variables_initializer())
        print(json.dumps({"ready": True, "tensorflow": tensorflow.__version__}), flush=True)
        for line in sys.stdin:
            if line.startswith("save "):  # the first sentences' activations, for the runner's comparison
                _, batch_size, path = line.split()
                session.run(reset)
                char_ids = batcher.batch_sentences(sentences[: int(batch_size)])
                numpy.save(path, session.run(embeddings, feed_dict={ids: char_ids}))
                print(json.dumps({"saved": path}), flush=True)
                continue
            batch_size = int(line)
            batches = [
                batcher.batch_sentences(sentences[i : i + batch_size]) for i in range(0, len(sentences), batch_size)
            ]
            start = time.perf_counter()
            for char_ids in batches:
                session.run(reset)
                session.run(embeddings, feed_dict={ids: char_ids})
            seconds = time.perf_counter() - start
            print(json.dumps({"tokens": sum(len(s) for s in sentences), "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
