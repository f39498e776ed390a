"""The default model's training plan in GPU windows (models/gutenberg-web-2x512/README.md), run
from projects/bundled_model as its project.yml does.

python -m scripts.window pack --train "corpus/train/*.txt" --heldout corpus/eval/gutenberg.test.txt
python -m scripts.window send --carry-mib 64   # this window's shards into .window/train
python -m scripts.window run --out $OUT --budget-s 480 --max-file-mib 16   # the device call's one command
python -m scripts.window accept RETURNED --wsd-data DIR    # candidate, and default if better
python -m scripts.window promote --why "..."               # a held-back candidate, after the downstream table
python -m scripts.window begin models/NEW --set lstm.dim=1024   # a new size's line; then --candidate models/NEW
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional, Sequence

from spacy_elmo.elmo.pretrain.config import parse_changes
from spacy_elmo.elmo.pretrain.corpus import expand_paths

from .begin import begin_line
from .device import preset_file, run_window, summary
from .paths import CANDIDATE_DIR, DEFAULT_WEIGHTS, SEND_DIR, STATE_FILE
from .send import pack, room_for_shards, select
from .state import load_state


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.window", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--candidate", type=Path, default=CANDIDATE_DIR, help="The candidate's folder.")
    parser.add_argument("--send-dir", type=Path, default=SEND_DIR, help="The ignored folder a device call carries.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("pack", help="Pack tokenized training and held-out text into token-id shards.")
    p.add_argument("--train", nargs="+", required=True, help="Tokenized training text: files, folders or globs.")
    p.add_argument("--heldout", type=Path, required=True, help="Tokenized held-out text (the test books).")
    p.add_argument("--shard-tokens", type=int, default=1_000_000)
    s = commands.add_parser("send", help="Put the next window's shards into SEND_DIR/train.")
    limit = s.add_mutually_exclusive_group(required=True)
    limit.add_argument("--carry-mib", type=float, help="What the run may take along in all, the checkout included.")
    limit.add_argument("--max-mib", type=float, help="For the lexicon and the shards alone.")
    r = commands.add_parser("run", help="The window, on the device: train for the budget, write the candidate.")
    r.add_argument("--out", type=Path, required=True, help="Where the files to bring back go ($OUT).")
    r.add_argument("--budget-s", type=float, required=True, help="Seconds this command may take in all.")
    r.add_argument("--reserve-s", type=float, default=60, help="Of those, for evaluating and writing after training.")
    r.add_argument("--max-file-mib", type=float, default=None, help="Fail when a file brought back is larger.")
    r.add_argument("--device", default="cuda", help="cuda, or cpu to rehearse.")
    r.add_argument("--config", type=Path, default=None, help="A pretraining config (default: the small preset).")
    r.add_argument("--run-dir", type=Path, default=None, help="The pretraining run (default: a new temporary one).")
    a = commands.add_parser("accept", help="Locally: take the window's model as candidate; default if better.")
    a.add_argument("returned", type=Path, help="The folder the window's files came back to.")
    a.add_argument("--wsd-data", type=Path, default=None, help="projects/wsd's data; without: never the default.")
    a.add_argument("--default-weights", type=Path, default=DEFAULT_WEIGHTS)
    a.add_argument("--card", type=Path, default=None, help="The candidate's card (default: CANDIDATE/README.md).")
    m = commands.add_parser(
        "promote", help="Make the latest candidate that beat the default the default (after the downstream check)."
    )
    m.add_argument("--why", required=True, help="What was checked before (the downstream table's figures).")
    m.add_argument("--default-weights", type=Path, default=DEFAULT_WEIGHTS)
    m.add_argument("--card", type=Path, default=None, help="The candidate's card (default: CANDIDATE/README.md).")
    g = commands.add_parser("begin", help="A new size's line of windows from scratch, in a new candidate folder.")
    g.add_argument("folder", type=Path, help="The new line's candidate folder (give it as --candidate afterwards).")
    g.add_argument("--set", nargs="+", required=True, metavar="KEY=VALUE", help="lstm.dim=1024; values as JSON.")
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "pack":
        counts = pack(expand_paths(args.train), args.heldout, args.send_dir, args.shard_tokens)
        print(f"packed {counts['train']:,} training and {counts['heldout']:,} held-out tokens into {args.send_dir}")
    elif args.command == "send":
        if args.max_mib is not None:
            room = int(args.max_mib * 2**20)
        else:
            room = room_for_shards(args.send_dir, int(args.carry_mib * 2**20))
        chosen = select(load_state(args.candidate / STATE_FILE), args.send_dir, room)
        size = sum(p.stat().st_size for p in chosen)
        print(f"{len(chosen)} shards ({size:,} bytes) in {args.send_dir}: {', '.join(p.name for p in chosen)}")
    elif args.command == "run":
        args.out.mkdir(parents=True, exist_ok=True)
        record = run_window(
            args.candidate,
            args.send_dir,
            args.out,
            args.run_dir,
            args.config or preset_file("small"),
            args.budget_s,
            args.reserve_s,
            args.device,
            extra,
            None if args.max_file_mib is None else int(args.max_file_mib * 2**20),
        )
        print(summary(record, args.out))
    elif args.command == "begin":
        begin_line(args.candidate, args.folder, parse_changes(args.set))
        print(f"{args.folder}: a new line from {args.candidate.name}; its windows take --candidate {args.folder}")
    elif args.command == "promote":
        from .accept import promote_candidate  # here: it needs spaCy, which the device has not

        record = promote_candidate(
            args.candidate, args.default_weights, args.card or args.candidate / "README.md", args.why
        )
        print(json.dumps({k: record.get(k) for k in ("outcome", "figures", "promoted")}))
    else:
        from .accept import accept_window  # here: it needs spaCy, which the device has not

        record = accept_window(
            args.returned,
            args.candidate,
            args.default_weights,
            args.wsd_data,
            args.card or args.candidate / "README.md",
        )
        print(json.dumps({k: record.get(k) for k in ("outcome", "figures", "not_better")}))


if __name__ == "__main__":
    main()
