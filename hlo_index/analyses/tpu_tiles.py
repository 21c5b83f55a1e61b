"""TPU target: how an operand sits in a TPU's tiled memory, and how a fusion reads it.

Derived from XLA's tiled-layout definition alone (XLA's "Tiled layout" documentation, whose
pad-reshape-transpose description ``hlo_index.layout`` runs), and so exact:

* ``laid_out_bytes``: the operand's bytes in memory, every tile padded to full size
  (``physical_element_count * bits / 8``); ``padding_share`` is the part no element reaches;
* ``tiles``: the first-level tiles of the layout (``T(8,128)`` of ``T(8,128)(2,1)``); each is
  ``tile_bytes`` of memory, one contiguous block when later tiles only rearrange its inside;
* ``tiles_read``: the first-level tiles holding an element the maps read (runtime values
  unioned), ``bytes_used`` those elements' bytes, ``tile_utilization`` their share of the
  tiles' bytes.

Assumed about TPU hardware (jax's Pallas TPU documentation, "Writing TPU kernels with Pallas"):
memory is moved to and from vector registers of 8 sublanes by 128 lanes of 32-bit words, and
narrower types are packed several to a word along the sublane direction (which is what XLA's
``(2,1)`` and ``(4,1)`` sub-tiles lay out). So within a tile, physical element ``o`` lives in
32-bit word ``o * bits // 32``, its lane is that word mod 128 and its row of lanes (sublane) the
word div 128. ``minor_walk`` steps the output's minor dimension by one and says where the next
element read lies: along the lanes (the next words of one row), along the sublanes (the same
lane of the next row, or the other half of a packed word), in another tile, nowhere new
(invariant), or elsewhere in the tile (mixed).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil, prod
from typing import Any

import numpy as np

from ..affine import IndexingMap
from ..affine.evaluate import distinct_sorted, evaluate_expr
from ..affine.expr import DIM, RANGE, RUNTIME
from ..hlo.model import Shape
from .physical_order import minor_nontrivial
from .utilization import read_mask, storage_bits

LANES = 128  # lanes of a vector register (Pallas TPU docs)
WORD_BITS = 32  # a lane holds one 32-bit word
WALK_EXHAUSTIVE = 1 << 14  # domain points stepped one by one up to this many
WALK_SAMPLES = 1 << 12  # seeded points stepped beyond it
WALKS = ("lanes", "sublanes", "invariant", "across tiles", "mixed")  # ties go to the earlier


def tpu_operand(maps: Sequence[IndexingMap], operand_shape: Shape, output_shape: Shape, seed: int = 0) -> dict:
    """The ``tpu`` figure of one operand read through ``maps``, with a one-line ``summary``."""
    from ..layout import LayoutError, layout_plan

    minor = minor_nontrivial(output_shape) if not output_shape.is_tuple else None
    bits = storage_bits(operand_shape)
    total = operand_shape.num_elements
    figure: dict[str, Any] = {"target": "tpu"}
    try:
        plan = layout_plan(operand_shape)
    except LayoutError as err:
        return _unknown(figure, minor, f"operand layout is invalid: {err}")
    tiles = _tile_count(plan)
    physical = plan.physical_element_count
    laid_out = ceil(physical * bits / 8)
    logical = ceil(total * bits / 8)
    figure.update(
        tile=_tile_text(operand_shape),
        tiles=tiles,
        tile_bytes=laid_out // tiles if tiles else None,
        logical_bytes=logical,
        laid_out_bytes=laid_out,
        padding_bytes=laid_out - logical,
        padding_share=(laid_out - logical) / laid_out if laid_out else 0.0,
    )
    undefined = next((m for m in maps if m.is_undefined), None)
    if undefined is not None:
        return _unknown(figure, minor, f"unknown map: {undefined.undefined_reason}")
    live = [m for m in maps if not m.is_known_empty]
    _read_tiles(figure, live, operand_shape, bits, seed)
    steps: dict
    if not live:
        walk, steps, reason = "unread", {}, "the output reads nothing of this operand"
    elif minor is None:
        walk, steps, reason = "invariant", {}, "the output has one element: there is no minor dimension to walk"
    else:
        walk, steps, reason = _minor_walk(live, operand_shape, minor, bits, seed)
    figure.update(minor_output_dim=minor, minor_walk=walk, verdict=walk, steps=steps, reason=reason)
    figure["summary"] = _summary(figure)
    return figure


def _unknown(figure: dict, minor: int | None, reason: str) -> dict:
    figure.update(
        minor_output_dim=minor, minor_walk="unknown", verdict="unknown", steps={}, reason=reason, summary=reason
    )
    return figure


def _tile_count(plan) -> int | None:
    if not plan.steps:
        return None
    first = plan.steps[0]
    return prod(first.out_dims[: first.untouched + len(first.counts)])


def _tile_text(shape: Shape) -> str | None:
    tiles = shape.layout.tiles if shape.layout is not None else ()
    if not tiles:
        return None
    return "".join("(" + ",".join("*" if d < 0 else str(d) for d in t.dims) + ")" for t in tiles)


def _read_tiles(figure: dict, live: list, shape: Shape, bits: int, seed: int) -> None:
    """``tiles_read``, ``bytes_used`` and ``tile_utilization`` (None when the read set is not
    known element by element: sampled, or beyond the marking budget)."""
    from ..layout import layout_cells

    figure.update(tiles_read=None, bytes_used=None, tile_utilization=None)
    if not live:
        figure.update(tiles_read=0, bytes_used=0)
        return
    mask = read_mask(live, shape.dims, seed=seed)
    if mask is None:
        return
    read = int(np.count_nonzero(mask))
    used = ceil(read * bits / 8)
    figure["bytes_used"] = used
    if figure["tiles"] is None:
        return
    ids = layout_cells(shape, _tile_representatives(shape, mask, read))[1][0]
    tiles_read = int(distinct_sorted(np.asarray(ids).reshape(-1)).size)
    figure["tiles_read"] = tiles_read
    figure["tile_utilization"] = used / (tiles_read * figure["tile_bytes"]) if tiles_read else None


def _tile_representatives(shape: Shape, mask: np.ndarray, read: int) -> np.ndarray:
    """Logical indices (``[n, rank]``) that fall in exactly the first-level tiles holding a read
    element. Where the first tile splits every dim on its own (no ``*``), a tile's elements are
    one box of the logical index space: the mask is reduced box by box and one corner of each
    touched box stands for it (a big operand's reads would otherwise all go through the layout
    pipeline, a thousand per tile). Else every read index."""
    if not shape.rank:
        return np.zeros((read, 0), dtype=np.int64)
    box = _tile_box(shape)
    if box is None:
        return np.argwhere(mask)
    padded = [-(-d // b) * b for d, b in zip(shape.dims, box)]
    if padded != list(shape.dims):
        grown = np.zeros(padded, dtype=bool)
        grown[tuple(slice(0, d) for d in shape.dims)] = mask
        mask = grown
    split = [n for d, b in zip(padded, box) for n in (d // b, b)]
    touched = mask.reshape(split).any(axis=tuple(range(1, 2 * shape.rank, 2)))
    return np.argwhere(touched) * np.asarray(box, dtype=np.int64)


def _tile_box(shape: Shape) -> list[int] | None:
    """Per logical dim, the extent of a first-level tile along it; None where the tile folds
    dims together (``*``), so that its elements are no box."""
    from ..layout import layout_plan

    plan = layout_plan(shape)
    step = plan.steps[0]
    if any(len(group) != 1 for group in step.groups):
        return None
    box = [1] * shape.rank
    for physical, logical in enumerate(plan.major_to_minor):
        position = physical + step.lead_ones - step.untouched
        if position >= 0:
            box[logical] = step.tile[position]
    return box


def _minor_walk(live: list, shape: Shape, minor: int, bits: int, seed: int) -> tuple[str, dict, str]:
    from ..layout import layout_cells

    counts = dict.fromkeys(WALKS, 0)
    tiled = shape.layout is not None and bool(shape.layout.tiles)
    for m in live:
        pairs = _steps(m, minor, seed)
        if pairs is None:
            continue
        first, second = pairs
        if shape.rank == 0:
            counts["invariant"] += len(first)
            continue
        same = np.all(first == second, axis=1)
        offsets_a, ids_a = layout_cells(shape, first)
        offsets_b, ids_b = layout_cells(shape, second)
        tile_a = ids_a[0] if ids_a else np.zeros(len(first), dtype=np.int64)
        tile_b = ids_b[0] if ids_b else np.zeros(len(first), dtype=np.int64)
        word_a, word_b = offsets_a * bits // WORD_BITS, offsets_b * bits // WORD_BITS
        across = ~same & (tile_a != tile_b)
        inside = ~same & ~across
        packed = inside & (word_a == word_b)
        lanes = inside & ~packed & (word_a // LANES == word_b // LANES)
        sublanes = inside & (packed | (~lanes & (word_a % LANES == word_b % LANES)))
        counts["invariant"] += int(same.sum())
        counts["across tiles"] += int(across.sum())
        counts["lanes"] += int(lanes.sum())
        counts["sublanes"] += int(sublanes.sum())
        counts["mixed"] += int((inside & ~lanes & ~sublanes).sum())
    steps = {k: v for k, v in counts.items() if v}
    n = sum(steps.values())
    if not n:
        return "unread", {}, f"no two consecutive elements along output dim {minor} are both read"
    walk = max(WALKS, key=lambda k: (counts[k], -WALKS.index(k)))
    return walk, steps, _reason(walk, steps, n, minor, tiled)


def _steps(m: IndexingMap, minor: int, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Operand indices read at domain points ``p`` and ``p + 1`` along output dim ``minor``, for
    every point where both are feasible: all points of a small domain, else a seeded sample.
    Runtime variables take their lower bound."""
    if minor >= m.num_dims or m.dims[minor].size < 2:
        return None
    boxes = [(b.lo, b.hi) for b in m.dims] + [(b.lo, b.hi) for b in m.range_vars]
    boxes[minor] = (boxes[minor][0], boxes[minor][1] - 1)
    sizes = [hi - lo + 1 for lo, hi in boxes]
    if any(s <= 0 for s in sizes):
        return None
    points = prod(sizes)
    if points <= WALK_EXHAUSTIVE:
        grid = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1)
        columns = [grid[i] + lo for i, (lo, _) in enumerate(boxes)]
    else:
        rng = np.random.default_rng(seed)
        columns = [rng.integers(lo, hi + 1, size=WALK_SAMPLES) for lo, hi in boxes]
    n = len(columns[0]) if columns else 1
    rows = []
    keep = np.ones(n, dtype=bool)
    for shift in (0, 1):
        env: dict = {}
        for i in range(m.num_dims):
            env[(DIM, i)] = columns[i] + (shift if i == minor else 0)
        for i in range(len(m.range_vars)):
            env[(RANGE, i)] = columns[m.num_dims + i]
        for i, rv in enumerate(m.runtime_vars):
            env[(RUNTIME, i)] = rv.interval.lo
        memo: dict = {}
        for e, b in m.constraints:
            value = np.broadcast_to(evaluate_expr(e, env, memo), (n,))
            keep &= (value >= b.lo) & (value <= b.hi)
        results = [np.broadcast_to(evaluate_expr(e, env, memo), (n,)) for e in m.results]
        rows.append(np.stack(results, axis=1) if results else np.zeros((n, 0), dtype=np.int64))
    return rows[0][keep].astype(np.int64), rows[1][keep].astype(np.int64)


def _reason(walk: str, steps: dict, n: int, minor: int, tiled: bool) -> str:
    text = {
        "lanes": "consecutive elements are neighbouring 32-bit words of one tile row: lanes",
        "sublanes": "consecutive elements are one lane of successive tile rows (or share a packed word): sublanes",
        "across tiles": "each step lands in another tile: across tiles",
        "invariant": "the element read does not change: invariant",
        "mixed": "steps move both lane and row within a tile: mixed",
    }[walk]
    if not tiled:
        text += " (untiled layout: the array read as one tile of 128-word rows)"
    rest = ", ".join(f"{k} {_percent(v, n)}" for k, v in steps.items() if k != walk)
    return f"along output dim {minor}, {text} ({_percent(steps[walk], n)} of {n} steps{'; ' + rest if rest else ''})"


def _percent(part: int, whole: int) -> str:
    share = 100 * part / whole
    return "<1%" if 0 < share < 0.5 else (">99%" if 99.5 <= share < 100 else f"{share:.0f}%")


def _summary(f: dict) -> str:
    layout = f"{f['laid_out_bytes']} B laid out ({100 * f['padding_share']:.1f}% padding)"
    if f["tiles"] is None:
        tiles = "untiled"
    elif f["tiles_read"] is None:
        tiles = f"{f['tiles']} tiles of {f['tile_bytes']} B, tiles read unknown"
    elif f["tile_utilization"] is None:
        tiles = f"reads 0/{f['tiles']} tiles"
    else:
        tiles = (
            f"reads {f['tiles_read']}/{f['tiles']} tiles of {f['tile_bytes']} B, "
            f"{100 * f['tile_utilization']:.1f}% of their bytes used"
        )
    return f"{layout}; {tiles}; {f['reason']}"
