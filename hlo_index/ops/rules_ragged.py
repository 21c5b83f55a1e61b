"""ragged-dot with a ragged non-contracting lhs dimension (rhs has a group dimension).

``ragged-dot(lhs, rhs, group_sizes)``: the rows of the lhs ragged dim are split into consecutive
groups of ``group_sizes[..., g]`` rows; row i is multiplied with rhs group g(i); rows past the
last group give 0 and read nothing. Output dims: (batch..., lhs free..., rhs free...), the rhs
group dim being neither. Runtime variables (exact ranges): ``rt0`` in [0, G - 1] the group of
the row, ``rt1`` in [0, M] the number of rows the groups cover; the group sizes (the entries of
this row's batch / leading coordinates) are read whole: the row's group depends on them.
Other ragged modes (ragged contracting or batch dim) are UNDEFINED.
"""

from __future__ import annotations

from typing import TypedDict

from ..affine import Expr, IndexingMap, Interval, RuntimeVar, dim, range_var, runtime_var
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of(
    "lhs_batch_dims",
    "rhs_batch_dims",
    "lhs_contracting_dims",
    "rhs_contracting_dims",
    "lhs_ragged_dims",
    "rhs_group_dims",
)


class RaggedDims(TypedDict):
    """The roles of a ragged-dot's dims: batch and contracting dims of each side, the lhs ragged dim
    ``r``, the rhs group dim ``g``, the free dims, the lhs dims that index group_sizes, the group count."""

    lb: tuple[int, ...]
    rb: tuple[int, ...]
    lc: tuple[int, ...]
    rc: tuple[int, ...]
    r: int
    g: int
    lfree: list[int]
    rfree: list[int]
    leading: list[int]
    groups: int


def ragged_layout(instr: Instruction) -> str | RaggedDims:
    """The roles of every dim, or why this ragged-dot is not modelled."""
    if len(instr.operands) != 3:
        return "ragged-dot: expected (lhs, rhs, group_sizes)"
    lhs, rhs, sizes = (o.shape for o in instr.operands)
    lb, rb = tuple(instr.attr("lhs_batch_dims", ())), tuple(instr.attr("rhs_batch_dims", ()))
    lc, rc = tuple(instr.attr("lhs_contracting_dims", ())), tuple(instr.attr("rhs_contracting_dims", ()))
    ragged, group = tuple(instr.attr("lhs_ragged_dims", ())), tuple(instr.attr("rhs_group_dims", ()))
    if any(not 0 <= d < lhs.rank for d in lb + lc + ragged) or any(not 0 <= d < rhs.rank for d in rb + rc + group):
        # a grouped gemm's config is checked by nobody before its kernel runs
        return "ragged-dot: its dimension numbers name dimensions its operands do not have"
    if len(ragged) != 1 or len(group) != 1:
        return "ragged-dot: only a ragged non-contracting lhs dim with an rhs group dim is modelled"
    (r,), (g,) = ragged, group
    if r in lb or r in lc or g in rb or g in rc:
        return "ragged-dot: only a ragged non-contracting lhs dim with an rhs group dim is modelled"
    lfree = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.rank) if d not in rb and d not in rc and d != g]
    out = tuple(lhs.dims[d] for d in lb) + tuple(lhs.dims[d] for d in lfree) + tuple(rhs.dims[d] for d in rfree)
    groups = rhs.dims[g]
    # group sizes: one vector of G per combination of the lhs dims before the ragged dim
    # (batch dims and leading free dims), in lhs order.
    leading = [d for d in range(r) if d not in lc]
    if out != instr.shape.dims or sizes.dims != tuple(lhs.dims[d] for d in leading) + (groups,):
        return "ragged-dot: shapes do not match its dimension numbers"
    return RaggedDims(lb=lb, rb=rb, lc=lc, rc=rc, r=r, g=g, lfree=lfree, rfree=rfree, leading=leading, groups=groups)


def _out_position(layout: RaggedDims, lhs_dim: int) -> int:
    if lhs_dim in layout["lb"]:
        return layout["lb"].index(lhs_dim)
    return len(layout["lb"]) + layout["lfree"].index(lhs_dim)


def _runtime(instr: Instruction, layout: RaggedDims) -> list[RuntimeVar]:
    rows = instr.operands[0].shape.dims[layout["r"]]
    return [
        RuntimeVar(Interval(0, layout["groups"] - 1), "group of this row (from group_sizes)"),
        RuntimeVar(Interval(0, rows), "rows covered by the groups (sum of group_sizes)"),
    ]


@output_to_input_rule("ragged-dot", reads=_READS)
def ragged_dot_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    layout = ragged_layout(instr)
    if isinstance(layout, str):
        return [OperandMaps(k, (IndexingMap.undefined(layout),)) for k in range(len(instr.operands))]
    lhs, rhs, _ = (o.shape for o in instr.operands)
    domain = [full_interval(n) for n in instr.shape.dims]
    contracted = [full_interval(lhs.dims[d]) for d in layout["lc"]]
    row = dim(_out_position(layout, layout["r"]))
    covered = [(row - runtime_var(1), Interval(-lhs.dims[layout["r"]], -1))]  # row < rows covered
    lhs_results: list[Expr] = [None] * lhs.rank  # type: ignore[list-item]
    for d in range(lhs.rank):
        lhs_results[d] = range_var(layout["lc"].index(d)) if d in layout["lc"] else dim(_out_position(layout, d))
    rhs_results: list[Expr] = [None] * rhs.rank  # type: ignore[list-item]
    first_rhs_free = len(layout["lb"]) + len(layout["lfree"])
    for d in range(rhs.rank):
        if d == layout["g"]:
            rhs_results[d] = runtime_var(0)
        elif d in layout["rb"]:
            rhs_results[d] = dim(layout["rb"].index(d))
        elif d in layout["rc"]:
            rhs_results[d] = range_var(layout["rc"].index(d))
        else:
            rhs_results[d] = dim(first_rhs_free + layout["rfree"].index(d))
    runtime = _runtime(instr, layout)
    lhs_map = IndexingMap(domain, contracted, runtime, lhs_results, covered)
    rhs_map = IndexingMap(domain, contracted, runtime, rhs_results, covered)
    sizes_results = [dim(_out_position(layout, d)) for d in layout["leading"]] + [range_var(0)]
    sizes_map = IndexingMap(domain, [full_interval(layout["groups"])], (), sizes_results)
    return [OperandMaps(0, (lhs_map,)), OperandMaps(1, (rhs_map,)), OperandMaps(2, (sizes_map,))]


@input_to_output_rule("ragged-dot", reads=_READS)
def ragged_dot_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    reason = "ragged-dot: input-to-output maps are not modelled (use output-to-input)"
    return [(IndexingMap.undefined(reason),)]
