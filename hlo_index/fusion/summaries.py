"""Every output of a computation at once: per-value summaries built bottom-up.

For each value X (in post-order) the summary holds the maps from X's index space to each parameter
it depends on: ``P(X)[p] = ∪ P(operand)[p] ∘ op_map`` over X's operand maps. A root with hundreds
of outputs (a training step returns every updated weight) then costs one pass over the graph instead
of one per output, and values that pass through elementwise ops share their operand's summary
object unchanged. The top-down walk costs (outputs × values they reach); this one (values ×
parameters they reach); ``bottom_up_is_cheaper`` counts both with bitsets and picks.

Work is bounded (``hlo_index.context.Budgets``): past ``compositions_per_pass`` compositions in one
computation the remaining maps become UNDEFINED with a reason naming the budget, as does a value
reached through more than ``maps_per_value`` patterns.
"""
from __future__ import annotations

from ..affine import IndexingMap
from ..affine.expr import DIM
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from . import rule_cache
from .mapset import Maps, compaction_threshold, distinct, finalize, union
from .rule_cache import full_box, output_to_input_steps

# (parameter number, tuple element) -> maps from one value to that parameter
Summary = dict[tuple[int, int], Maps]


def _param_bits(order: list[Instruction]) -> dict[int, int]:
    """id(instr) -> bitset of the parameters (by post-order position) it depends on."""
    bits: dict[int, int] = {}
    for k, instr in enumerate(order):
        b = 1 << k if instr.opcode == "parameter" else 0
        for o in instr.operands:
            b |= bits.get(id(o), 0)
        bits[id(instr)] = b
    return bits


def bottom_up_is_cheaper(comp: Computation, order: list[Instruction]) -> bool:
    """Compare (values × parameters they reach) with (outputs × values each output reaches)."""
    root = comp.root
    if root is None or root.opcode != "tuple":
        return False
    params = _param_bits(order)
    bottom_up = sum(b.bit_count() for b in params.values())
    # top-down: bitset of the root's outputs that reach each value, in reverse post-order
    reach: dict[int, int] = {id(o): 0 for o in order}
    for j, o in enumerate(root.operands):
        reach[id(o)] |= 1 << j
    top_down = 0
    for instr in reversed(order):
        r = reach[id(instr)]
        top_down += r.bit_count()
        if instr is not root:
            for o in instr.operands:
                reach[id(o)] |= r
    return bottom_up < top_down


class _Budget:
    """The compositions left for one pass, and the pass's memo of (summary map, op map) pairs."""

    __slots__ = ("left", "reason", "done")

    def __init__(self, comp: Computation) -> None:
        self.done: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, IndexingMap]] = {}
        self.left = limit = current().budgets.compositions_per_pass
        self.reason = budget_reason("compositions_per_pass", limit,
                                    f"analysis of '{comp.name}' stopped composing maps "
                                    "(too many distinct access paths)")


# A summary map whose results and constraints use no dimension (it reads the same parameter
# elements whatever element of its value is asked) composes with any total op map by taking the
# op map's domain: no composition or simplification needed.
# Identity memos per analysis context: id(map) -> (map, answer), the map kept and checked.
_DIM_FREE = register_table("fusion.summaries.dim_free")
_REDOMAINED = register_table("fusion.summaries.redomained")
_TOTAL = register_table("fusion.summaries.total")


def _dim_free(m: IndexingMap, value_dims: tuple[int, ...]) -> bool:
    memo = current().tables[_DIM_FREE]
    hit = memo.get(id(m))
    if hit is None or hit[0] is not m:
        free = (not m.is_undefined and not m.is_known_empty and not m.runtime_vars
                and all(v.kind != DIM for e in (*m.results, *(c for c, _ in m.constraints))
                        for v in e.variables()))
        hit = memo[id(m)] = (m, free)
    return hit[1] and m.dims == full_box(value_dims)


def _total(r: IndexingMap) -> bool:
    """Every point of ``r``'s domain has an image (no constraints to fail, no empty range)."""
    memo = current().tables[_TOTAL]
    hit = memo.get(id(r))
    if hit is None or hit[0] is not r:
        total = (not r.constraints and not r.runtime_vars and not r.is_undefined and not r.is_known_empty
                 and all(iv.size > 0 for iv in (*r.dims, *r.range_vars)))
        hit = memo[id(r)] = (r, total)
    return hit[1]


def _redomained(m: IndexingMap, dims) -> IndexingMap:
    key = (id(m), dims)
    memo = current().tables[_REDOMAINED]
    hit = memo.get(key)
    if hit is not None and hit[0] is m:
        return hit[1]
    out = IndexingMap(dims, m.range_vars, (), m.results, m.constraints).simplified()
    memo[key] = (m, out)
    return out


def _compose(summary_map: IndexingMap, op_map: IndexingMap, instr: Instruction,
             value_dims: tuple[int, ...], budget: _Budget) -> IndexingMap:
    """``summary_map ∘ op_map``: from ``instr``'s output, through its operand (``value_dims``)."""
    key = (id(summary_map), id(op_map))
    hit = budget.done.get(key)
    if hit is not None and hit[0] is summary_map and hit[1] is op_map:
        return hit[2]
    out = _compose_new(summary_map, op_map, instr, value_dims, budget)
    if not out.is_undefined:   # UNDEFINED reasons name the instruction
        budget.done[key] = (summary_map, op_map, out)
    return out


def _compose_new(summary_map: IndexingMap, op_map: IndexingMap, instr: Instruction,
                 value_dims: tuple[int, ...], budget: _Budget) -> IndexingMap:
    if summary_map.is_undefined:
        return summary_map
    if op_map.is_undefined:
        from .compose import blame
        return IndexingMap.undefined(blame(instr, op_map.undefined_reason))
    if summary_map.is_known_empty or op_map.is_known_empty:
        return IndexingMap.known_empty(op_map.num_dims, summary_map.num_results)
    if _total(op_map) and _dim_free(summary_map, value_dims):
        return _redomained(summary_map, op_map.dims)
    if budget.left <= 0:
        return IndexingMap.undefined(budget.reason)
    budget.left -= 1
    from .compose import compose_step
    return compose_step(summary_map, op_map, instr, value_dims)


def _through(src: Summary, op_maps: Maps, instr: Instruction, value_dims, budget: _Budget) -> Summary:
    """Every entry of ``src`` composed with ``op_maps``; one map tuple shared by several entries
    (values pass their sets along unchanged) is composed once."""
    out = {}
    done: dict[int, tuple[Maps, Maps]] = {}
    for key, maps in src.items():
        hit = done.get(id(maps))
        if hit is None:
            hit = done[id(maps)] = (maps, distinct([_compose(m, r, instr, value_dims, budget)
                                                    for r in op_maps for m in maps]))
        out[key] = hit[1]
    return out


def _merge(acc: Summary | None, shared: bool, contrib: Summary) -> tuple[Summary, bool]:
    """``acc ∪ contrib``; ``shared`` says ``acc`` is another value's dict (copy before writing)."""
    if acc is None:
        return contrib, True
    if contrib is acc or not contrib:
        return acc, shared
    if shared:
        acc = dict(acc)
    for key, maps in contrib.items():
        prev = acc.get(key)
        acc[key] = maps if prev is None else union(prev, maps)
    return acc, False


def _compacted(summary: Summary) -> Summary:
    """``summary`` with every set past ``compaction_threshold`` compacted (exact merges) before
    the value's users compose it: a weight read through a whole training step gathers dozens of
    maps that fewer describe, and every later composition pays per map."""
    limit = compaction_threshold()
    if type(summary) is not dict or all(len(maps) <= limit for maps in summary.values()):
        return summary   # unchanged: a dict shared with an operand stays shared
    return {key: finalize(maps) if len(maps) > limit else maps for key, maps in summary.items()}


def bottom_up_output_to_input(comp: Computation, order: list[Instruction]) -> list[dict]:
    """For every output of ``comp``'s root, the maps to every parameter (sorted by parameter)."""
    root = comp.root
    budget = _Budget(comp)
    summaries: dict[int, list[Summary]] = {}   # id(instr) -> per output element
    empty: Summary = {}
    for instr in order:
        shape = instr.shape
        if instr.opcode == "parameter":
            summaries[id(instr)] = [{(instr.parameter_number, e): (rule_cache.identity(shape.leaf(e).dims),)}
                                    for e in range(shape.num_outputs)]
            continue
        if instr is root:
            break
        per_output = []
        for out in range(shape.num_outputs):
            acc, shared = None, False
            for position, element, op_maps, passthrough in output_to_input_steps(instr, out):
                operand = instr.operands[position]
                src = summaries[id(operand)]
                src = src[element] if element < len(src) else empty
                if not src:
                    continue
                contrib = src if passthrough else _through(src, op_maps, instr, operand.shape.leaf(element).dims, budget)
                acc, shared = _merge(acc, shared, contrib)
            per_output.append(_compacted(acc) if acc is not None else empty)
        summaries[id(instr)] = per_output
    results = []
    for out in range(root.shape.num_outputs):
        acc, shared = None, False
        for position, element, op_maps, passthrough in output_to_input_steps(root, out):
            operand = root.operands[position]
            src = summaries[id(operand)]
            src = src[element] if element < len(src) else empty
            if src:
                contrib = src if passthrough else _through(src, op_maps, root, operand.shape.leaf(element).dims, budget)
                acc, shared = _merge(acc, shared, contrib)
        results.append({key: finalize(maps) for key, maps in sorted((acc or empty).items())})
    return results


def clear() -> None:
    tables = current().tables
    for slot in (_TOTAL, _DIM_FREE, _REDOMAINED):
        tables.pop(slot, None)
