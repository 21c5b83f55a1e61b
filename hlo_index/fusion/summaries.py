"""Every output of a computation at once: per-value summaries built bottom-up.

For each value X (in post-order) the summary holds the maps from X's index space to each parameter
it depends on: ``P(X)[p] = ∪ P(operand)[p] ∘ op_map`` over X's operand maps. A root with hundreds
of outputs (a training step returns every updated weight) then costs one pass over the graph instead
of one per output, and values that pass through elementwise ops share their operand's summary
object unchanged. The top-down walk costs (outputs × values they reach); this one (values ×
parameters they reach); ``bottom_up_is_cheaper`` counts both with bitsets and picks.

Work is bounded (``hlo_index.context.Budgets``), and a budget hit degrades one value, not the pass.
A value whose summary reaches more than ``endpoints_per_value`` parameters (every value downstream
of a big model's loss reaches nearly every weight) becomes a :class:`Collapsed` summary: the exact
set of parameters it reaches, each through one UNDEFINED map naming the budget and the value. Past
``compositions_per_pass`` compositions in one computation, the values not yet summarised collapse
the same way; a value reached through more than ``maps_per_value`` patterns is UNDEFINED too.
Composing an UNDEFINED map gives UNDEFINED, so a collapsed summary passes through every op as it
is and costs one set union per merge instead of one composition per parameter.
"""
from __future__ import annotations

from ..affine import IndexingMap
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from . import rule_cache
from .mapset import Maps, compaction_threshold, distinct, finalize, union
from .rule_cache import full_box, output_to_input_steps

# (parameter number, tuple element) -> maps from one value to that parameter; or Collapsed
Summary = dict[tuple[int, int], Maps]


class Collapsed:
    """A summary past ``endpoints_per_value``: every key it reaches, each read through the same
    UNDEFINED map (immutable: values share it as they share dicts)."""

    __slots__ = ("keys", "maps")

    def __init__(self, keys: frozenset, maps: Maps) -> None:
        self.keys = keys
        self.maps = maps

    def __len__(self) -> int:
        return len(self.keys)

    def items(self):
        return ((key, self.maps) for key in self.keys)

    def __contains__(self, key) -> bool:
        return key in self.keys

    def __getitem__(self, key) -> Maps:
        if key not in self.keys:
            raise KeyError(key)
        return self.maps

    def joined(self, other) -> "Collapsed":
        """This summary with every key of ``other`` (a dict or Collapsed) read through its map."""
        keys = other.keys if isinstance(other, Collapsed) else other.keys()
        if self.keys.issuperset(keys):
            return self
        return Collapsed(self.keys.union(keys), self.maps)


def capped(acc, instr: Instruction, what: str, budget: "_Budget"):
    """``acc``, or ``acc`` collapsed when it reaches more than ``endpoints_per_value`` keys or
    when the pass has spent its ``compositions_per_pass`` (the values left are not summarised)."""
    if type(acc) is not dict or not acc:
        return acc
    if budget.left <= 0:
        return Collapsed(frozenset(acc), (IndexingMap.undefined(budget.reason),))
    limit = current().budgets.endpoints_per_value
    if len(acc) <= limit:
        return acc
    reason = budget_reason("endpoints_per_value", limit,
                           f"'{instr.name}' depends on {len(acc)} {what}; its maps are not composed")
    return Collapsed(frozenset(acc), (IndexingMap.undefined(reason),))


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
_REDOMAINED = register_table("fusion.summaries.redomained")
_TOTAL = register_table("fusion.summaries.total")


def _dim_free(m: IndexingMap, value_dims: tuple[int, ...]) -> bool:
    return (not m.is_undefined and not m.is_known_empty and not m.runtime_vars and not m.uses_dims
            and m.dims == full_box(value_dims))


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
    s = m.simplified()
    if s.is_known_empty:
        out = IndexingMap.known_empty(len(dims), s.num_results, len(s.range_vars))
    else:
        out = s.with_dims(dims)   # dim-free: as simplified as s is
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
    (values pass their sets along unchanged) is composed once. UNDEFINED composed with anything is
    UNDEFINED: a collapsed summary goes through unchanged."""
    if type(src) is Collapsed:
        return src
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
    # Collapsed absorbs: a key's known maps joined with UNDEFINED are UNDEFINED (never "not read")
    if type(acc) is Collapsed:
        return acc.joined(contrib), True
    if type(contrib) is Collapsed:
        return contrib.joined(acc), True
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
    uses = _uses(order)
    empty: Summary = {}
    what = f"parameters of '{comp.name}'"
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
            per_output.append(_compacted(capped(acc, instr, what, budget)) if acc is not None else empty)
        summaries[id(instr)] = per_output
        _release(instr, uses, summaries)
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
        acc = capped(acc, root, what, budget) if acc is not None else empty
        results.append({key: finalize(maps) for key, maps in sorted(acc.items())})
    return results


def _uses(order: list[Instruction]) -> dict[int, int]:
    """id(instr) -> how many operand slots of later instructions read it."""
    uses: dict[int, int] = {}
    for instr in order:
        for o in instr.operands:
            uses[id(o)] = uses.get(id(o), 0) + 1
    return uses


def _release(instr: Instruction, uses: dict[int, int], summaries: dict) -> None:
    """Forget the summaries no later instruction reads (a big ENTRY's peak memory)."""
    for o in instr.operands:
        left = uses[id(o)] = uses[id(o)] - 1
        if left == 0:
            summaries.pop(id(o), None)
