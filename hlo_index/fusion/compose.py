"""Indexing maps of a whole computation, composed op by op.

Output to input: walk from the root toward the parameters (reverse post-order), keeping for each
(instruction, tuple element) the set of maps from the target output to that value; each operand
receives ``operand_map ∘ map_to_instruction``. Input to output: walk forward from one parameter,
each user receiving ``user_map ∘ map_to_operand``. Every composition is simplified and the sets
deduplicated as they grow, which keeps the walk linear in practice.

Results are memoised per computation object and, when they carry no instance-specific text
(runtime-variable descriptions, UNDEFINED reasons), per structural fingerprint too.
"""
from __future__ import annotations

from ..affine import IndexingMap, Interval, dim
from ..hlo.model import Computation, Instruction
from . import rule_cache
from .fingerprint import computation_fingerprint
from .mapset import MapSet
from .traverse import post_order, tuple_element, users_of

# (parameter number, tuple element of that parameter) -> distinct maps
ParameterMaps = dict[tuple[int, int], tuple[IndexingMap, ...]]


class _Walk:
    """Post-order of a computation; its users table is built only when a forward walk needs it."""

    __slots__ = ("order", "_users")

    def __init__(self, order: list[Instruction]) -> None:
        self.order = order
        self._users: dict[int, list[tuple[Instruction, int]]] | None = None

    @property
    def users(self) -> dict[int, list[tuple[Instruction, int]]]:
        if self._users is None:
            self._users = users_of(self.order)
        return self._users


_WALKS: dict[int, tuple[Computation, _Walk]] = {}
_BY_OBJECT: dict[tuple[int, str, int], tuple[Computation, object]] = {}
_BY_FINGERPRINT: dict[tuple[str, str, int], object] = {}
_FINGERPRINTS: dict[int, tuple[Computation, str]] = {}


def clear_cache() -> None:
    """Forget every memoised analysis (tests; long-lived processes loading many modules)."""
    _WALKS.clear()
    _BY_OBJECT.clear()
    _BY_FINGERPRINT.clear()
    _FINGERPRINTS.clear()
    rule_cache.clear()


def _walk(comp: Computation) -> _Walk:
    hit = _WALKS.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    walk = _Walk(post_order(comp))
    _WALKS[id(comp)] = (comp, walk)
    return walk


def _fingerprint(comp: Computation) -> str:
    hit = _FINGERPRINTS.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    fp = computation_fingerprint(comp)
    _FINGERPRINTS[id(comp)] = (comp, fp)
    return fp


def _portable(maps) -> bool:
    """True when the maps mention nothing specific to one computation's instruction names."""
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def _memoised(comp: Computation, direction: str, index: int, compute):
    key = (id(comp), direction, index)
    hit = _BY_OBJECT.get(key)
    if hit is not None and hit[0] is comp:
        return hit[1]
    fp_key = (_fingerprint(comp), direction, index)
    result = _BY_FINGERPRINT.get(fp_key)
    if result is None:
        result = compute(comp, index)
        if _portable(_all_maps(result)):
            _BY_FINGERPRINT[fp_key] = result
    _BY_OBJECT[key] = (comp, result)
    return result


def _all_maps(result):
    values = result.values() if isinstance(result, dict) else result
    for maps in values:
        yield from maps


def blame(instr: Instruction, reason: str) -> str:
    """An UNDEFINED reason that names the op responsible."""
    return reason if instr.opcode in reason else f"{instr.opcode}: {reason}"


def compose_step(op_map: IndexingMap, to_value: IndexingMap, instr: Instruction,
                 value_dims: tuple[int, ...] | None = None) -> IndexingMap:
    """``op_map ∘ to_value``, simplified; UNDEFINED and KNOWN EMPTY propagate.

    Range variables no result or constraint uses are dropped (a reduction upstream of a
    broadcast leaves one), so equal relations get equal canonical forms. ``value_dims`` is the
    shape of the value between the two maps (``to_value`` lands in it, ``op_map`` starts from it).
    """
    if to_value.is_undefined:
        return to_value
    if op_map.is_undefined:
        return IndexingMap.undefined(blame(instr, op_map.undefined_reason))
    if to_value.is_known_empty or op_map.is_known_empty:
        return IndexingMap.known_empty(to_value.num_dims, op_map.num_results)
    # Elementwise ops and the root's start map are identities: composing with one changes nothing
    # (``to_value`` already lands inside the instruction's shape), and they are most of every fusion.
    if value_dims is not None:
        box = full_box(value_dims)
        if is_identity(op_map) and op_map.dims == box:
            return to_value
        if is_identity(to_value) and to_value.dims == box:
            return op_map.simplified().remove_unused_variables()
    return rule_cache.composed(op_map, to_value)


_IDENTITY_RESULTS: list[tuple] = [()]


def is_identity(m: IndexingMap) -> bool:
    """``(d0, ..., dn) -> (d0, ..., dn)`` with no symbols and no constraints."""
    if m.range_vars or m.runtime_vars or m.constraints or m.is_undefined or m.is_known_empty:
        return False
    n = len(m.dims)
    while len(_IDENTITY_RESULTS) <= n:
        k = len(_IDENTITY_RESULTS)
        _IDENTITY_RESULTS.append(tuple(dim(i) for i in range(k)))
    return m.results == _IDENTITY_RESULTS[n]


_BOXES: dict[tuple[int, ...], tuple[Interval, ...]] = {}


def full_box(dims: tuple[int, ...]) -> tuple[Interval, ...]:
    box = _BOXES.get(dims)
    if box is None:
        box = _BOXES[dims] = tuple(Interval(0, n - 1) for n in dims)
    return box


def _output_to_input(comp: Computation, output_index: int) -> ParameterMaps:
    walk = _walk(comp)
    root = comp.root
    if root is None:
        return {}
    state: dict[tuple[int, int], MapSet] = {
        (id(root), output_index): MapSet([IndexingMap.identity(root.shape.leaf(output_index).dims)])}
    result: ParameterMaps = {}
    for instr in reversed(walk.order):
        if instr.opcode == "parameter":
            for element in range(instr.shape.num_outputs):
                maps = state.pop((id(instr), element), None)
                if maps:
                    result[(instr.parameter_number, element)] = maps.finalized()
            continue
        for out in range(instr.shape.num_outputs):
            to_value = state.pop((id(instr), out), None)
            if not to_value:
                continue
            for operand_maps in rule_cache.output_to_input(instr, out):
                if not operand_maps.maps:
                    continue
                operand = instr.operands[operand_maps.operand]
                target = state.setdefault((id(operand), operand_maps.operand_output), MapSet())
                value_dims = instr.shape.leaf(out).dims
                for op_map in operand_maps.maps:
                    for m in to_value:
                        target.add(compose_step(op_map, m, instr, value_dims))
    return dict(sorted(result.items()))


def _input_to_output(comp: Computation, parameter_number: int) -> list[tuple[IndexingMap, ...]]:
    walk = _walk(comp)
    root = comp.root
    if root is None:
        return []
    param = comp.parameters.get(parameter_number)
    state: dict[tuple[int, int], MapSet] = {}
    if param is not None and any(i is param for i in walk.order):
        if param.shape.is_tuple:
            start = IndexingMap.undefined("parameter: input-to-output maps of a tuple-shaped parameter")
        else:
            start = IndexingMap.identity(param.shape.dims)
        for element in range(param.shape.num_outputs):
            state[(id(param), element)] = MapSet([start])
    for instr in walk.order:
        if instr is root:
            break
        for element in range(instr.shape.num_outputs):
            to_value = state.get((id(instr), element))
            if not to_value:
                continue
            for user, position in walk.users.get(id(instr), ()):
                if instr.shape.is_tuple and user.opcode == "get-tuple-element" and tuple_element(user) != element:
                    continue
                if instr.shape.is_tuple and user.opcode not in ("get-tuple-element",):
                    per_output = [(IndexingMap.undefined(
                        f"{user.opcode}: consumes the tuple-shaped value '{instr.name}' whole"),)
                        for _ in range(user.shape.num_outputs)]
                else:
                    per_output = rule_cache.input_to_output(user, position)
                value_dims = instr.shape.leaf(element).dims
                for out, op_maps in enumerate(per_output):
                    if not op_maps:
                        continue
                    target = state.setdefault((id(user), out), MapSet())
                    for op_map in op_maps:
                        for m in to_value:
                            target.add(compose_step(op_map, m, user, value_dims))
    outputs = []
    for out in range(root.shape.num_outputs):
        maps = state.get((id(root), out))
        outputs.append(maps.finalized() if maps else ())
    return outputs


def computation_output_to_input(comp: Computation, output_index: int = 0) -> ParameterMaps:
    """Maps from output ``output_index`` of ``comp``'s root to every parameter it reads."""
    return _memoised(comp, "out2in", output_index, _output_to_input)


def computation_input_to_output(comp: Computation, parameter_number: int) -> list[tuple[IndexingMap, ...]]:
    """Maps from parameter ``parameter_number`` to each output of the root (one entry per output)."""
    return _memoised(comp, "in2out", parameter_number, _input_to_output)
