"""Indexing maps of a whole computation, composed op by op.

Output to input, one output at a time: walk from the root toward the parameters (reverse
post-order), keeping for each value the set of maps from the target output to it; each operand
receives ``operand_map ∘ map_to_value``. When a root has many outputs (whole training-step ENTRY
computations) one bottom-up pass serves them all instead (``summaries``); the cheaper walk is
picked from a count of the work each would do. Input to output: walk forward from one parameter,
each user receiving ``user_map ∘ map_to_operand``. Every composition is simplified and the sets
deduplicated as they grow, which keeps the walks linear in practice.

Results are memoised per computation object and, when they carry no instance-specific text
(runtime-variable descriptions, UNDEFINED reasons), per structural fingerprint too.
"""
from __future__ import annotations

from ..affine import IndexingMap
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from . import fingerprint, rule_cache
from .existential import drop_witness_range_vars
from .mapset import Maps, distinct, finalize, union
from .rule_cache import identity, is_identity_on, output_to_input_steps
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


# Per analysis context (hlo_index.context). ``id()`` keys always come with the object itself in
# the value (checked with ``is``): identity memos; shared results are keyed by fingerprint.
_WALKS = register_table("fusion.compose.walks")                  # id(comp) -> (comp, walk)
_BY_OBJECT = register_table("fusion.compose.by_object")          # (id(comp), direction, index) -> (comp, result)
_BY_FINGERPRINT = register_table("fusion.compose.by_fingerprint")  # (fingerprint id, direction, index) -> result


def clear_cache() -> None:
    """Forget every memoised analysis of the current context (``current().clear()``); cold
    timings. Prefer a fresh ``hlo_index.context.AnalysisContext`` per session."""
    current().clear()


def walk_of(comp: Computation) -> _Walk:
    walks = current().tables[_WALKS]
    hit = walks.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    walk = _Walk(post_order(comp))
    walks[id(comp)] = (comp, walk)
    return walk


def _portable(maps) -> bool:
    """True when the maps mention nothing specific to one computation's instruction names."""
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def _all_maps(result):
    values = result.values() if isinstance(result, dict) else result
    for maps in values:
        yield from maps


def _remember(comp: Computation, direction: str, index: int, result) -> None:
    tables = current().tables
    tables[_BY_OBJECT][(id(comp), direction, index)] = (comp, result)
    if _portable(_all_maps(result)):
        tables[_BY_FINGERPRINT][(fingerprint.fingerprint_id(comp), direction, index)] = result


def _memoised(comp: Computation, direction: str, index: int, compute):
    tables = current().tables
    hit = tables[_BY_OBJECT].get((id(comp), direction, index))
    if hit is not None and hit[0] is comp:
        return hit[1]
    result = tables[_BY_FINGERPRINT].get((fingerprint.fingerprint_id(comp), direction, index))
    if result is None:
        result = compute(comp, index)
    _remember(comp, direction, index, result)
    return result


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
        if is_identity_on(op_map, value_dims):
            return to_value
        if is_identity_on(to_value, value_dims):
            return drop_witness_range_vars(op_map.simplified().remove_unused_variables())
    return rule_cache.composed(op_map, to_value)


class _WalkBudget:
    """``compositions_per_pass`` for one walk: past it, compositions give UNDEFINED naming it
    (which still reaches every parameter / output it would have: never "not read")."""

    __slots__ = ("left", "reason")

    def __init__(self, comp: Computation) -> None:
        self.left = limit = current().budgets.compositions_per_pass
        self.reason = budget_reason("compositions_per_pass", limit,
                                    f"a walk through '{comp.name}' stopped composing maps")

    def step(self, op_map: IndexingMap, to_value: IndexingMap, instr: Instruction, value_dims) -> IndexingMap:
        if self.left <= 0 and not to_value.is_undefined:
            return IndexingMap.undefined(self.reason)
        self.left -= 1
        return compose_step(op_map, to_value, instr, value_dims)


def is_identity(m: IndexingMap) -> bool:
    """``(d0, ..., dn) -> (d0, ..., dn)`` with no symbols and no constraints."""
    if m.is_undefined or m.is_known_empty:
        return False
    return is_identity_on(m, tuple(iv.hi + 1 for iv in m.dims)) and all(iv.lo == 0 for iv in m.dims)


def full_box(dims: tuple[int, ...]):
    return rule_cache.full_box(dims)


def _deposit(arrays: dict, tuples: dict, operand: Instruction, element: int, maps: Maps) -> None:
    if operand.shape.is_tuple:
        if element >= len(operand.shape.tuple_shapes):
            return   # an opaque op's operand () has no element to read
        per_element = tuples.setdefault(id(operand), {})
        per_element[element] = union(per_element.get(element, ()), maps)
    else:
        arrays[id(operand)] = union(arrays.get(id(operand), ()), maps)


def top_down_output_to_input(comp: Computation, output_index: int) -> ParameterMaps:
    """Maps from one output of the root to every parameter, walking back from the root."""
    root = comp.root
    if root is None:
        return {}
    order = walk_of(comp).order
    budget = _WalkBudget(comp)
    start = (identity(root.shape.leaf(output_index).dims),)
    arrays: dict[int, Maps] = {}
    tuples: dict[int, dict[int, Maps]] = {}
    if root.shape.is_tuple:
        tuples[id(root)] = {output_index: start}
    else:
        arrays[id(root)] = start
    result: ParameterMaps = {}
    for instr in reversed(order):
        shape = instr.shape
        if shape.tuple_shapes is not None:
            per_element = tuples.pop(id(instr), None)
            if not per_element:
                continue
            items = sorted(per_element.items())
        else:
            maps = arrays.pop(id(instr), None)
            if not maps:
                continue
            items = ((0, maps),)
        if instr.opcode == "parameter":
            for element, maps in items:
                result[(instr.parameter_number, element)] = finalize(maps)
            continue
        operands = instr.operands
        for out, to_value in items:
            value_dims = shape.leaf(out).dims
            for position, element, op_maps, passthrough in output_to_input_steps(instr, out):
                if passthrough:
                    new = to_value
                else:
                    new = distinct([budget.step(op_map, m, instr, value_dims)
                                    for op_map in op_maps for m in to_value])
                operand = operands[position]
                if operand.shape.tuple_shapes is None:   # _deposit's array case, inline: most deposits
                    key = id(operand)
                    arrays[key] = union(arrays.get(key, ()), new)
                else:
                    _deposit(arrays, tuples, operand, element, new)
    return dict(sorted(result.items()))


def _output_to_input(comp: Computation, output_index: int) -> ParameterMaps:
    from .summaries import bottom_up_is_cheaper, bottom_up_output_to_input
    if comp.root is not None and comp.root.shape.num_outputs > 1 and bottom_up_is_cheaper(comp, walk_of(comp).order):
        every = bottom_up_output_to_input(comp, walk_of(comp).order)
        for out, result in enumerate(every):
            if out != output_index:
                _remember(comp, "out2in", out, result)
        return every[output_index]
    return top_down_output_to_input(comp, output_index)


def _input_to_output(comp: Computation, index) -> list[tuple[IndexingMap, ...]]:
    if isinstance(index, tuple):   # (parameter number, tuple element): one element's own walk
        return forward_input_to_output(comp, *index)
    parameter_number = index
    from .output_summaries import all_inputs_to_output, is_cheaper
    walk = walk_of(comp)
    if comp.root is not None and parameter_number in comp.parameters \
            and not comp.parameters[parameter_number].shape.is_tuple and is_cheaper(comp, walk.order, walk.users):
        every = all_inputs_to_output(comp, walk.order, walk.users)
        for number, result in every.items():
            if number != parameter_number:
                _remember(comp, "in2out", number, result)
        return every[parameter_number]
    return forward_input_to_output(comp, parameter_number)


def _start(param: Instruction, element: int | None) -> dict[int, IndexingMap]:
    """Tuple element -> the map a forward walk from ``param`` starts with. ``element`` None: the
    parameter as a whole (a tuple-shaped one is then opaque: its elements are not told apart);
    else only that element of a tuple-shaped parameter, from its own index space."""
    shape = param.shape
    if not shape.is_tuple:
        return {0: identity(shape.dims)}
    if element is None:
        reason = "parameter: input-to-output maps of a tuple-shaped parameter as a whole (ask per element)"
        return {e: IndexingMap.undefined(reason) for e in range(shape.num_outputs)}
    if element >= shape.num_outputs:
        return {}
    leaf = shape.leaf(element)
    if leaf.is_tuple:
        return {element: IndexingMap.undefined(
            f"parameter: element {element} of '{param.name}' is itself a tuple (nested elements are not addressed)")}
    return {element: identity(leaf.dims)}


def forward_input_to_output(comp: Computation, parameter_number: int,
                            element: int | None = None) -> list[tuple[IndexingMap, ...]]:
    """Maps from one parameter (or one element of a tuple-shaped one) to each output of the
    root, walking forward from it."""
    walk = walk_of(comp)
    root = comp.root
    if root is None:
        return []
    budget = _WalkBudget(comp)
    param = comp.parameters.get(parameter_number)
    state: dict[tuple[int, int], Maps] = {}
    if param is not None and any(i is param for i in walk.order):
        for e, start in _start(param, element).items():
            state[(id(param), e)] = (start,)
    from .output_summaries import user_steps
    for instr in walk.order:
        if instr is root:
            break
        for element in range(instr.shape.num_outputs):
            to_value = state.get((id(instr), element))
            if not to_value:
                continue
            value_dims = instr.shape.leaf(element).dims
            for user, position in walk.users.get(id(instr), ()):
                for out, op_maps, passthrough in user_steps(instr, element, user, position):
                    new = to_value if passthrough else distinct(
                        [budget.step(op_map, m, user, value_dims) for op_map in op_maps for m in to_value])
                    key = (id(user), out)
                    state[key] = union(state.get(key, ()), new)
    outputs = []
    for out in range(root.shape.num_outputs):
        maps = state.get((id(root), out))
        outputs.append(finalize(maps) if maps else ())
    return outputs


def computation_output_to_input(comp: Computation, output_index: int = 0) -> ParameterMaps:
    """Maps from output ``output_index`` of ``comp``'s root to every parameter it reads."""
    return _memoised(comp, "out2in", output_index, _output_to_input)


def computation_input_to_output(comp: Computation, parameter_number: int,
                                element: int | None = None) -> list[tuple[IndexingMap, ...]]:
    """Maps from parameter ``parameter_number`` to each output of the root (one entry per output);
    with ``element``, from that element of a tuple-shaped parameter."""
    index = parameter_number if element is None else (parameter_number, element)
    return _memoised(comp, "in2out", index, _input_to_output)
