"""Module cost totals against XLA:CPU's own ``HloCostAnalysis`` (jaxlib's
``hlo_module_cost_analysis``) on every after-optimizations module of ``../shared/corpus``: flops and
transcendentals equal, bytes accessed within 0.1%. Runs only where jaxlib is importable."""

from __future__ import annotations

import glob
import gzip
from pathlib import Path

import pytest

from hlo_index.analyses.cost.flops import CostOptions
from hlo_index.analyses.cost.hlo_cost import module_totals
from hlo_index.hlo import parse_module_text

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
MODULES = sorted(glob.glob(str(CORPUS / "**" / "*.after_optimizations.hlo.txt*"), recursive=True))


def _text(path: str) -> str:
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    return Path(path).read_text()


@pytest.fixture(scope="module")
def xla_cost():
    jax = pytest.importorskip("jax")
    from jax._src.lib import xla_client

    parser = (
        getattr(getattr(xla_client, "hlo", None), "hlo_module_from_text", None) or xla_client._xla.hlo_module_from_text
    )
    client = jax.devices("cpu")[0].client

    def cost(text: str) -> dict:
        return xla_client._xla.hlo_module_cost_analysis(client, parser(text))

    return cost


@pytest.mark.skipif(not MODULES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("path", MODULES, ids=lambda p: Path(p).name.split(".")[0])
def test_module_totals_match_xla_cpu(path: str, xla_cost) -> None:
    text = _text(path)
    xla = xla_cost(text)
    ours = module_totals(parse_module_text(text, path), CostOptions(gpu=False))
    assert ours.flops == xla.get("flops", 0.0)
    assert ours.transcendentals == xla.get("transcendentals", 0.0)
    want = xla.get("bytes accessed", 0.0)
    assert abs(ours.bytes_accessed - want) <= 1e-3 * max(abs(want), 1.0)
