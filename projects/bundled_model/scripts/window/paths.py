"""Where a window's pieces live in a checkout: the candidate (the full language model the next window
continues from) in this project, the default in the package, and the ignored folder a device call carries."""

from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
REPO = PROJECT.parents[1]
CANDIDATE_DIR = PROJECT / "models" / "gutenberg-web-2x512"
DEFAULT_WEIGHTS = REPO / "spacy_elmo" / "elmo" / "sources" / "models" / "gutenberg-web-2x512" / "weights.hdf5"
SEND_DIR = PROJECT / ".window"  # ignored by git; carried to the device as projects/bundled_model/.window
TRAIN_DIR = "train"  # packed training shards, under SEND_DIR
HELDOUT_DIR = "heldout"  # the packed held-out text (the Gutenberg test books)
RECORD_FILE = "window.json"  # what a window brings back beside the model's files
STATE_FILE = "windows.json"  # in the candidate's folder: the default's figures and every window's
PLOT_FILE = "windows.png"
