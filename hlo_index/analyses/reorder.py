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

import dataclasses
import re
from dataclasses import dataclass
from math import gcd, prod
from typing import Optional

import numpy as np

from ..affine import IndexingMap
from ..hlo import build
from ..hlo.model import Computation, Instruction, Module, SliceDim
from .. import ops

SLICE_OPS = ("slice", "dynamic-slice")
SLICE_THEN_RESHAPE = "slice_then_reshape"
RESHAPE_THEN_SLICE = "reshape_then_slice"


@dataclass(frozen=True)
class ReorderChain:
    computation: str
    slice: str
    reshape: str
    order: str
    verdict: str                 # legal | illegal | unprovable
    reason: str
    rewrite_module: Optional[str] = None
    swapped_first_shape: Optional[tuple[int, ...]] = None   # the new intermediate's dims

    def to_json(self) -> dict:
        return {"slice": self.slice, "reshape": self.reshape, "order": self.order,
                "verdict": self.verdict, "reason": self.reason,
                "rewrite_module": self.rewrite_module}


class _Verdict(Exception):
    def __init__(self, verdict: str, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


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
    return (not src.is_tuple and not dst.is_tuple and src.element_type == dst.element_type
            and src.num_elements == dst.num_elements and _row_major(src) and _row_major(dst))


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
    return [analyse_pair(module, comp, first, second, order)
            for comp, first, second, order in find_pairs(module)]


# ---- slice parameters -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Slice:
    starts: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    runtime: tuple[bool, ...]         # offset only known at run time


def _constant_int(instr: Instruction) -> Optional[int]:
    if instr.opcode != "constant" or instr.literal is None:
        return None
    found = re.findall(r"-?\d+", instr.literal.split(")")[-1] if ")" in instr.literal else instr.literal)
    return int(found[-1]) if len(found) == 1 else None


def _slice_of(instr: Instruction) -> _Slice:
    source = instr.operands[0].shape.dims
    if instr.opcode == "slice":
        dims = instr.attr("slice")
        return _Slice(tuple(d.start for d in dims), tuple(instr.shape.dims),
                      tuple(d.stride for d in dims), (False,) * len(dims))
    sizes = tuple(instr.attr("dynamic_slice_sizes") or instr.shape.dims)
    starts, runtime = [], []
    for i, offset in enumerate(instr.operands[1:]):
        value = _constant_int(offset)
        if value is None and source[i] != sizes[i]:
            starts.append(0)
            runtime.append(True)
        else:   # XLA clamps the offset into [0, dim - size]
            starts.append(min(max(value or 0, 0), source[i] - sizes[i]))
            runtime.append(False)
    return _Slice(tuple(starts), sizes, (1,) * len(sizes), tuple(runtime))


def _slice_text(s: _Slice, runtime: dict | None = None) -> str:
    """``[0:8, rt:rt+4]``: a runtime offset shows as ``rt`` (``8*rt`` when scaled)."""
    runtime = runtime or {}

    def rt(i: int) -> str:
        factor = runtime[i][1]
        return "rt" if factor == 1 else f"{factor}*rt"

    return "[" + ", ".join((f"{rt(i)}:{rt(i)}+{n}" if i in runtime else
                            f"{a}:{a + (n - 1) * k + 1}" + (f":{k}" if k != 1 else ""))
                           for i, (a, n, k) in enumerate(zip(s.starts, s.sizes, s.strides))) + "]"


def _slice_dims(s: _Slice) -> tuple[SliceDim, ...]:
    return tuple(SliceDim(a, a + (n - 1) * k + 1, k) for a, n, k in zip(s.starts, s.sizes, s.strides))


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
                gs.append(i); ps *= src[i]; i += 1
            elif j < len(dst):
                gd.append(j); pd *= dst[j]; j += 1
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
        raise _Verdict("unprovable", f"%{instr.name} has {len(maps)} maps to its source")
    if maps[0].is_undefined:
        raise _Verdict("unprovable", f"%{instr.name}: {maps[0].undefined_reason}")
    return maps[0]


def _as_static_slice(instr: Instruction, s: _Slice, source: Instruction) -> Instruction:
    """A plain slice equivalent to a (constant-offset) dynamic slice, for its map."""
    if instr.opcode == "slice":
        return instr
    return build.instruction("slice", instr.shape, [source], name=instr.name, slice=_slice_dims(s))


def _first_difference(a: IndexingMap, b: IndexingMap) -> Optional[tuple]:
    if a.runtime_vars or b.runtime_vars or a.range_vars or b.range_vars:
        return None
    points, results = a.enumerate(limit=1 << 14)
    for point, res in zip(points[:4096], results[:4096]):
        dims = tuple(int(v) for v in point[:a.num_dims])
        other = b.evaluate(dims)
        if tuple(int(v) for v in res) != tuple(other):
            return dims, tuple(int(v) for v in res), tuple(other)
    return None


def _same(a: IndexingMap, b: IndexingMap) -> tuple[bool, str]:
    if a == b:
        return True, "the indexing maps are equal"
    if a.semantically_equal(b):
        return True, "the indexing maps agree on every point"
    diff = _first_difference(a, b)
    if diff is None:
        return False, "the indexing maps differ"
    point, want, got = diff
    return False, (f"output {list(point)} reads source {list(want)} but the swapped pair would "
                   f"read {list(got)}")


def _group_affine(orig: IndexingMap, x_dims, groups) -> list[tuple[int, dict]]:
    """Per group: beta and {out dim: alpha} of the flattened source group, from the map."""
    zero = (0,) * orig.num_dims
    base = orig.evaluate(zero)
    out = []
    for src, dst in groups:
        strides = {d: prod(x_dims[e] for e in src[k + 1:]) for k, d in enumerate(src)}
        lin = lambda idx: sum(idx[d] * strides[d] for d in src)   # noqa: E731
        alphas = {}
        for j in dst:
            if orig.dims[j].size > 1:
                unit = tuple(1 if k == j else 0 for k in range(orig.num_dims))
                alphas[j] = lin(orig.evaluate(unit)) - lin(base)
        out.append((lin(base), alphas))
    return out


# ---- candidates -----------------------------------------------------------------------------

def _expand_candidate(x_dims, z_dims, groups, affine) -> tuple[list[int], _Slice]:
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
            raise _Verdict("illegal", "the reshape does not keep the slice's element order")
        inner = {j: alphas[j] for j in eff[:-1]}
        inner[eff[-1]] = 1
        strides[eff[-1]] = alphas[eff[-1]]
        if len(eff) > 1:
            first_inner = inner[eff[0]]
            if size % first_inner:
                raise _Verdict("illegal", f"the source size {size} is not divisible by the inner "
                                          f"factor {first_inner}")
            for a, b in zip(eff[:-2], eff[1:-1]):
                if inner[a] % inner[b]:
                    raise _Verdict("illegal", f"the row stride {inner[a]} is not a multiple of the "
                                              f"inner factor {inner[b]}")
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
                    raise _Verdict("illegal", f"the slice runs past the end of source dims {source}")
                unit = inner[eff[eff.index(j) - 1]]
                raise _Verdict("illegal", f"the start {beta} is not aligned to the inner factor "
                                          f"{unit}" if beta % unit else
                               f"a stride {strides[j]} row of {z_dims[j]} does not fit in {unit}")
    return new_dims, _Slice(tuple(starts), tuple(sizes), tuple(strides), (False,) * len(z_dims))


def _box_candidate(x_dims, z_dims, groups, affine, spec_strides) -> tuple[list[int], _Slice]:
    """reshape->slice swapped: slice a box of the source, then reshape it to Z."""
    starts, sizes, strides = [0] * len(x_dims), list(x_dims), [1] * len(x_dims)
    for (src, dst), (beta, alphas) in zip(groups, affine):
        gdims = [x_dims[i] for i in src]
        zd = [z_dims[j] for j in dst]
        count = prod(zd)
        if count > 1 << 22:
            raise _Verdict("unprovable", f"group of {count} elements too large to check")
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
            raise _Verdict("illegal", why + (f" (the slice has stride {stride})" if stride else ""))
        box = np.indices(box_sizes).reshape(len(src), -1)
        expected = np.ravel_multi_index(tuple(np.asarray(box_starts)[:, None]
                                              + np.asarray(box_strides)[:, None] * box), gdims)
        if not np.array_equal(expected, positions):
            raise _Verdict("illegal", "the slice reorders the elements of the source box")
        for k, i in enumerate(src):
            starts[i], sizes[i], strides[i] = box_starts[k], box_sizes[k], box_strides[k]
    return sizes, _Slice(tuple(starts), tuple(sizes), tuple(strides), (False,) * len(x_dims))


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

def analyse_pair(module: Module, comp: Computation, first: Instruction, second: Instruction,
                 order: str) -> ReorderChain:
    slice_instr, reshape_instr = (first, second) if order == SLICE_THEN_RESHAPE else (second, first)
    names = dict(computation=comp.name, slice=slice_instr.name, reshape=reshape_instr.name, order=order)
    try:
        verdict, reason, swapped = _decide(first, second, order)
    except _Verdict as v:
        return ReorderChain(**names, verdict=v.verdict, reason=v.reason)
    rewrite = rewrite_module_text(module, comp, first, second, swapped)
    return ReorderChain(**names, verdict=verdict, reason=reason, rewrite_module=rewrite,
                        swapped_first_shape=tuple(swapped[0].shape.dims))


def _decide(first: Instruction, second: Instruction, order: str):
    source = first.operands[0]
    x_dims, z_dims = tuple(source.shape.dims), tuple(second.shape.dims)
    slice_instr = first if order == SLICE_THEN_RESHAPE else second
    reshape_instr = second if order == SLICE_THEN_RESHAPE else first
    spec = _slice_of(slice_instr)
    middle = tuple(first.shape.dims)
    groups = reshape_groups(middle, z_dims) if order == SLICE_THEN_RESHAPE else \
        reshape_groups(x_dims, middle)
    if not z_dims or not middle:
        n = source.shape.num_elements
        if n == 1:
            raise _Verdict("unprovable", "a single-element source: both orders are the identity")
        raise _Verdict("illegal", f"a rank-0 result cannot be a slice of a reshape of the "
                                  f"{n}-element source (a slice keeps the rank)")
    moved, scaled = _runtime_dims(spec, groups, order) if any(spec.runtime) else ({}, [])
    # The geometry comes from the slice with runtime offsets at 0; the verdict from the real maps.
    static = _as_static_slice(slice_instr, spec, slice_instr.operands[0])
    if order == SLICE_THEN_RESHAPE:
        orig = _operand_map(static).compose(_operand_map(second))
    else:
        orig = _operand_map(first).compose(_operand_map(static))
    if orig.is_known_empty or orig.num_dims == 0 or second.shape.num_elements == 0:
        raise _Verdict("unprovable", "the pair produces no elements")
    affine = _group_affine(orig, x_dims, groups)
    element = source.shape.element_type
    x = build.parameter(0, source.shape, name=source.name)
    reshape_op = reshape_instr.opcode
    extras: list[Instruction] = []
    if order == SLICE_THEN_RESHAPE:
        new_dims, new_slice = _expand_candidate(x_dims, z_dims, groups, affine)
        for r, src, dst in scaled:
            moved.update(_scaled_offset(r, src, dst, x_dims, spec, new_dims, new_slice))
        new_first = build.instruction(reshape_op, build.array_shape(element, new_dims), [x],
                                      name=first.name + ".swapped")
        new_second, extras = _new_slice(new_first, second.shape, new_slice, moved, slice_instr, second.name)
        swapped = new_first, new_second
        detail = (f"{reshape_op} {_dims(x_dims)} to {_dims(new_dims)}, then slice "
                  f"{_slice_text(new_slice, moved)} to {_dims(z_dims)}")
    else:
        new_dims, new_slice = _box_candidate(x_dims, z_dims, groups, affine, spec.strides)
        new_first, extras = _new_slice(x, build.array_shape(element, new_dims), new_slice, moved,
                                       slice_instr, first.name + ".swapped")
        new_second = build.instruction(reshape_op, second.shape, [new_first], name=second.name)
        swapped = new_first, new_second
        detail = (f"slice {_dims(x_dims)} by {_slice_text(new_slice, moved)} to {_dims(new_dims)}, "
                  f"then {reshape_op} to {_dims(z_dims)}")
    new = _operand_map(new_first).compose(_operand_map(new_second))
    if moved:   # compare the maps with their runtime offsets: equal maps mean they cancel
        orig = (_operand_map(slice_instr).compose(_operand_map(second)) if order == SLICE_THEN_RESHAPE
                else _operand_map(first).compose(_operand_map(slice_instr)))
        new = _in_original_runtime_vars(new, orig, moved, spec)
    same, why = _same(orig, new)
    if not same:
        raise _Verdict("illegal", why)
    if moved:
        why += " for every value of the runtime offsets"
    if any(f != 1 for _, f in moved.values()):
        why += "; the scaled offset assumes the product does not overflow s32"
    return "legal", f"{detail} ({why})", swapped + (tuple(extras),)


def _new_slice(operand: Instruction, shape, new_slice: _Slice, moved: dict, original: Instruction,
               name: str) -> tuple[Instruction, list[Instruction]]:
    """The swapped slice: a plain slice, or (runtime offsets carried over) a dynamic slice
    taking the original offset operands in their new dims and ``s32`` constants elsewhere."""
    if not moved:
        return build.instruction("slice", shape, [operand], name=name, slice=_slice_dims(new_slice)), []
    if any(k != 1 for k in new_slice.strides):
        raise _Verdict("unprovable", "the swapped slice needs a stride, which a dynamic slice "
                                     "with runtime offsets cannot express")
    constants: dict[int, Instruction] = {}
    products: list[Instruction] = []

    def constant(value: int) -> Instruction:
        if value not in constants:
            constants[value] = Instruction(f"{name}.offset{value}".replace("-", "m"), "constant",
                                           build.array_shape("s32", ()), (), literal=str(value))
        return constants[value]

    offsets = []
    for k, start in enumerate(new_slice.starts):
        if k not in moved:
            offsets.append(constant(start))
            continue
        dim, factor = moved[k]
        offset = original.operands[1 + dim]
        if factor != 1:   # the offset of a merged dim, scaled to the flattened dim
            offset = build.instruction("multiply", offset.shape, [offset, constant(factor)],
                                       name=f"{name}.offset{k}.scaled")
            products.append(offset)
        offsets.append(offset)
    instr = build.instruction("dynamic-slice", shape, [operand, *offsets], name=name,
                              dynamic_slice_sizes=tuple(new_slice.sizes))
    return instr, list(constants.values()) + products


def _dims(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _runtime_dims(spec: _Slice, groups, order: str):
    """Where runtime offsets go in the swapped slice: ``({new dim: (original dim, 1)}, scaled)``.

    In a dim the reshape leaves alone the offset carries over. Slice-then-reshape may also
    merge a runtime dim with inner dims (``[T,8,32] -> dynamic-slice [1,8,32] -> [8,32]``, a scan
    step): the swapped slice then needs the offset scaled by the inner size; ``scaled`` lists
    those ``(dim, group src, group dst)``, resolved once the swapped shape is known.
    """
    moved, scaled = {}, []
    for src, dst in groups:
        sliced, other = (src, dst) if order == SLICE_THEN_RESHAPE else (dst, src)
        runtime = [i for i in sliced if spec.runtime[i]]
        if not runtime:
            continue
        if len(src) == 1 and len(dst) == 1:
            moved[other[0]] = (sliced[0], 1)
        elif order == SLICE_THEN_RESHAPE and len(runtime) == 1:
            scaled.append((runtime[0], src, dst))
        else:
            raise _Verdict("unprovable", f"the runtime offset of dim {runtime[0]} lies in dims the "
                                         f"reshape merges or splits: the swapped slice would need "
                                         f"a scaled offset, whose alignment the maps cannot show")
    return moved, scaled


def _scaled_offset(r: int, src, dst, x_dims, spec: _Slice, new_dims, new_slice: _Slice) -> dict:
    """``{new dim: (r, factor)}``: a runtime offset ``o`` of merged dim ``r`` moves the flattened
    group by ``o * S`` (``S`` the size of the group's dims inside ``r``), i.e. dim ``j`` of the
    reshaped group by ``o * S / W_j`` (``W_j`` its row size). It must fit in one new dim starting at
    0, and clamp the same way (the new dim's room is ``factor`` times the old one's)."""
    inner = prod(x_dims[e] for e in src[src.index(r) + 1:])
    why = f"the runtime offset of dim {r} moves the merged dims by multiples of {inner}"
    for j in dst:
        row = prod(new_dims[e] for e in dst[dst.index(j) + 1:])
        if new_dims[j] > 1 and inner % row == 0:
            factor = inner // row
            room, old_room = new_dims[j] - new_slice.sizes[j], x_dims[r] - spec.sizes[r]
            if new_slice.starts[j] != 0 or room != factor * old_room:
                break
            return {j: (r, factor)}
    raise _Verdict("unprovable", f"{why}, which no single dim of the swapped slice takes with the "
                                 f"same clamping")


def _in_original_runtime_vars(new: IndexingMap, orig: IndexingMap, moved: dict, spec: _Slice) -> IndexingMap:
    """``new`` with each runtime variable written as the original one it stands for
    (times its scale), so the two maps are compared over the same runtime values."""
    from ..affine.expr import RUNTIME, replace_variables, runtime_var
    runtime_axes = [i for i, r in enumerate(spec.runtime) if r]
    new_axes = sorted(moved)
    if len(new.runtime_vars) != len(new_axes) or len(orig.runtime_vars) != len(runtime_axes):
        raise _Verdict("unprovable", "the runtime offsets did not come out one variable per dim")
    target = {}
    for n, k in enumerate(new_axes):
        dim, factor = moved[k]
        target[n] = runtime_var(runtime_axes.index(dim)) * factor

    def replace(v):
        return target[v.value] if v.kind == RUNTIME else None

    memo: dict = {}
    return IndexingMap(new.dims, new.range_vars, orig.runtime_vars,
                       [replace_variables(e, replace, memo) for e in new.results],
                       [(replace_variables(e, replace, memo), iv) for e, iv in new.constraints]).simplified()


# ---- the rewritten module -------------------------------------------------------------------

def _users(comp: Computation, instr: Instruction) -> list[Instruction]:
    return [i for i in comp.instructions if instr.name in i.operand_names]


def rewrite_module_text(module: Module, comp: Computation, first: Instruction,
                        second: Instruction, swapped: tuple) -> str:
    """The whole module with ``first -> second`` replaced by the swapped pair (``swapped`` is
    ``(new first, new second[, new constant offsets])``); the pair's result keeps its name (and
    the ROOT mark), so every user and the ENTRY are unchanged."""
    from ..hlo.printer import format_module
    taken = {i.name for i in module.instructions}
    renamed: dict[str, str] = {}

    def fresh(name: str) -> str:
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    extras = []
    for c in (swapped[2] if len(swapped) > 2 else ()):
        renamed[c.name] = fresh(c.name)
        extras.append(dataclasses.replace(c, name=renamed[c.name], computation=comp))
    name = fresh(swapped[0].name)
    rename = lambda names: tuple(renamed.get(n, n) for n in names)   # noqa: E731
    new_first = dataclasses.replace(swapped[0], name=name, computation=comp,
                                    operand_names=rename(swapped[0].operand_names))
    new_second = dataclasses.replace(
        swapped[1], operand_names=(name,) + rename(swapped[1].operand_names[1:]),
        operands=(new_first,) + tuple(swapped[1].operands[1:]), is_root=second.is_root,
        metadata=second.metadata, computation=comp, shape=second.shape)
    drop_first = [u for u in _users(comp, first) if u is not second] == [] and not first.is_root
    instructions = []
    for instr in comp.instructions:
        if instr is first and drop_first:
            continue   # a dropped dynamic slice's offsets stay: the swapped one may use them
        if instr is second:
            instructions.extend(extras + [new_first, new_second])
        else:
            instructions.append(instr)
    by_name = {i.name: i for i in instructions}
    new_comp = dataclasses.replace(comp, instructions=instructions, by_name=by_name,
                                   root=new_second if second.is_root else comp.root)
    computations = [new_comp if c is comp else c for c in module.computations]
    new_module = dataclasses.replace(module, computations=computations,
                                     entry=new_comp if module.entry is comp else module.entry,
                                     by_name={c.name: c for c in computations})
    return format_module(new_module)
