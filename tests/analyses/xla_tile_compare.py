"""Read sets of XLA's expected symbolic tiles, of ours, and the true ones, by brute force.

Used by ``test_xla_symbolic_tiles.py`` and ``benchmarks/gpu_report.py``. XLA's tiles (offset,
size and stride maps of the tile sizes, and the constraints valid tile sizes satisfy) come from
``xla_symbolic_tile_tests.json`` (``SymbolicTile::FromIndexingMap`` cases); the true read set of
an output tile is every operand element the map reads from some output point of the tile (the
box ``[0, size)`` per dim, clipped to the output: padded tiles read nothing past the end); XLA's
is its box clipped to the operand (XLA masks the padding).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hlo_index.affine import IndexingMap, Interval, parse_map
from hlo_index.affine.evaluate import enumerate_map
from hlo_index.analyses.tiling import propagate
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_symbolic_tile_tests.json"
MAX_POINTS = 1 << 17
MAX_COMBOS = 40


@dataclass
class Comparison:
    case: str
    operand: int
    sizes: tuple[int, ...]
    output_dims: tuple[int, ...]
    xla: set | None  # None: XLA gives no tile
    ours: set | None  # None: we give no tile
    truth: set
    ours_clipped: bool = False  # our tile says some of its box is clipped (a bounding box)

    @property
    def xla_right(self) -> bool:
        return self.xla is not None and self.xla == self.truth

    @property
    def ours_right(self) -> bool:
        """Exact, or a bounding box that says it is one (its notes name the clipping)."""
        if self.ours is None:
            return False
        return self.ours == self.truth or (self.ours_clipped and self.ours >= self.truth)

    @property
    def padded(self) -> bool:
        return any(s > n for s, n in zip(self.sizes, self.output_dims))


def load_cases() -> list[dict]:
    if not DATA.exists():
        return []
    return [c for c in json.loads(DATA.read_text()) if c["suite"] == "SymbolicTile::FromIndexingMap"]


def _eval(text: str, env: dict) -> int:
    expr = text.replace("floordiv", "//").replace(" mod ", " % ")
    if not re.fullmatch(r"[\sd0-9s+\-*/%()]*", expr):
        raise ValueError(f"unexpected expression {text!r}")
    return int(eval(expr, {"__builtins__": {}}, env))  # noqa: S307  (test data, checked charset)


def _results(map_text: str) -> list[str]:
    body = map_text.split("->", 1)[1].strip()
    assert body[0] == "(" and body[-1] == ")"
    body = body[1:-1]
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _constraint_ok(tile: dict, env: dict) -> bool:
    text = tile.get("constraints")
    if not text:
        return True
    for disjunct in text.split("||"):
        ok = True
        for conjunct in disjunct.split("&&"):
            expr, _, bounds = conjunct.strip().rpartition(" in ")
            lo, hi = (int(v) for v in bounds.strip("[] ").split(","))
            try:
                value = _eval(expr, env)
            except ZeroDivisionError:
                ok = False
                break
            ok &= lo <= value <= hi
        if ok:
            return True
    return False


def xla_read_set(tile: dict, sizes, operand_dims) -> set | None:
    """XLA's box for tile sizes ``sizes`` (None when the sizes break its constraints or the
    offsets need runtime values)."""
    env = {f"d{i}": s for i, s in enumerate(sizes)}
    if "[" in tile["offset_map"].split("->")[0]:
        return None
    if not _constraint_ok(tile, env):
        return None
    offsets = [_eval(e, env) for e in _results(tile["offset_map"])]
    counts = [_eval(e, env) for e in _results(tile["size_map"])]
    strides = [_eval(e, env) for e in _results(tile["stride_map"])]
    axes = []
    for o, n, k, dim_size in zip(offsets, counts, strides, operand_dims):
        axes.append([o + j * k for j in range(n) if 0 <= o + j * k < dim_size])
    return set(itertools.product(*axes))


def true_read_set(m: IndexingMap, sizes) -> set | None:
    dims = [Interval(iv.lo, min(iv.hi, iv.lo + s - 1)) for iv, s in zip(m.dims, sizes)]
    points = np.prod([iv.size for iv in dims] + [iv.size for iv in m.range_vars], dtype=np.float64)
    if points > MAX_POINTS:
        return None
    restricted = IndexingMap(dims, m.range_vars, m.runtime_vars, m.results, m.constraints)
    _, results = enumerate_map(restricted, limit=MAX_POINTS)
    return set(map(tuple, results.tolist()))


def our_read_set(m: IndexingMap, output_dims, sizes, operand_dims) -> set | None:
    """Our tile's box at tile 0, clipped to the operand like XLA's (the tile notes say where
    tiles are clipped: a concatenate's or pad's operand covers part of the output)."""
    tile = propagate(m, output_dims, sizes)
    if not tile.is_tile:
        return None
    origin = (0,) * tile.offsets.num_dims
    starts = tile.offsets.read_set(origin)  # empty when tile 0 lies outside the tiles that read
    if not starts:
        return set()
    [start] = starts
    return set(
        itertools.product(
            *[
                [o + j * k for j in range(n) if 0 <= o + j * k < d]
                for o, n, k, d in zip(start, tile.sizes, tile.strides, operand_dims)
            ]
        )
    )


def _size_choices(dims) -> list[tuple[int, ...]]:
    per_dim = [sorted({s for s in (1, 2, 3, 8, max(n // 2, 1), n, n + 2) if 1 <= s <= n + 2}) for n in dims]
    combos = list(itertools.product(*per_dim))
    if len(combos) > MAX_COMBOS:
        step = len(combos) / MAX_COMBOS
        combos = [combos[int(i * step)] for i in range(MAX_COMBOS)] + [tuple(dims)]
    return list(dict.fromkeys(combos))


def case_maps(case: dict) -> list[tuple[int, IndexingMap, tuple, tuple]]:
    """(operand, map, output dims, operand dims) per expected tile of a case."""
    if case.get("input_indexing_map"):
        spec = case["input_indexing_map"]
        m = parse_map(spec["text"].replace(" / ", " floordiv "))
        dims = tuple(iv.size for iv in m.dims)
        return [(0, m, dims, None) for e in case["expect"] if e.get("outcome") in ("tile", "no_tile (std::nullopt)")]
    module = parse_module_text(case["hlo"])
    root = module.entry.root
    rows = {r.operand: r for r in output_to_input(root) if r.output == 0}
    out = []
    for e in case["expect"]:
        k = e.get("operand_index")
        if k is None or e.get("outcome") not in ("tile", "no_tile (std::nullopt)") or k not in rows:
            continue
        if not rows[k].maps:
            continue
        operand_dims = root.operands[k].shape.dims
        out.append((k, rows[k].maps[0], tuple(root.shape.dims), tuple(operand_dims)))
    return out


def compare_case(case: dict) -> list[Comparison]:
    results = []
    expects = {
        e.get("operand_index") or 0: e for e in case["expect"] if e.get("outcome") in ("tile", "no_tile (std::nullopt)")
    }
    for operand, m, out_dims, operand_dims in case_maps(case):
        if m.is_undefined or m.runtime_vars:
            continue
        expect = expects.get(operand)
        if expect is None:
            continue
        tile = expect.get("tile_affine_style") if expect["outcome"] == "tile" else None
        if operand_dims is None:
            operand_dims = tuple(1 << 40 for _ in m.results)
        for sizes in _size_choices(out_dims):
            truth = true_read_set(m, sizes)
            if truth is None:
                continue
            xla = xla_read_set(tile, sizes, operand_dims) if tile else None
            if tile and xla is None:
                continue  # sizes XLA's constraints exclude: nothing to compare
            ours = our_read_set(m, out_dims, sizes, operand_dims)
            clipped = ours is not None and any(
                n.startswith("tiles are clipped") for n in propagate(m, out_dims, sizes).notes
            )
            results.append(Comparison(case["name"], operand, tuple(sizes), tuple(out_dims), xla, ours, truth, clipped))
    return results
