"""Exit statuses for signals, the same in every command: a command ended by a signal exits with 128 plus
its number (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a process the signal killed, so that
`pretrain ... && evaluate ...` stops there. typer already turns Ctrl-C's KeyboardInterrupt into 130;
SIGTERM is made an exit that unwinds (open files closed, half-written outputs removed) instead of an
instant death. `pretrain` catches both to checkpoint first (elmo/pretrain/progress.StopRequest), then exits
with the same status."""

import signal
import threading
from typing import Any


def exit_status(signum: int) -> int:
    """The exit status of a command ended by signal `signum`."""
    return 128 + signum


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(exit_status(signum))


def handle_sigterm() -> None:
    """Make SIGTERM exit with status 143 through the usual unwinding, unless someone set another handler."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
