"""Indexing maps of a whole computation, memoised: the cheaper of a walk or a pass per question.

Output to input, one output at a time: the backward walk from the root (``walk``). When a root has
many outputs (whole training-step ENTRY computations) one bottom-up pass serves them all instead
(``summaries``); input to output likewise, a forward walk per parameter or one pass for all
(``output_summaries``). The cheaper is picked from a count of the work each would do.

Results are memoised per computation object and, when they carry no instance-specific text
(runtime-variable descriptions, UNDEFINED reasons), per structural fingerprint too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeAlias, TypeVar, cast

from ..affine import IndexingMap
from ..context import current, register_table
from ..hlo.model import Computation
from .fingerprint import fingerprint_id
from .full_read import absorbed
from .output_summaries import all_inputs_to_output, is_cheaper
from .summaries import bottom_up_is_cheaper, bottom_up_output_to_input
from .walk import ParameterMaps, forward_input_to_output, top_down_output_to_input, walk_of

# Per analysis context (hlo_index.context). ``id()`` keys always come with the object itself in
# the value (checked with ``is``): identity memos; shared results are keyed by fingerprint.
_BY_OBJECT = register_table("fusion.compose.by_object")  # (id(comp), direction, index) -> (comp, result)
_BY_FINGERPRINT = register_table("fusion.compose.by_fingerprint")  # (fingerprint id, direction, index) -> result
# (id(comp), direction) -> (comp, whether one pass for every output / parameter is the cheaper):
# asked by each output or parameter the memos above do not have yet
_CHEAPER = register_table("fusion.compose.cheaper")

PerOutput: TypeAlias = list[tuple[IndexingMap, ...]]  # input to output: the maps to each output of the root
# output to input by output index; input to output by parameter number or (parameter number, tuple element)
_Index = TypeVar("_Index", bound="int | tuple[int, int]")
_Result = TypeVar("_Result", ParameterMaps, PerOutput)


def clear_cache() -> None:
    """Forget every memoised analysis of the current context (``current().clear()``); cold
    timings. Prefer a fresh ``hlo_index.context.AnalysisContext`` per session."""
    current().clear()


def _portable(maps: Iterable[IndexingMap]) -> bool:
    """True when the maps mention nothing specific to one computation's instruction names."""
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def _all_maps(result: ParameterMaps | PerOutput) -> Iterator[IndexingMap]:
    values = result.values() if isinstance(result, dict) else result
    for maps in values:
        yield from maps


def _settled(
    comp: Computation, index: int | tuple[int, int], result: ParameterMaps | PerOutput
) -> ParameterMaps | PerOutput:
    """``result`` with each set that mixes known maps and UNDEFINED ones reduced (``absorbed``): a
    full read among them is the whole answer; else one UNDEFINED map stands for the unknown part."""
    values = result.values() if isinstance(result, dict) else result
    if not any(_mixed(maps) for maps in values):
        return result
    root = comp.root
    assert root is not None  # a result exists only for a computation with a root
    if isinstance(result, dict):  # output to input: from output ``index`` to (parameter, element)
        assert isinstance(index, int)
        own = root.shape.leaf(index).dims
        return {
            (p, e): absorbed(maps, own, comp.parameters[p].shape.leaf(e).dims) if _mixed(maps) else maps
            for (p, e), maps in result.items()
        }
    number, element = index if isinstance(index, tuple) else (index, 0)
    own = comp.parameters[number].shape.leaf(element).dims
    return [absorbed(maps, own, root.shape.leaf(out).dims) if _mixed(maps) else maps for out, maps in enumerate(result)]


def _mixed(maps: tuple[IndexingMap, ...]) -> bool:
    """Several maps, an UNDEFINED one among them (the other sets are left as they are, shared)."""
    return len(maps) > 1 and any(m.is_undefined for m in maps)


def _remember(
    comp: Computation, direction: str, index: int | tuple[int, int], result: ParameterMaps | PerOutput
) -> None:
    tables = current().tables
    tables[_BY_OBJECT][(id(comp), direction, index)] = (comp, result)
    if _portable(_all_maps(result)):
        tables[_BY_FINGERPRINT][(fingerprint_id(comp), direction, index)] = result


def _memoised(
    comp: Computation, direction: str, index: _Index, compute: Callable[[Computation, _Index], _Result]
) -> _Result:
    tables = current().tables
    by_object: dict[tuple[int, str, _Index], tuple[Computation, _Result]] = tables[_BY_OBJECT]
    hit = by_object.get((id(comp), direction, index))
    if hit is not None and hit[0] is comp:
        return hit[1]
    by_fingerprint: dict[tuple[int, str, _Index], _Result] = tables[_BY_FINGERPRINT]
    result = by_fingerprint.get((fingerprint_id(comp), direction, index))
    if result is None:
        result = cast(_Result, _settled(comp, index, compute(comp, index)))
    _remember(comp, direction, index, result)
    return result


def _one_pass_is_cheaper(comp: Computation, direction: str, decide: Callable[[], bool]) -> bool:
    table: dict[tuple[int, str], tuple[Computation, bool]] = current().tables[_CHEAPER]
    hit = table.get((id(comp), direction))
    if hit is None or hit[0] is not comp:
        hit = table[(id(comp), direction)] = (comp, decide())
    return hit[1]


def _output_to_input(comp: Computation, output_index: int) -> ParameterMaps:
    if (
        comp.root is not None
        and comp.root.shape.num_outputs > 1
        and _one_pass_is_cheaper(comp, "out2in", lambda: bottom_up_is_cheaper(comp, walk_of(comp).order))
    ):
        every = bottom_up_output_to_input(comp, walk_of(comp).order)
        for out, result in enumerate(every):
            if out != output_index:
                _remember(comp, "out2in", out, _settled(comp, out, result))
        return every[output_index]
    return top_down_output_to_input(comp, output_index)


def _input_to_output(comp: Computation, index: int | tuple[int, int]) -> PerOutput:
    if isinstance(index, tuple):  # (parameter number, tuple element): one element's own walk
        return forward_input_to_output(comp, *index)
    parameter_number = index
    walk = walk_of(comp)
    if (
        comp.root is not None
        and parameter_number in comp.parameters
        and not comp.parameters[parameter_number].shape.is_tuple
        and _one_pass_is_cheaper(comp, "in2out", lambda: is_cheaper(comp, walk.order, walk.users))
    ):
        every = all_inputs_to_output(comp, walk.order, walk.users)
        for number, result in every.items():
            if number != parameter_number:
                _remember(comp, "in2out", number, _settled(comp, number, result))
        return every[parameter_number]
    return forward_input_to_output(comp, parameter_number)


def computation_output_to_input(comp: Computation, output_index: int = 0) -> ParameterMaps:
    """Maps from output ``output_index`` of ``comp``'s root to every parameter it reads."""
    return _memoised(comp, "out2in", output_index, _output_to_input)


def computation_input_to_output(
    comp: Computation, parameter_number: int, element: int | None = None
) -> list[tuple[IndexingMap, ...]]:
    """Maps from parameter ``parameter_number`` to each output of the root (one entry per output);
    with ``element``, from that element of a tuple-shaped parameter."""
    index = parameter_number if element is None else (parameter_number, element)
    return _memoised(comp, "in2out", index, _input_to_output)
