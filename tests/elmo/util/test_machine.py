"""The machine a figure was measured on, named in one place for the benchmarks and the projects' scripts."""

import os

import torch

from spacy_elmo.elmo.util.machine import cpu_name, machine


def test_the_machine_line_names_the_cpu_its_cores_and_torch():
    name = cpu_name()
    assert name.strip() == name and name
    line = machine()
    assert name in line and f"{os.cpu_count()} cores" in line and torch.__version__ in line


def test_the_unit_flags_are_read_from_the_cpu_flags(monkeypatch):
    from spacy_elmo.elmo.util import machine as module

    assert isinstance(module.cpu_flags(), frozenset)
    monkeypatch.setattr(module, "cpu_flags", lambda: frozenset({"avx2", "avx512_vnni", "amx_bf16"}))
    assert module.unit_flags() == "amx_bf16 avx512_vnni"
    monkeypatch.setattr(module, "cpu_flags", lambda: frozenset({"avx2"}))
    assert module.unit_flags() == "none"
