"""The machine a figure was measured on, named in one place for the benchmarks and the projects' scripts."""

import os

import torch

from spacy_elmo.elmo.util.machine import cpu_name, machine


def test_the_machine_line_names_the_cpu_its_cores_and_torch():
    name = cpu_name()
    assert name.strip() == name and name
    line = machine()
    assert name in line and f"{os.cpu_count()} cores" in line and torch.__version__ in line
