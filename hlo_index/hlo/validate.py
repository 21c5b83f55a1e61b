"""Linking and checks after parsing: resolve names into objects, then report what XLA would reject.

Each problem is a Diagnostic with the instruction's (or computation's) line and column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain, islice
from operator import attrgetter

from .attributes import CALLEE_ROLES, MULTI_CALLEE_ROLES, SINGLE_CALLEE_ROLES
from .diagnostics import error
from .literals import check_literal
from .model import Computation, Diagnostic, Instruction, Module, Shape
from .opcodes import OPERAND_COUNTS

_OPERAND_NAMES = attrgetter("operand_names")


def link(module: Module, references: bool = True, read_only: bool = False) -> list[Diagnostic]:
    """Fill ``by_name``, ``root``, ``parameters``, ``operands``, ``called``; return the problems.
    ``references``: whether an operand may be an output reference (``%x#1``); the loader passes
    False for a text without a ``#``. ``read_only``: the computations whose bodies are read only
    (a deferred body is linked when it is read: ``link_computation``)."""
    problems: list[Diagnostic] = []
    module.by_name = {}
    for comp in module.computations:
        if comp.name in module.by_name:
            problems.append(error(f"computation %{comp.name} is defined twice", comp.line, comp.column))
        module.by_name[comp.name] = comp
    # (shape, literal text) -> XLA's complaint or None: a dump repeats a few constants (0, 1, -inf)
    literals: dict[tuple[Shape, str], str | None] = {}
    for comp in module.read_computations() if read_only else module.computations:
        _link_computation(module, comp, problems, literals, references)
    if module.entry is None:
        problems.append(error(f"module {module.name} has no computations", 1, 1))
    return problems


def link_computation(
    module: Module, comp: Computation, literals: dict[tuple[Shape, str], str | None]
) -> list[Diagnostic]:
    """Link one computation of an already linked ``module`` (a body read after the others);
    ``literals``: the constants' memo shared by the module's calls (see ``link``)."""
    problems: list[Diagnostic] = []
    _link_computation(module, comp, problems, literals, references=False)
    return problems


def _link_computation(
    module: Module,
    comp: Computation,
    problems: list[Diagnostic],
    literals: dict[tuple[Shape, str], str | None],
    references: bool = True,
) -> None:
    # one joined text searched in C: a per-name generator costs more than the rest of linking
    if references and "#" in "".join(chain.from_iterable(map(_OPERAND_NAMES, comp.instructions))):
        comp.by_name = {instr.name: instr for instr in comp.instructions}
        _desugar_output_references(comp, problems)
    by_name: dict[str, Instruction] = {}
    roots = []
    params: dict[int, Instruction] = {}
    controlled = []
    # As in XLA's parser an operand must be defined above its user (a later one could close a
    # cycle, which no analysis, nor XLA, gives a meaning): operands are looked up among the names
    # defined so far.
    operands_above = True
    rules = _PARSER_RULES
    for instr in comp.instructions:
        instr.computation = comp
        name = instr.name
        if name in by_name:
            problems.append(error(f"instruction %{name} is defined twice in %{comp.name}", instr.line, instr.column))
        if instr.is_root:
            roots.append(instr)
        op = instr.opcode
        if op == "parameter":
            n = instr.parameter_number
            if n in params:
                problems.append(error(f"parameter number {n} is used twice in %{comp.name}", instr.line, instr.column))
            params[n] = instr  # type: ignore[index]  # the parser numbers every parameter
        names = instr.operand_names
        if names:
            try:
                instr.operands = tuple(map(by_name.__getitem__, names))
            except KeyError:
                operands_above = False
                _report_undefined_operand(comp, instr, by_name, problems)
                by_name[name] = instr
                continue  # the op's own checks read its operands
        by_name[name] = instr
        attrs = instr.attrs
        if attrs:
            if not CALLEE_ROLES.isdisjoint(attrs):
                _link_callees(module, instr, problems)
            if attrs.get("control-predecessors"):
                controlled.append(instr)  # linked below, by any name of the computation
        rule = rules.get(op)
        # most instructions pass: the count and the attributes are checked here, the rest by call
        if rule is not None and (
            (rule[0] is not None and len(names) != rule[0]) or not rule[3] <= attrs.keys() or rule[2] is not None
        ):
            _check_parser_rule(instr, rule, problems)
        if op == "constant" and instr.literal:
            key = (instr.shape, instr.literal)
            if key in literals:
                complaint = literals[key]
            else:
                complaint = literals[key] = check_literal(instr.shape, instr.literal)
            if complaint is not None:
                problems.append(error(f"constant %{name}: {complaint}", instr.line, instr.column))
    comp.by_name = by_name
    comp.operands_above = operands_above
    for instr in controlled:
        _link_control_predecessors(comp, instr, instr.attrs["control-predecessors"], problems)
    comp.parameters = dict(sorted(params.items()))
    if len(roots) > 1:
        r = roots[1]
        problems.append(
            error(f"computation %{comp.name} has more than one ROOT (%{roots[0].name}, %{r.name})", r.line, r.column)
        )
    if roots:
        comp.root = roots[0]
    elif comp.instructions:
        comp.root = comp.instructions[-1]  # XLA: without ROOT the last instruction is the root
        comp.root.is_root = True
    else:
        problems.append(error(f"computation %{comp.name} has no instructions", comp.line, comp.column))
    if params and sorted(params) != list(range(len(params))):
        # the first five numbers missing, found within len(params) + 5 steps (a number may be huge)
        missing = list(islice((k for k in range(max(params)) if k not in params), 5))
        first = comp.parameters[max(params)]
        problems.append(
            error(f"parameter numbers of %{comp.name} are not dense: missing {missing[:5]}", first.line, first.column)
        )


def _report_undefined_operand(
    comp: Computation, instr: Instruction, defined: dict[str, Instruction], problems: list[Diagnostic]
) -> None:
    missing = next(n for n in instr.operand_names if n not in defined)
    if missing == instr.name or any(other.name == missing for other in comp.instructions):
        where = "is the instruction itself" if missing == instr.name else "is defined only below it"
        message = (
            f"operand %{missing} of %{instr.name} {where} in %{comp.name} (XLA: instruction does not exist: {missing})"
        )
    elif any(other.name == missing.partition("#")[0] for other in comp.instructions):
        return  # an output reference past the instruction's outputs, reported with the references
    else:
        message = f"operand %{missing} of %{instr.name} is not defined in %{comp.name}"
    problems.append(error(message, instr.line, instr.column))


# What XLA's parser requires of these ops ("attribute X is expected but not seen"): the called
# computations, dimensions and parameters the ops' meaning rests on (what a reduce combines, over
# which dims; which elements a slice or gather takes). XLA names the first missing one in name order.
# Not an iota's ``iota_dimension``: the indexing spec writes it ``dimensions={1}``, read as well.
_REQUIRED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    op: tuple(sorted(names))
    for op, names in {
        "reduce": ("to_apply", "dimensions"),
        "dynamic-slice": ("dynamic_slice_sizes",),
        "reduce-window": ("to_apply",),
        "map": ("to_apply",),
        "scatter": (
            "to_apply",
            "update_window_dims",
            "inserted_window_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
        ),
        "gather": ("offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim", "slice_sizes"),
        "select-and-scatter": ("select", "scatter"),
        "sort": ("to_apply", "dimensions"),
        "call": ("to_apply",),
        "while": ("condition", "body"),
        "fusion": ("kind", "calls"),
        "async-start": ("calls",),
        "all-reduce": ("to_apply",),
        "all-reduce-start": ("to_apply",),
        "reduce-scatter": ("to_apply", "dimensions"),
        "all-gather": ("dimensions",),
        "all-gather-start": ("dimensions",),
        "collective-permute": ("source_target_pairs",),
        "collective-permute-start": ("source_target_pairs",),
        "slice": ("slice",),
        "transpose": ("dimensions",),
        "concatenate": ("dimensions",),
        "reverse": ("dimensions",),
        "pad": ("padding",),
        "get-tuple-element": ("index",),
        "compare": ("direction",),
        "custom-call": ("custom_call_target",),
        "convolution": ("dim_labels",),
        "reduce-precision": ("exponent_bits", "mantissa_bits"),
        "rng": ("distribution",),
        "rng-bit-generator": ("algorithm",),
        "rng-get-and-update-state": ("delta",),
        "fft": ("fft_type", "fft_length"),
        "batch-norm-inference": ("epsilon", "feature_index"),
        "batch-norm-training": ("epsilon", "feature_index"),
        "batch-norm-grad": ("epsilon", "feature_index"),
        "topk": ("k",),
        "get-dimension-size": ("dimensions",),
        "set-dimension-size": ("dimensions",),
        "domain": ("domain",),
    }.items()
}


def _even_operand_count(instr: Instruction) -> str | None:
    """A reduce's operands: the values, then as many initial values."""
    count = len(instr.operand_names)
    return f"expects an even number of operands, but has {count} operands" if count % 2 else None


def _odd_operand_count(instr: Instruction) -> str | None:
    """A scatter's operands: the inputs, the indices, then as many updates as inputs."""
    count = len(instr.operand_names)
    return None if count % 2 else f"expects an odd number of operands, but has {count} operands"


def _dynamic_reshape_operands(instr: Instruction) -> str | None:
    """A dynamic reshape's operand, then its result's dimension sizes."""
    return None if instr.operand_names else "DynamicReshape requires at least one operand"


# Where a dynamic slice's start indices begin: after the operand, or after the operand and the update.
_FIRST_INDEX = {"dynamic-slice": 1, "dynamic-update-slice": 2}
_TOO_FEW = {1: "Expected at least one operand.", 2: "Expected at least two operands."}


def _dynamic_slice_operands(instr: Instruction) -> str | None:
    """The operand (and the update), then one scalar start index per operand dimension or, in the
    older form, one vector of them."""
    first = _FIRST_INDEX[instr.opcode]
    count = len(instr.operand_names)
    if count < first:
        return _TOO_FEW[first]
    if len(instr.operands) != count:
        return None  # an operand not defined: reported as such
    operand = instr.operands[0].shape
    if operand.is_tuple:  # jaxlib's parser fails a check on it (a tuple has no dimensions)
        return f"{instr.opcode} slices an array; its operand is {operand}"
    if operand.element_type == "unknown":
        return None
    indices = instr.operands[first].shape if count == first + 1 else None
    one_vector = indices is not None and not indices.is_tuple and indices.rank == 1
    return "Wrong number of operands." if not one_vector and count != first + operand.rank else None


def _first_collective_dimension(instr: Instruction) -> str | None:
    """The dimension a collective gathers or scatters is the first entry of ``dimensions`` (an empty
    list fails)."""
    dims = instr.attrs.get("dimensions")
    if dims is not None and not dims:  # a missing one is said above
        return f"{instr.opcode} takes the dimension it gathers or scatters from dimensions, which is empty"
    return None


def _one_dimension(what: str) -> Callable[[Instruction], str | None]:
    """An op whose ``dimensions``, where given, has exactly one entry (XLA's parser fails any
    other count, without a message): all-to-all's split dimension, a sort's dimension."""

    def check(instr: Instruction) -> str | None:
        dims = instr.attrs.get("dimensions")
        return f"{what}, dimensions has {len(dims)}" if dims is not None and len(dims) != 1 else None

    return check


def _broadcast_dimensions(instr: Instruction) -> str | None:
    """A broadcast names the result dimensions its operand's map to, which only a scalar (none)
    may leave unsaid."""
    if "dimensions" in instr.attrs or len(instr.operands) != 1:
        return None
    shape = instr.operands[0].shape
    scalar = not shape.is_tuple and (shape.rank == 0 or shape.element_type == "unknown")
    return None if scalar else "attribute dimensions is expected but not seen"


# What XLA's parser checks of these ops once their operands and attributes are read: the message,
# or None.
_OPERAND_RULES: dict[str, Callable[[Instruction], str | None]] = {
    "reduce": _even_operand_count,
    "scatter": _odd_operand_count,
    "broadcast": _broadcast_dimensions,
    "sort": _one_dimension("sort takes one dimension"),
    "all-to-all": _one_dimension("all-to-all takes one split dimension"),
    **dict.fromkeys(_FIRST_INDEX, _dynamic_slice_operands),
    "dynamic-reshape": _dynamic_reshape_operands,
    **dict.fromkeys(("all-gather", "all-gather-start", "reduce-scatter"), _first_collective_dimension),
}


# per opcode: (the operand count XLA's parser expects, or None; the attributes it requires; the
# check that follows, or None; the same attributes as a set)
_ParserRule = tuple[int | None, tuple[str, ...], Callable[[Instruction], str | None] | None, frozenset[str]]
_PARSER_RULES: dict[str, _ParserRule] = {
    op: (
        OPERAND_COUNTS.get(op),
        _REQUIRED_ATTRIBUTES.get(op, ()),
        _OPERAND_RULES.get(op),
        frozenset(_REQUIRED_ATTRIBUTES.get(op, ())),
    )
    for op in OPERAND_COUNTS.keys() | _REQUIRED_ATTRIBUTES.keys() | _OPERAND_RULES.keys()
}


def _check_parser_rule(instr: Instruction, rule: _ParserRule, problems: list[Diagnostic]) -> None:
    """What XLA's parser checks of the op, in its order: the operand count, the attributes, then
    the op's own check."""
    expected, required, check, _ = rule
    count = len(instr.operand_names)
    if expected is not None and count != expected:
        problems.append(error(f"expects {expected} operands, but has {count} operands", instr.line, instr.column))
        return
    attrs = instr.attrs
    for key in required:
        if key not in attrs:
            problems.append(error(f"attribute {key} is expected but not seen", instr.line, instr.column))
            return
    message = check(instr) if check is not None else None
    if message is not None:
        problems.append(error(message, instr.line, instr.column))


def _desugar_output_references(comp: Computation, problems: list[Diagnostic]) -> None:
    """XLA prints a use of output k of a tuple-shaped instruction %x as the operand ``%x#k`` (no
    get-tuple-element in the text); each such reference becomes the get-tuple-element it stands for,
    named ``x#k`` and placed right after %x, so every analysis sees the element it reads."""
    made: dict[str, Instruction] = {}
    after: dict[str, list[Instruction]] = {}
    for instr in comp.instructions:
        for name in instr.operand_names:
            if "#" not in name or name in made or name in comp.by_name:
                continue
            base_name, _, index_text = name.partition("#")
            base = comp.by_name.get(base_name)
            if base is None:
                continue  # reported as an undefined operand
            index = int(index_text)
            outputs = base.shape.tuple_shapes
            if outputs is None or index >= len(outputs):
                count = "an array" if outputs is None else f"{len(outputs)} output(s)"
                problems.append(
                    error(f"operand %{name} of %{instr.name}: %{base_name} has {count}", instr.line, instr.column)
                )
                continue
            element = Instruction(
                name,
                "get-tuple-element",
                outputs[index],
                (base_name,),
                {"index": index},
                line=base.line,
                column=base.column,
            )
            element.computation = comp
            made[name] = element
            after.setdefault(base_name, []).append(element)
    if not made:
        return
    comp.by_name.update(made)
    ordered: list[Instruction] = []
    for instr in comp.instructions:
        ordered.append(instr)
        ordered.extend(after.get(instr.name, ()))
    comp.instructions = ordered


def _link_callees(module: Module, instr: Instruction, problems: list[Diagnostic]) -> None:
    attrs = instr.attrs
    for role in SINGLE_CALLEE_ROLES + MULTI_CALLEE_ROLES:
        value = attrs.get(role)
        if value is None:
            continue
        pairs = [(role, value)] if isinstance(value, str) else [(f"{role}.{i}", n) for i, n in enumerate(value)]
        for key, callee_name in pairs:
            callee = module.by_name.get(callee_name)
            if callee is None:
                problems.append(
                    error(
                        f"computation %{callee_name} ({role} of %{instr.name}) is not defined", instr.line, instr.column
                    )
                )
                continue
            instr.called[key] = callee
            if instr.opcode == "fusion" and role == "calls":
                callee.is_fused = True


def _link_control_predecessors(
    comp: Computation, instr: Instruction, names: str | Iterable[str], problems: list[Diagnostic]
) -> None:
    if isinstance(names, str):  # built in code with raw text
        return
    found = []
    for name in names:
        other = comp.by_name.get(name)
        if other is None:
            problems.append(
                error(
                    f"control predecessor %{name} of %{instr.name} is not defined in %{comp.name}",
                    instr.line,
                    instr.column,
                )
            )
        else:
            found.append(other)
    instr.control_predecessors = tuple(found)
