"""Every output of a computation at once: per-value summaries built bottom-up.

For each value X (in post-order) the summary holds the maps from X's index space to each parameter
it depends on: ``P(X)[p] = ∪ P(operand)[p] ∘ op_map`` over X's operand maps. A root with hundreds
of outputs (a training step returns every updated weight) then costs one pass over the graph instead
of one per output, and values that pass through elementwise ops share their operand's summary
object unchanged. The top-down walk costs (outputs × values they reach); this one (values ×
parameters they reach); ``bottom_up_is_cheaper`` counts both with bitsets and picks.

Budgets and collapsed summaries: ``summary_pass``.
"""

from __future__ import annotations

from ..hlo.model import Computation, Instruction
from .mapset import Maps, compaction_threshold, finalize, finalize_each
from .rule_cache import identity, output_to_input_steps
from .summary_pass import PassBudget, Wide, capped, merge_summaries, read_out, through
from .summary_pass import Summary as EndpointSummary
from .walk import ParameterMaps

# (parameter number, tuple element) -> maps from one value to that parameter; or Wide
Summary = EndpointSummary[tuple[int, int]]


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


def _compacted(summary: Summary, memo: _FinalizedMemo) -> Summary:
    """``summary`` with every set past ``compaction_threshold`` compacted (exact merges) before
    the value's users compose it: a weight read through a whole training step gathers dozens of
    maps that fewer describe, and every later composition pays per map."""
    if type(summary) is Wide:
        exact = _compacted_dict(summary.exact, memo)
        return (
            summary
            if exact is summary.exact
            else Wide(summary.whole, summary.regions, exact, summary.unknown, summary.maps, summary.covered)
        )
    return _compacted_dict(summary, memo)


# the ids of a set's map objects -> (the set, its finalised form): an identity memo for one pass
_FinalizedMemo = dict[tuple[int, ...], tuple[Maps, Maps]]


def _compacted_dict(summary: dict[tuple[int, int], Maps], memo: _FinalizedMemo) -> dict[tuple[int, int], Maps]:
    limit = compaction_threshold()
    if all(len(maps) <= limit for maps in summary.values()):
        return summary  # unchanged: a dict shared with an operand stays shared
    return {key: _finalized(maps, memo) if len(maps) > limit else maps for key, maps in summary.items()}


def _finalized(maps: Maps, memo: _FinalizedMemo) -> Maps:
    """``finalize(maps)``, once per sequence of map objects in a pass: values pass one compacted
    set along through elementwise ops, and each value's summary is compacted again."""
    key = tuple(map(id, maps))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (maps, finalize(maps))
    return hit[1]


def bottom_up_output_to_input(comp: Computation, order: list[Instruction]) -> list[ParameterMaps]:
    """For every output of ``comp``'s root, the maps to every parameter (sorted by parameter)."""
    root = comp.root
    assert root is not None  # the caller picks this pass only for a computation with a root
    parameters = comp.parameters
    budget = PassBudget(comp, lambda key: parameters[key[0]].shape.leaf(key[1]).dims)
    summaries: dict[int, list[Summary]] = {}  # id(instr) -> per output element
    uses = _uses(order)
    empty: Summary = {}
    what = f"parameters of '{comp.name}'"
    finalized: _FinalizedMemo = {}
    for instr in order:
        shape = instr.shape
        if instr.opcode == "parameter":
            summaries[id(instr)] = [
                {(instr.parameter_number, e): (identity(shape.leaf(e).dims),)}  # type: ignore[dict-item]  # a parameter has its number
                for e in range(shape.num_outputs)
            ]
            continue
        if instr is root:
            break
        per_output: list[Summary] = []
        acc: Summary | None
        for out in range(shape.num_outputs):
            acc, shared = None, False
            own = shape.leaf(out).dims
            for position, element, op_maps, passthrough in output_to_input_steps(instr, out):
                operand = instr.operands[position]
                per_element = summaries[id(operand)]
                src = per_element[element] if element < len(per_element) else empty
                if not src:
                    continue
                contrib = (
                    src if passthrough else through(src, op_maps, instr, operand.shape.leaf(element).dims, own, budget)
                )
                acc, shared = merge_summaries(acc, shared, contrib, own, budget)
            per_output.append(
                _compacted(capped(acc, instr, own, what, budget), finalized) if acc is not None else empty
            )
        summaries[id(instr)] = per_output
        _release(instr, uses, summaries)
    results: list[ParameterMaps] = []
    for out in range(root.shape.num_outputs):
        acc, shared = None, False
        own = root.shape.leaf(out).dims
        for position, element, op_maps, passthrough in output_to_input_steps(root, out):
            operand = root.operands[position]
            per_element = summaries[id(operand)]
            src = per_element[element] if element < len(per_element) else empty
            if src:
                contrib = (
                    src if passthrough else through(src, op_maps, root, operand.shape.leaf(element).dims, own, budget)
                )
                acc, shared = merge_summaries(acc, shared, contrib, own, budget)
        summary = read_out(capped(acc, root, own, what, budget), own, budget) if acc is not None else {}
        keys = sorted(summary)
        results.append(dict(zip(keys, finalize_each([summary[key] for key in keys]))))
    return results


def _uses(order: list[Instruction]) -> dict[int, int]:
    """id(instr) -> how many operand slots of later instructions read it."""
    uses: dict[int, int] = {}
    for instr in order:
        for o in instr.operands:
            uses[id(o)] = uses.get(id(o), 0) + 1
    return uses


def _release(instr: Instruction, uses: dict[int, int], summaries: dict[int, list[Summary]]) -> None:
    """Forget the summaries no later instruction reads (a big ENTRY's peak memory)."""
    for o in instr.operands:
        left = uses[id(o)] = uses[id(o)] - 1
        if left == 0:
            summaries.pop(id(o), None)
