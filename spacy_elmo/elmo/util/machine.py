"""Which machine a figure was measured on: every printout and table names it, since figures differ
up to 4x between CPUs for the same code. Here, in the package, because the benchmarks and the spaCy
projects' scripts (run from their project folders, where `benchmarks` cannot be imported) all import
spacy_elmo."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import torch


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where it can be read)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """The CPU (model name) and threads the figures were measured with: figures differ up to 4x between
    CPUs for the same code, so every printout names it."""
    threads = torch.get_num_threads()
    return f"CPU: {cpu_name()}, {os.cpu_count()} cores, torch threads {threads}, torch {torch.__version__}"
