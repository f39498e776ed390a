#!/bin/sh
# The peers' virtualenvs for run_peers.py, from the package registry only (no peer code is fetched or
# changed here; see README.md for the checkouts and their pinned commits).
#
#   benchmarks/peers/setup_peers.sh DIR        # makes DIR/bilm-tf and DIR/allennlp
#
# PYTHON (default python3.11) builds the bilm-tf one: TensorFlow 2.15.1 CPU, under which bilm-tf runs
# through tf.compat.v1 (worker_bilm_tf.py). PYTHON_ALLENNLP (default python3.9) builds the AllenNLP
# one: allennlp 2.10.1 needs torch < 1.13, which has no wheel for Python 3.11.
set -eu
DIR=${1:?usage: setup_peers.sh DIR}
PYTHON=${PYTHON:-python3.11}
PYTHON_ALLENNLP=${PYTHON_ALLENNLP:-python3.9}
mkdir -p "$DIR"
"$PYTHON" -m venv "$DIR/bilm-tf"
"$DIR/bilm-tf/bin/pip" install "tensorflow-cpu==2.15.1" "h5py<3.17"
# Run, not looked up: a pyenv shim is found for a version it then refuses to run.
if "$PYTHON_ALLENNLP" -c "" >/dev/null 2>&1; then
    "$PYTHON_ALLENNLP" -m venv "$DIR/allennlp"
    "$DIR/allennlp/bin/pip" install "allennlp==2.10.1" "numpy<2"  # its spaCy/thinc wheels predate numpy 2
else
    echo "no $PYTHON_ALLENNLP that runs (with pyenv: PYTHON_ALLENNLP=\$(pyenv root)/versions/3.9.X/bin/python3.9):" \
        "the AllenNLP peer is skipped (allennlp 2.10.1 cannot install under Python 3.11)" >&2
fi
