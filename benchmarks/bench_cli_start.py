"""Wall time of the command line's light commands in a fresh interpreter, beside `python -c pass`, and
whether torch was loaded (it must not be: elmo/formats/detect.py, elmo/sources/hub/).

    python -m benchmarks.bench_cli_start              # 10 rounds
    python -m benchmarks.bench_cli_start --rounds 3

The commands run in alternating rounds (each round runs every command once), so a loaded machine slows
them alike; the median of each is printed. The warm-up round writes the modules' bytecode (as `pip
install` does), also under PYTHONDONTWRITEBYTECODE, which would otherwise make every run compile the
package and its dependencies from source. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

from spacy_elmo.elmo.util.machine import cpu_name

REPORT = "import json, sys\nprint(json.dumps('torch' in sys.modules))"
RUN = (
    "import runpy, sys\nsys.argv = {argv!r}\n"
    "try:\n    runpy.run_module('spacy_elmo', run_name='__main__')\nexcept SystemExit:\n    pass\n"
)
COMMANDS = {
    "python -c pass": "pass",
    "python -m spacy_elmo models": RUN.format(argv=["spacy_elmo", "models"]) + REPORT,
    "python -m spacy_elmo --help": RUN.format(argv=["spacy_elmo", "--help"]) + REPORT,
    "python -m spacy_elmo download --help": RUN.format(argv=["spacy_elmo", "download", "--help"]) + REPORT,
}


def run_once(code: str, env: Optional[Dict[str, str]] = None) -> Tuple[float, bool]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    seconds = time.perf_counter() - start
    lines = result.stdout.strip().splitlines()
    torch_loaded = json.loads(lines[-1]) if code != "pass" else False
    return seconds, torch_loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    times: Dict[str, List[float]] = {name: [] for name in COMMANDS}
    torch_seen: Dict[str, bool] = {name: False for name in COMMANDS}
    writing_bytecode = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for code in COMMANDS.values():  # a warm-up round: the file cache and the bytecode
        run_once(code, env=writing_bytecode)
    for _ in range(args.rounds):
        for name, code in COMMANDS.items():
            seconds, loaded = run_once(code)
            times[name].append(seconds)
            torch_seen[name] |= loaded
    print(f"CPU: {cpu_name()}; {args.rounds} alternating rounds, median wall time")
    for name in COMMANDS:
        print(f"{name:40s} {statistics.median(times[name]):6.3f} s  torch loaded: {torch_seen[name]}")


if __name__ == "__main__":
    main()
