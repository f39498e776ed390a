"""Which machine a figure was measured on: every printout and table names it, since figures differ
up to 4x between CPUs for the same code. Here, in the package, because the benchmarks and the spaCy
projects' scripts (run from their project folders, where `benchmarks` cannot be imported) all import
spacy_elmo."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import FrozenSet

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


def cpu_flags() -> FrozenSet[str]:
    """The CPU's feature flags as the kernel lists them (x86 `flags`, Arm `Features` in /proc/cpuinfo);
    empty where that file cannot be read (another OS)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


# The flags of the matrix units that the fast modes use: bf16 (AMX, AVX512 and Arm's), int8 (VNNI, AMX).
UNIT_FLAGS = ("amx_bf16", "avx512_bf16", "bf16", "amx_int8", "avx512_vnni", "avx_vnni")


def unit_flags() -> str:
    """Which of `UNIT_FLAGS` this CPU has, for a benchmark's header ("none" where it has none)."""
    flags = cpu_flags()
    return " ".join(flag for flag in UNIT_FLAGS if flag in flags) or "none"


def machine() -> str:
    """The CPU (model name) and threads the figures were measured with: figures differ up to 4x between
    CPUs for the same code, so every printout names it."""
    threads = torch.get_num_threads()
    return f"CPU: {cpu_name()}, {os.cpu_count()} cores, torch threads {threads}, torch {torch.__version__}"
