"""Slice/reshape reorder ("bubble"): can a ``reshape(slice(x))`` become ``slice(reshape(x))``
(and back) and still compute the same tensor?

For every pair we build the composed output->source map of the original order from the op
rules, construct the one candidate of the swapped order the maps allow, build *its* composed
map from the op rules too (on instructions synthesised with ``hlo.build``), and compare the two
maps (canonical equality, else brute force on the domain). The candidate comes from the
original map itself, group by group of the reshape (the runs of dims whose sizes multiply to
the same product): along a group the original map reads source position ``beta + sum_j
alpha_j * c_j`` of the flattened group, where ``alpha``/``beta`` are read off the map at the
origin and at unit points.

* slice then reshape: the swapped pair reshapes the source group to ``(P / W_1, W_1 / W_2,
  ...)`` with ``W_j = alpha_j`` (innermost: stride ``alpha_k`` over a dim ``alpha_{k-1}`` long) and
  slices it at ``beta``; it exists when the source size is divisible by each inner factor and
  the start does not cross a row.
* reshape then slice: the read positions must form a box of the source group (checked on the
  positions), sliced first and then reshaped.

Dynamic slices with constant offsets are the slice at the clamped offsets. A runtime offset in
a group the reshape splits makes the pair "unprovable" (its divisibility is unknown); one merged
with the dims inside it (slice then reshape, a scan step) becomes the offset times their size
when that clamps the same way. A runtime offset in a dim the reshape leaves alone carries over: the swapped slice is a
dynamic slice taking the same offset operand in the new position of that dim (``s32``
constants elsewhere), and the verdict compares both orders' maps *with* their runtime
variables, which are then the same variables on both sides and cancel. A bitcast whose two
layouts are row-major without tiles is a reshape and is treated as one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import prod
from typing import TypedDict

import numpy as np

from .. import ops
from ..affine import IndexingMap
from ..hlo import build
from ..hlo.model import Computation, Instruction, Module, Shape
from ..hlo.written_shapes import written_shape_problem
from .reorder_rewrite import module_names, rewrite_instructions_text, rewrite_module_text
from .reorder_runtime import in_original_runtime_vars, new_slice_instruction, runtime_dims, scaled_offset
from .slices import (
    RESHAPE_THEN_SLICE,
    SLICE_OPS,
    SLICE_THEN_RESHAPE,
    SliceSpec,
    Verdict,
    slice_dims,
    slice_of,
    slice_text,
)


@dataclass(frozen=True)
class ReorderChain:
    computation: str
    slice: str
    reshape: str
    order: str
    verdict: str  # legal | illegal | unprovable
    reason: str
    rewrite: str | None = None  # the instructions replacing the pair (HLO text)
    swapped_first_shape: tuple[int, ...] | None = None  # the new intermediate's dims
    # what the whole rewritten module is built from, on request only (it is as large as the input)
    rewrite_parts: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def rewrite_module(self) -> str | None:
        return None if self.rewrite_parts is None else rewrite_module_text(*self.rewrite_parts)

    def to_json(self, rewrite_module_path: str | None = None) -> dict:
        out = {
            "slice": self.slice,
            "reshape": self.reshape,
            "order": self.order,
            "verdict": self.verdict,
            "reason": self.reason,
            "condition": None,
            "rewrite": self.rewrite,
        }
        if rewrite_module_path is not None:
            out["rewrite_module"] = rewrite_module_path
        return out


# ---- finding pairs ---------------------------------------------------------------------------


def _row_major(shape) -> bool:
    layout = shape.layout
    if layout is None:
        return True
    if layout.tiles or layout.element_size_bits:
        return False
    m2m = tuple(layout.minor_to_major or ())
    return not m2m or m2m == tuple(range(len(shape.dims) - 1, -1, -1))


def is_reshape(instr: Instruction) -> bool:
    """A reshape, or a bitcast that is one: same element type and both layouts in row-major
    order without tiles, so physical order is logical order on both sides."""
    if instr.opcode == "reshape":
        return True
    if instr.opcode != "bitcast" or not instr.operands:
        return False
    src = instr.operands[0].shape
    dst = instr.shape
    return (
        not src.is_tuple
        and not dst.is_tuple
        and src.element_type == dst.element_type
        and src.num_elements == dst.num_elements
        and _row_major(src)
        and _row_major(dst)
    )


def find_pairs(module: Module) -> list[tuple[Computation, Instruction, Instruction, str]]:
    """(computation, first, second, order) for every slice->reshape and reshape->slice edge."""
    pairs = []
    for comp in module.computations:
        for instr in comp.instructions:
            if not instr.operands:
                continue
            producer = instr.operands[0]
            if is_reshape(instr) and producer.opcode in SLICE_OPS:
                pairs.append((comp, producer, instr, SLICE_THEN_RESHAPE))
            elif instr.opcode in SLICE_OPS and is_reshape(producer):
                pairs.append((comp, producer, instr, RESHAPE_THEN_SLICE))
    return pairs


def analyse_module(module: Module) -> list[ReorderChain]:
    pairs = find_pairs(module)
    names = module_names(module) if pairs else frozenset()
    return [analyse_pair(module, comp, first, second, order, names) for comp, first, second, order in pairs]


# ---- reshape groups -------------------------------------------------------------------------


def reshape_groups(src: tuple[int, ...], dst: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """Minimal runs of source / destination dims with equal products. A size-1 dim joins the
    group that follows it (as an outer dim); leftover trailing ones join the last group."""
    groups, i, j = [], 0, 0
    while i < len(src) and j < len(dst):
        gs, gd, ps, pd = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while ps != pd:
            if ps < pd and i < len(src):
                gs.append(i)
                ps *= src[i]
                i += 1
            elif j < len(dst):
                gd.append(j)
                pd *= dst[j]
                j += 1
            else:
                raise ValueError(f"reshape {list(src)} -> {list(dst)} changes the element count")
        groups.append((gs, gd))
    if not groups:
        return [(list(range(len(src))), list(range(len(dst))))]
    groups[-1][0].extend(range(i, len(src)))
    groups[-1][1].extend(range(j, len(dst)))
    return groups


# ---- maps -----------------------------------------------------------------------------------


def _operand_map(instr: Instruction) -> IndexingMap:
    maps = ops.output_to_input(instr)[0].maps
    if len(maps) != 1:
        raise Verdict("unprovable", f"%{instr.name} has {len(maps)} maps to its source")
    if maps[0].is_undefined:
        raise Verdict("unprovable", f"%{instr.name}: {maps[0].undefined_reason}")
    return maps[0]


def _as_static_slice(instr: Instruction, s: SliceSpec, source: Instruction) -> Instruction:
    """A plain slice equivalent to a (constant-offset) dynamic slice, for its map."""
    if instr.opcode == "slice":
        return instr
    return build.instruction("slice", instr.shape, [source], name=instr.name, slice=slice_dims(s))


def _first_difference(a: IndexingMap, b: IndexingMap) -> tuple | None:
    if a.runtime_vars or b.runtime_vars or a.range_vars or b.range_vars:
        return None
    points, results = a.enumerate(limit=1 << 14)
    for point, res in zip(points[:4096], results[:4096]):
        dims = tuple(int(v) for v in point[: a.num_dims])
        other = b.evaluate(dims)
        if tuple(int(v) for v in res) != tuple(other):
            return dims, tuple(int(v) for v in res), tuple(other)
    return None


def _same_functions(a: IndexingMap, b: IndexingMap) -> bool | None:
    """Both maps are functions of the dims (no range or runtime variables): compare them on the
    same points as ``semantically_equal`` would, as arrays (its sets of rows are what made large
    pairs slow). None when not applicable."""
    from ..affine.evaluate import dim_points, relation_at

    if (
        a.range_vars
        or b.range_vars
        or a.runtime_vars
        or b.runtime_vars
        or a.is_undefined
        or b.is_undefined
        or a.is_known_empty
        or b.is_known_empty
        or a.num_dims != b.num_dims
        or a.num_results != b.num_results
    ):
        return None
    if any(da.lo != db.lo or da.hi != db.hi for da, db in zip(a.dims, b.dims)):
        return None
    points = dim_points(IndexingMap(list(a.dims), []), 1 << 18, 0)
    fa, ra = relation_at(a, points, [])
    fb, rb = relation_at(b, points, [])
    return bool(np.array_equal(fa, fb) and np.array_equal(ra, rb))


def _same(a: IndexingMap, b: IndexingMap) -> tuple[bool, str]:
    if a == b:
        return True, "the indexing maps are equal"
    fast = _same_functions(a, b)
    if fast if fast is not None else a.semantically_equal(b):
        return True, "the indexing maps agree on every point"
    if a.is_known_empty or b.is_known_empty:  # a slice out of its source: no point to compare at
        which = "the original pair" if a.is_known_empty else "the swapped pair"
        return False, f"{which} reads no element of the source, the other does"
    diff = _first_difference(a, b)
    if diff is None:
        return False, "the indexing maps differ"
    point, want, got = diff
    return False, (f"output {list(point)} reads source {list(want)} but the swapped pair would read {list(got)}")


def _flat_index(idx, src, strides) -> int:
    return sum(idx[d] * strides[d] for d in src)


def _group_affine(orig: IndexingMap, x_dims, groups) -> list[tuple[int, dict]]:
    """Per group: beta and {out dim: alpha} of the flattened source group, from the map."""
    zero = (0,) * orig.num_dims
    base = orig.evaluate(zero)
    out = []
    for src, dst in groups:
        strides = {d: prod(x_dims[e] for e in src[k + 1 :]) for k, d in enumerate(src)}
        beta = _flat_index(base, src, strides)
        alphas = {}
        for j in dst:
            if orig.dims[j].size > 1:
                unit = tuple(1 if k == j else 0 for k in range(orig.num_dims))
                alphas[j] = _flat_index(orig.evaluate(unit), src, strides) - beta
        out.append((beta, alphas))
    return out


# ---- candidates -----------------------------------------------------------------------------


def _expand_candidate(x_dims, z_dims, groups, affine) -> tuple[list[int], SliceSpec]:
    """slice->reshape swapped: reshape the source to X', then slice X' to Z."""
    new_dims, starts, sizes, strides = [0] * len(z_dims), [0] * len(z_dims), list(z_dims), [1] * len(z_dims)
    for (src, dst), (beta, alphas) in zip(groups, affine):
        size = prod(x_dims[i] for i in src)
        source = "x".join(str(x_dims[i]) for i in src)
        eff = [j for j in dst if j in alphas]
        for j in dst:
            new_dims[j] = 1
        if not eff:
            new_dims[dst[0]], starts[dst[0]] = size, beta
            continue
        if any(alphas[j] <= 0 for j in eff):
            raise Verdict("illegal", "the reshape does not keep the slice's element order")
        inner = {j: alphas[j] for j in eff[:-1]}
        inner[eff[-1]] = 1
        strides[eff[-1]] = alphas[eff[-1]]
        if len(eff) > 1:
            first_inner = inner[eff[0]]
            if size % first_inner:
                raise Verdict("illegal", f"the source size {size} is not divisible by the inner factor {first_inner}")
            for a, b in itertools.pairwise(eff[:-1]):
                if inner[a] % inner[b]:
                    raise Verdict(
                        "illegal", f"the row stride {inner[a]} is not a multiple of the inner factor {inner[b]}"
                    )
        prev = size
        for j in eff:
            new_dims[j] = prev // inner[j]
            prev = inner[j]
        rest = beta
        for j in eff:
            starts[j], rest = divmod(rest, inner[j])
        for j in eff:
            if starts[j] + strides[j] * (z_dims[j] - 1) >= new_dims[j]:
                if j == eff[0]:
                    raise Verdict("illegal", f"the slice runs past the end of source dims {source}")
                unit = inner[eff[eff.index(j) - 1]]
                raise Verdict(
                    "illegal",
                    f"the start {beta} is not aligned to the inner factor {unit}"
                    if beta % unit
                    else f"a stride {strides[j]} row of {z_dims[j]} does not fit in {unit}",
                )
    return new_dims, SliceSpec(tuple(starts), tuple(sizes), tuple(strides), (False,) * len(z_dims))


def _box_candidate(x_dims, z_dims, groups, affine, spec_strides) -> tuple[list[int], SliceSpec]:
    """reshape->slice swapped: slice a box of the source, then reshape it to Z."""
    starts, sizes, strides = [0] * len(x_dims), list(x_dims), [1] * len(x_dims)
    for (src, dst), (beta, alphas) in zip(groups, affine):
        gdims = [x_dims[i] for i in src]
        zd = [z_dims[j] for j in dst]
        count = prod(zd)
        if count > 1 << 22:
            raise Verdict("unprovable", f"group of {count} elements too large to check")
        grid = np.indices(zd, dtype=np.int64).reshape(len(zd), -1) if zd else np.zeros((0, 1), np.int64)
        positions = beta + sum(alphas.get(j, 0) * grid[k] for k, j in enumerate(dst))
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        coords = np.stack(np.unravel_index(positions, gdims)) if gdims else np.zeros((0, 1), np.int64)
        lo, hi = coords.min(axis=1), coords.max(axis=1)
        box_starts, box_sizes, box_strides = [], [], []
        for k in range(len(src)):
            step = int(np.gcd.reduce(coords[k] - lo[k])) or 1
            box_starts.append(int(lo[k]))
            box_strides.append(step)
            box_sizes.append(int((hi[k] - lo[k]) // step + 1))
        if prod(box_sizes) != count:
            why = _not_a_box(beta, count, gdims, box_sizes)
            stride = next((spec_strides[j] for j in dst if spec_strides[j] != 1), None)
            raise Verdict("illegal", why + (f" (the slice has stride {stride})" if stride else ""))
        box = np.indices(box_sizes).reshape(len(src), -1)
        expected = np.ravel_multi_index(
            tuple(np.asarray(box_starts)[:, None] + np.asarray(box_strides)[:, None] * box), gdims
        )
        if not np.array_equal(expected, positions):
            raise Verdict("illegal", "the slice reorders the elements of the source box")
        for k, i in enumerate(src):
            starts[i], sizes[i], strides[i] = box_starts[k], box_sizes[k], box_strides[k]
    return sizes, SliceSpec(tuple(starts), tuple(sizes), tuple(strides), (False,) * len(x_dims))


def _not_a_box(beta: int, count: int, gdims: list[int], spans: list[int]) -> str:
    why = f"the {count} elements taken are not a box of the source dims {gdims}"
    inner = 1
    for k in range(len(gdims) - 1, 0, -1):
        inner *= gdims[k]
        if count > inner and beta % inner:
            return f"{why}: the start {beta} is not aligned to the inner size {inner}"
        if count > inner and count % inner:
            return f"{why}: the size {count} is not a multiple of the inner size {inner}"
    return f"{why} (they span {spans})"


# ---- one pair -------------------------------------------------------------------------------


class _ChainLabels(TypedDict):
    """The fields of ``ReorderChain`` that name the pair."""

    computation: str
    slice: str
    reshape: str
    order: str


def analyse_pair(
    module: Module,
    comp: Computation,
    first: Instruction,
    second: Instruction,
    order: str,
    names: frozenset | None = None,
) -> ReorderChain:
    slice_instr, reshape_instr = (first, second) if order == SLICE_THEN_RESHAPE else (second, first)
    labels: _ChainLabels = {
        "computation": comp.name,
        "slice": slice_instr.name,
        "reshape": reshape_instr.name,
        "order": order,
    }
    try:
        verdict, reason, swapped = _decide(first, second, order)
    except Verdict as v:
        return ReorderChain(**labels, verdict=v.verdict, reason=v.reason)
    parts = (module, comp, first, second, swapped)
    return ReorderChain(
        **labels,
        verdict=verdict,
        reason=reason,
        rewrite=rewrite_instructions_text(*parts, names),
        swapped_first_shape=tuple(swapped[0].shape.dims),
        rewrite_parts=parts,
    )


def _laid_out_like(element: str, dims, like: Shape) -> Shape:
    """An array of ``dims`` in the layout of ``like`` (same rank): a swapped pair's new value takes
    the layout of the value of its rank it stands for, so a rewrite of a TPU module keeps its
    tiles and memory spaces; the default layout where ``like`` has none."""
    layout = like.layout
    if layout is None or like.tuple_shapes is not None or len(layout.minor_to_major) != len(dims):
        return build.array_shape(element, dims)
    return Shape(element, tuple(dims), (False,) * len(dims), layout)


def _decide(first: Instruction, second: Instruction, order: str):
    for instr in (first, second):
        problem = written_shape_problem(instr)
        if problem is not None:
            raise Verdict("unprovable", f"{problem}, which XLA's verifier rejects")
    source = first.operands[0]
    x_dims, z_dims = tuple(source.shape.dims), tuple(second.shape.dims)
    slice_instr = first if order == SLICE_THEN_RESHAPE else second
    reshape_instr = second if order == SLICE_THEN_RESHAPE else first
    spec = slice_of(slice_instr)
    middle = tuple(first.shape.dims)
    groups = reshape_groups(middle, z_dims) if order == SLICE_THEN_RESHAPE else reshape_groups(x_dims, middle)
    if not z_dims or not middle:
        n = source.shape.num_elements
        if n == 1:
            raise Verdict("unprovable", "a single-element source: both orders are the identity")
        raise Verdict(
            "illegal",
            f"a rank-0 result cannot be a slice of a reshape of the {n}-element source (a slice keeps the rank)",
        )
    moved, scaled = runtime_dims(spec, groups, order) if any(spec.runtime) else ({}, [])
    # The geometry comes from the slice with runtime offsets at 0; the verdict from the real maps.
    static = _as_static_slice(slice_instr, spec, slice_instr.operands[0])
    if order == SLICE_THEN_RESHAPE:
        orig = _operand_map(static).compose(_operand_map(second))
    else:
        orig = _operand_map(first).compose(_operand_map(static))
    if orig.is_known_empty or orig.num_dims == 0 or second.shape.num_elements == 0:
        raise Verdict("unprovable", "the pair produces no elements")
    affine = _group_affine(orig, x_dims, groups)
    element = source.shape.element_type
    x = build.parameter(0, source.shape, name=source.name)
    reshape_op = reshape_instr.opcode
    extras: list[Instruction] = []
    if order == SLICE_THEN_RESHAPE:
        new_dims, new_slice = _expand_candidate(x_dims, z_dims, groups, affine)
        for r, src, dst in scaled:
            moved.update(scaled_offset(r, src, dst, x_dims, spec, new_dims, new_slice))
        # the new reshape stands where the old one did, unsliced: its layout (tiles, memory space)
        new_first = build.instruction(
            reshape_op, _laid_out_like(element, new_dims, second.shape), [x], name=first.name + ".swapped"
        )
        new_second, extras = new_slice_instruction(new_first, second.shape, new_slice, moved, slice_instr, second.name)
        swapped = new_first, new_second
        detail = (
            f"{reshape_op} {_dims(x_dims)} to {_dims(new_dims)}, then slice "
            f"{slice_text(new_slice, moved)} to {_dims(z_dims)}"
        )
    else:
        new_dims, new_slice = _box_candidate(x_dims, z_dims, groups, affine, spec.strides)
        # the new slice keeps the source's rank: its layout
        new_first, extras = new_slice_instruction(
            x, _laid_out_like(element, new_dims, source.shape), new_slice, moved, slice_instr, first.name + ".swapped"
        )
        new_second = build.instruction(reshape_op, second.shape, [new_first], name=second.name)
        swapped = new_first, new_second
        detail = (
            f"slice {_dims(x_dims)} by {slice_text(new_slice, moved)} to {_dims(new_dims)}, "
            f"then {reshape_op} to {_dims(z_dims)}"
        )
    new = _operand_map(new_first).compose(_operand_map(new_second))
    if moved:  # compare the maps with their runtime offsets: equal maps mean they cancel
        orig = (
            _operand_map(slice_instr).compose(_operand_map(second))
            if order == SLICE_THEN_RESHAPE
            else _operand_map(first).compose(_operand_map(slice_instr))
        )
        new = in_original_runtime_vars(new, orig, moved, spec)
    same, why = _same(orig, new)
    if not same:
        raise Verdict("illegal", why)
    if moved:
        why += " for every value of the runtime offsets"
    if any(f != 1 for _, f in moved.values()):
        why += "; the scaled offset assumes the product does not overflow s32"
    return "legal", f"{detail} ({why})", swapped + (tuple(extras),)


def decide_swap(first: Instruction, second: Instruction, order: str):
    """``("legal", reason, (new first, new second, new constants))`` for a pair whose other
    order computes the same tensor; raises ``Verdict`` (illegal / unprovable) otherwise."""
    return _decide(first, second, order)


def pair_map(first: Instruction, second: Instruction) -> IndexingMap:
    """The composed output -> source map of ``second(first(x))``."""
    return _operand_map(first).compose(_operand_map(second))


def same_maps(a: IndexingMap, b: IndexingMap) -> tuple[bool, str]:
    """Whether two maps read the same source element for every output, and if not where not."""
    return _same(a, b)


def _dims(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


__all__ = [
    "ReorderChain",
    "analyse_module",
    "analyse_pair",
    "decide_swap",
    "find_pairs",
    "is_reshape",
    "pair_map",
    "reshape_groups",
    "same_maps",
    "rewrite_module_text",
    "SLICE_THEN_RESHAPE",
    "RESHAPE_THEN_SLICE",
]
