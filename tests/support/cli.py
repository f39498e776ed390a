"""The one way tests drive a command line: `python -m MODULE ARGS` in a fresh process, as a user runs it,
so that exit codes, stderr and the absence of tracebacks are what a user would see."""

import subprocess
import sys
from pathlib import Path
from typing import Mapping, Optional, Union

Arg = Union[str, Path, int, float]


def run_cli(
    *args: Arg,
    module: str = "spacy_elmo",
    timeout: float = 300,
    cwd: Optional[Path] = None,
    env: Optional[Mapping[str, str]] = None,
) -> subprocess.CompletedProcess:
    """Run `python -m module *args` with this interpreter; text output captured, never raises on failure."""
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=None if env is None else dict(env),
    )


def assert_clear_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """The command failed with a message (every fragment in stderr) and no traceback."""
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr[-2000:]
