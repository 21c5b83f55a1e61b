"""The budgeted walks through one computation, op by op.

Backward (``walk_to_parameters``): from maps deposited on some values (the root's output, or a
GPU emitter's thread maps), in reverse post-order toward the parameters, keeping for each value
the set of maps that reach it; each operand receives ``operand_map ∘ map_to_value``. Forward
(``forward_input_to_output``): from one parameter toward the root, each user receiving
``user_map ∘ map_to_operand``. Every composition is simplified and the sets deduplicated as they
grow, which keeps the walks linear in practice. A walk composes at most
``Budgets.compositions_per_pass`` maps (``WalkBudget``); past that, compositions give UNDEFINED
naming the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..affine import IndexingMap
from ..context import budget_reason, current, register_table
from ..hlo.model import Computation, Instruction
from ..ops import OUTPUT_TO_INPUT
from ..ops.rules_elementwise import elementwise_output_to_input
from .existential import drop_witness_range_vars
from .mapset import Maps, distinct, finalize, shared, union
from .rule_cache import ForwardStep, composed, identity, input_to_output_steps, is_identity_on, output_to_input_steps
from .traverse import Users, post_order, tuple_element, users_of

# (parameter number, tuple element of that parameter) -> distinct maps
ParameterMaps = dict[tuple[int, int], tuple[IndexingMap, ...]]


class Walk:
    """Post-order of a computation; its users table is built only when a forward walk needs it."""

    __slots__ = ("order", "_users")

    def __init__(self, order: list[Instruction]) -> None:
        self.order = order
        self._users: Users | None = None

    @property
    def users(self) -> Users:
        if self._users is None:
            self._users = users_of(self.order)
        return self._users


# id(comp) -> (comp, walk) per analysis context: an identity memo, the object kept and checked
_WALKS = register_table("fusion.walk.walks")
# (id(op maps), id(maps to the value), value dims) -> (op maps, maps to the value, their steps)
_STEPS = register_table("fusion.walk.steps")


def walk_of(comp: Computation) -> Walk:
    walks: dict[int, tuple[Computation, Walk]] = current().tables[_WALKS]
    hit = walks.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    walk = Walk(post_order(comp))
    walks[id(comp)] = (comp, walk)
    return walk


def blame(instr: Instruction, reason: str) -> str:
    """An UNDEFINED reason that names the op responsible."""
    return reason if instr.opcode in reason else f"{instr.opcode}: {reason}"


def compose_step(
    op_map: IndexingMap, to_value: IndexingMap, instr: Instruction, value_dims: tuple[int, ...] | None = None
) -> IndexingMap:
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
    return composed(op_map, to_value)


class WalkBudget:
    """``compositions_per_pass`` for one walk: past it, compositions give UNDEFINED naming it
    (which still reaches every parameter / output it would have: never "not read").

    A subclass that composes differently overrides ``compose`` and gives its own ``steps_table``
    (its answers are not the plain walks'), with ``opcode_in_key`` when ``compose`` may name the
    op (then two ops sharing one op-map set do not share an answer)."""

    __slots__ = ("left", "_limit", "_comp", "_spent")
    steps_table = _STEPS
    opcode_in_key = False

    def __init__(self, comp: Computation) -> None:
        self.left = self._limit = current().budgets.compositions_per_pass
        self._comp = comp
        self._spent: IndexingMap | None = None  # the UNDEFINED map of every step past the budget

    @property
    def reason(self) -> str:
        # spelled only for a walk that runs out (most never do): two per fusion otherwise
        return budget_reason(
            "compositions_per_pass", self._limit, f"a walk through '{self._comp.name}' stopped composing maps"
        )

    def compose(
        self, op_map: IndexingMap, to_value: IndexingMap, instr: Instruction, value_dims: tuple[int, ...]
    ) -> IndexingMap:
        return compose_step(op_map, to_value, instr, value_dims)

    def step(
        self, op_map: IndexingMap, to_value: IndexingMap, instr: Instruction, value_dims: tuple[int, ...]
    ) -> IndexingMap:
        if self.left <= 0 and not to_value.is_undefined:
            # one object for them all: the sets it joins tell it apart by identity, not by key
            if self._spent is None:
                self._spent = IndexingMap.undefined(self.reason)
            return self._spent
        self.left -= 1
        return self.compose(op_map, to_value, instr, value_dims)

    def steps(self, op_maps: Maps, to_value: Maps, instr: Instruction, value_dims: tuple[int, ...]) -> Maps:
        """The distinct ``step`` of every (op map, map to the value) pair.

        Walks send the same shared sets through the same shared op-rule maps again and again
        (each broadcast of a layer norm's scale, in every fused computation that has one): while
        the budget covers every pair, the answer depends on the two sets alone and is memoised by
        identity. An UNDEFINED op map names ``instr``'s opcode: such sets are not shared."""
        count = len(op_maps) * len(to_value)
        if self.left < count:
            return distinct([self.step(op_map, m, instr, value_dims) for op_map in op_maps for m in to_value])
        memo: dict[tuple[object, ...], tuple[Maps, Maps, Maps]] = current().tables[self.steps_table]
        key = (
            (id(op_maps), id(to_value), value_dims, instr.opcode)
            if self.opcode_in_key
            else (id(op_maps), id(to_value), value_dims)
        )
        hit = memo.get(key)
        self.left -= count
        if hit is not None and hit[0] is op_maps and hit[1] is to_value:
            return hit[2]
        compose = self.compose
        new = distinct([compose(op_map, m, instr, value_dims) for op_map in op_maps for m in to_value])
        if not any(m.is_undefined for m in op_maps):
            memo[key] = (op_maps, to_value, new)  # keeps both sets alive: their ids stay theirs
        return new


def _deposit(
    arrays: dict[int, Maps], tuples: dict[int, dict[int, Maps]], operand: Instruction, element: int, maps: Maps
) -> None:
    tuple_shapes = operand.shape.tuple_shapes
    if tuple_shapes is not None:
        if element >= len(tuple_shapes):
            return  # an opaque op's operand () has no element to read
        per_element = tuples.setdefault(id(operand), {})
        per_element[element] = union(per_element.get(element, ()), maps)
    else:
        arrays[id(operand)] = union(arrays.get(id(operand), ()), maps)


def walk_to_parameters(
    comp: Computation,
    seeds: Iterable[tuple[Instruction, int, Maps]],
    budget: WalkBudget,
    stop: frozenset[int] = frozenset(),
) -> dict[tuple[int, int], Maps]:
    """The maps that reach each (parameter number, tuple element) from ``seeds`` (instruction,
    its output element, maps into that element), walking back through ``comp``; the sets are
    not finalised, and come in the order the walk reaches them. Nothing is walked through an
    instruction whose ``id`` is in ``stop``."""
    order = walk_of(comp).order
    arrays: dict[int, Maps] = {}
    tuples: dict[int, dict[int, Maps]] = {}
    for instr, element, maps in seeds:
        _deposit(arrays, tuples, instr, element, maps)
    reached: dict[tuple[int, int], Maps] = {}
    items: Iterable[tuple[int, Maps]]
    rules = OUTPUT_TO_INPUT
    for instr in reversed(order):
        shape = instr.shape
        if shape.tuple_shapes is not None:
            per_element = tuples.pop(id(instr), None)
            if not per_element:
                continue
            items = sorted(per_element.items())
        else:
            array_maps = arrays.pop(id(instr), None)
            if not array_maps:
                continue
            opcode = instr.opcode
            if rules.get(opcode) is elementwise_output_to_input and id(instr) not in stop:
                # most of every fusion: an elementwise op whose operands all have its dims reads
                # each through the identity (output_to_input_steps' first case), so each operand
                # receives the very maps that reach the op
                dims = shape.dims
                operands = instr.operands
                for o in operands:
                    o_shape = o.shape
                    if o_shape is not shape and (o_shape.dims != dims or o_shape.tuple_shapes is not None):
                        break
                else:
                    for operand in operands:
                        key = id(operand)
                        known = arrays.get(key)
                        arrays[key] = array_maps if known is None or known is array_maps else union(known, array_maps)
                    continue
            items = ((0, array_maps),)
        if instr.opcode == "parameter":
            for element, maps in items:
                reached[(instr.parameter_number, element)] = maps  # type: ignore[index]  # a parameter has its number
            continue
        if id(instr) in stop:
            continue
        operands = instr.operands
        for out, to_value in items:
            value_dims = shape.leaf(out).dims
            for position, element, op_maps, passthrough in output_to_input_steps(instr, out):
                new = to_value if passthrough else budget.steps(op_maps, to_value, instr, value_dims)
                operand = operands[position]
                if operand.shape.tuple_shapes is None:  # _deposit's array case, inline: most deposits
                    key = id(operand)
                    known = arrays.get(key)
                    arrays[key] = new if known is None or known is new else union(known, new)
                else:
                    _deposit(arrays, tuples, operand, element, new)
    return reached


def top_down_output_to_input(comp: Computation, output_index: int) -> ParameterMaps:
    """Maps from one output of the root to every parameter, walking back from the root."""
    root = comp.root
    if root is None:
        return {}
    start = shared((identity(root.shape.leaf(output_index).dims),))  # one set object: steps memoised by identity hit
    reached = walk_to_parameters(comp, ((root, output_index, start),), WalkBudget(comp))
    return dict(sorted((key, finalize(maps)) for key, maps in reached.items()))


# opcode -> (instruction, operand position, tuple element) -> per output, the maps from that element
# of the tuple-shaped operand: ops that tell a tuple operand's elements apart (registered by their rules)
ElementInputToOutput = Callable[[Instruction, int, int], list[tuple[IndexingMap, ...]]]
ELEMENT_INPUT_TO_OUTPUT: dict[str, ElementInputToOutput] = {}


def user_steps(instr: Instruction, element: int, user: Instruction, position: int) -> tuple[ForwardStep, ...]:
    """Steps from element ``element`` of ``instr`` into ``user`` (its operand ``position``)."""
    if instr.shape.is_tuple and user.opcode in ("opt-barrier", "all-reduce-done"):
        # the barrier's output is its operand, and the done of an all-reduce of several operands
        # is its start's tuple of sums: element ``element`` lands in element ``element``
        leaf = user.shape.leaf(element) if element < user.shape.num_outputs else None
        if leaf is not None and not leaf.is_tuple and leaf.dims == instr.shape.leaf(element).dims:
            return ((element, (identity(leaf.dims),), True),)
    by_element = ELEMENT_INPUT_TO_OUTPUT.get(user.opcode) if instr.shape.is_tuple else None
    if by_element is not None:
        return tuple((out, maps, False) for out, maps in enumerate(by_element(user, position, element)) if maps)
    if instr.shape.is_tuple and user.opcode != "get-tuple-element":
        reason = f"{user.opcode}: consumes the tuple-shaped value '{instr.name}' whole"
        return tuple((out, (IndexingMap.undefined(reason),), False) for out in range(user.shape.num_outputs))
    if instr.shape.is_tuple and tuple_element(user) != element:
        return ()
    return input_to_output_steps(user, position)


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
        return {
            element: IndexingMap.undefined(
                f"parameter: element {element} of '{param.name}' is itself a tuple (nested elements are not addressed)"
            )
        }
    return {element: identity(leaf.dims)}


def forward_input_to_output(
    comp: Computation, parameter_number: int, element: int | None = None
) -> list[tuple[IndexingMap, ...]]:
    """Maps from one parameter (or one element of a tuple-shaped one) to each output of the
    root, walking forward from it."""
    walk = walk_of(comp)
    root = comp.root
    if root is None:
        return []
    budget = WalkBudget(comp)
    param = comp.parameters.get(parameter_number)
    state: dict[tuple[int, int], Maps] = {}
    if param is not None and any(i is param for i in walk.order):
        for e, start in _start(param, element).items():
            state[(id(param), e)] = (start,)
    for instr in walk.order:
        if instr is root:
            break
        for value_element in range(instr.shape.num_outputs):
            to_value = state.get((id(instr), value_element))
            if not to_value:
                continue
            value_dims = instr.shape.leaf(value_element).dims
            for user, position in walk.users.get(id(instr), ()):
                for out, op_maps, passthrough in user_steps(instr, value_element, user, position):
                    new = to_value if passthrough else budget.steps(op_maps, to_value, user, value_dims)
                    key = (id(user), out)
                    state[key] = union(state.get(key, ()), new)
    outputs = []
    for out in range(root.shape.num_outputs):
        maps = state.get((id(root), out))
        outputs.append(finalize(maps) if maps else ())
    return outputs
