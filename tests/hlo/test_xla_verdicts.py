"""hlo-index accepts what XLA's parser accepts and rejects what it rejects, on the line XLA names:
syntax probes and whole dumps, against the verdicts of jaxlib 0.11.2's parser recorded in
``tests/data/xla_verdicts/verdicts.json`` (made by ``probe.py`` there, on the probes it defines, the
field dumps of ``../shared/field`` and the jax-made dumps of ``tests/data/gpu``)."""

from __future__ import annotations

import json
import os

import pytest

from hlo_index.hlo import ParseError, parse_module_text, read_text
from tests.data.xla_verdicts.probe import PROBES

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "..", "data")
with open(os.path.join(DATA, "xla_verdicts", "verdicts.json")) as f:
    VERDICTS = json.load(f)
ROOTS = {"field": os.path.join(HERE, "..", "..", "..", "shared", "field"), "gpu": os.path.join(DATA, "gpu")}


def ours(text: str, source: str) -> dict:
    try:
        parse_module_text(text, source)
    except ParseError as e:
        return {"verdict": "reject", "line": e.diagnostic.line}
    return {"verdict": "accept"}


def _same(got: dict, xla: dict) -> None:
    assert got["verdict"] == xla["verdict"], (got, xla)
    if xla["verdict"] == "reject":
        assert got["line"] == xla["line"], (got, xla)


def test_the_verdicts_are_xlas_own():
    assert VERDICTS["jaxlib"] == "0.11.2"
    assert set(VERDICTS["probes"]) == set(PROBES)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    _same(ours(PROBES[name], f"{name}.hlo"), VERDICTS["probes"][name])


@pytest.mark.parametrize("key", sorted(VERDICTS["files"]))
def test_dump(key):
    top, _, rest = key.partition("/")
    path = os.path.join(ROOTS[top], rest)
    if not os.path.exists(path):
        pytest.skip(f"{path} is not here")
    _same(ours(read_text(path), path), VERDICTS["files"][key])
