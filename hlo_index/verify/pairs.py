"""Input-to-output maps checked from both sides on sampled (operand element, output element) pairs."""

from __future__ import annotations

import numpy as np

from ..api import SelectedTarget
from ..fusion import input_to_output
from ..hlo.model import Computation
from ..reference import points_of
from .memos import gives_memo, images_memo, shared_memo
from .outcome import Skip, VerifyOutcome, point_text
from .points import checkable_maps, combinations, sampled_image, too_many_to_list
from .sampling import sampled_elements, sampled_indices, seeded_rng

# Budgets (hlo_index.context): verify_points_per_target, past which no further output element is
# walked back; verify_image_points, past which an image's elements are drawn, not listed.
PAIRS_PER_ELEMENT = 4  # input-to-output: operand / output elements checked per sample


def verify_input_to_output(
    selected: SelectedTarget,
    exact,
    sampled,
    samples: int,
    seed: int,
    outcome: VerifyOutcome,
    shared: dict | None = None,
    spent=lambda: False,
) -> None:
    """Checks input-to-output maps from both sides on the sampled elements; ``spent()`` says when
    the target's walks have spent its budget (``verify_points_per_target``): no further output
    element is walked back then, and the checks that would need one are counted as not made."""
    images_of = images_memo(shared)
    gives = gives_memo(shared)
    elements_of = shared_memo(shared, "sampled elements", sampled_elements)
    indices_of = shared_memo(shared, "sampled indices", sampled_indices)
    target = selected.target
    name = f"{selected.kind} '{target.name}'"
    # (operand, tuple element) -> [(output, maps)]: a tuple-shaped operand has rows per element
    maps_of: dict[tuple[int, int], list] = {}
    for row in input_to_output(target):
        maps_of.setdefault((row.operand, row.operand_element), []).append((row.output, row.maps))
    maps_at = {(*key, out): maps for key, rows in maps_of.items() for out, maps in rows}
    # each row's maps as checked, normalised once for both sides (too large to enumerate: kept)
    normalised: dict[int, list] = {}

    def checkable_of(maps: tuple) -> list:
        found = normalised.get(id(maps))
        if found is None:
            found = normalised[id(maps)] = checkable_maps(maps, large=True)
        return found

    shapes = _operand_shapes(target)
    arrays = dict(_array_operands(shapes))  # (operand, element) -> array shape
    # 1. nothing missing: each pair the reference finds for a sampled output element is in the maps
    wanted: dict[tuple[int, int, int], list] = {}  # (operand, element, output) -> [(operand element, point)]
    for out, point in sampled:
        for (operand, element), (dims, read) in exact(out, point).items():
            if (operand, element) not in arrays:
                continue
            chosen = indices_of(seed, ("read", out, point), len(read), min(PAIRS_PER_ELEMENT, len(read)))
            picked = points_of(read[np.array(chosen, dtype=np.int64)], dims)  # positions in sorted order
            wanted.setdefault((operand, element, out), []).extend((x, point) for x in picked)
    for (operand, element, out), pairs in wanted.items():
        maps = maps_at.get((operand, element, out), ())
        # too large to enumerate: decided by arithmetic, else (undecided) the enumeration skips
        checkable = checkable_of(maps)
        verdicts = [(x, point, gives(maps, checkable, x, point)) for x, point in pairs]
        undecided = sorted({x for x, _, verdict in verdicts if verdict is None})
        if undecided and too_many_to_list(checkable):
            raise Skip(
                f"an input-to-output image of {max(combinations(m) for m in checkable)} points per element, "
                "past verify_image_points, where arithmetic does not decide a pair"
            )
        images = images_of(maps, tuple(undecided), False) if undecided else {}
        for x, point, verdict in verdicts:
            if verdict is None:  # from the enumerated image
                rows = images[x]
                verdict = bool(len(rows)) and bool((rows == np.array(point, dtype=np.int64)).all(axis=1).any())
            if not verdict:
                outcome.errors.append(
                    f"{name}: operand {_operand_text(operand, element, shapes)} element {point_text(x)} is read "
                    f"by output {out} element {point_text(point)}, which no input-to-output map gives"
                )
    # 2. nothing extra: outputs the maps give for sampled operand elements really read them
    checks: list[tuple] = []  # (operand, tuple element, operand element, output, output element)
    for (operand, element), shape in arrays.items():
        xs = elements_of(seed, shape.dims, max(1, samples // 2))
        outcome.checked_input_points += len(xs)
        for out, maps in maps_of.get((operand, element), ()):
            if not maps or any(m.runtime_vars for m in maps):
                continue
            checkable = checkable_of(maps)
            if too_many_to_list(checkable):  # images too large to list: elements drawn from them
                for x in xs:
                    rng = seeded_rng(seed, "image draws", out, x)
                    drawn = sampled_image(checkable, x, rng, PAIRS_PER_ELEMENT)
                    checks.extend((operand, element, x, out, y) for y in drawn)
                continue
            images = images_of(maps, tuple(xs), True)
            for x in xs:
                given = images[x]
                if not len(given):
                    continue
                chosen = indices_of(seed, ("image", out, x), len(given), min(PAIRS_PER_ELEMENT, len(given)))
                checks.extend((operand, element, x, out, tuple(given[int(k)].tolist())) for k in chosen)
    # an output element checked for several operands is walked back once for all of them,
    # through the instructions that reach one of them
    grouped: dict[tuple, set] = {}
    for operand, _, _, out, y in checks:
        grouped.setdefault((out, y), set()).add(operand)
    readers = {key: frozenset(operands) for key, operands in grouped.items()}
    output_shape = target.shape if not isinstance(target, Computation) else target.root.shape if target.root else None
    inside: dict[tuple, bool] = {}  # (output, element) -> whether it is an element of the output
    for operand, element, x, out, y in checks:
        key = (out, y)
        within = inside.get(key)
        if within is None:
            if spent():
                outcome.unchecked_pairs += 1
                continue
            within = inside[key] = output_shape is not None and _within(y, output_shape.leaf(out).dims)
        # an element outside the output reads nothing (and has no walk)
        if not within or not _reads(exact(out, y, readers[key]).get((operand, element)), x):
            outcome.errors.append(
                f"{name}: the input-to-output maps say operand {_operand_text(operand, element, shapes)} "
                f"element {point_text(x)} is read by output {out} element {point_text(y)}, which does not read it"
            )


def _reads(read: tuple | None, x: tuple) -> bool:
    """Whether a walk's ``(dims, sorted linear)`` set holds element ``x``."""
    if read is None:
        return False
    dims, linear = read
    if not _within(x, dims):
        return False
    at = 0
    for i, n in zip(x, dims):
        at = at * n + i
    if len(linear) == 1:  # one element (most walks): without numpy's cost per call
        return int(linear[0]) == at
    k = int(np.searchsorted(linear, at))
    return k < len(linear) and int(linear[k]) == at


def _within(x: tuple, dims: tuple) -> bool:
    return len(x) == len(dims) and all(0 <= i < n for i, n in zip(x, dims))


def array_operand_dims(target):
    """(operand, tuple element) and the dims of every array an operand is or holds."""
    for key, shape in _array_operands(_operand_shapes(target)):
        yield key, shape.dims


def _operand_shapes(target) -> list:
    if isinstance(target, Computation):
        count = 1 + max(target.parameters, default=-1)
        return [target.parameters[n].shape if n in target.parameters else None for n in range(count)]
    return [o.shape for o in target.operands]


def _array_operands(shapes: list):
    """(operand, tuple element) and the array shape of every array an operand is or holds
    (elements of a tuple-shaped operand one by one; nested tuples are not addressed)."""
    for operand, shape in enumerate(shapes):
        if shape is None:
            continue
        if not shape.is_tuple:
            yield (operand, 0), shape
            continue
        for element in range(shape.num_outputs):
            leaf = shape.leaf(element)
            if not leaf.is_tuple:
                yield (operand, element), leaf


def _operand_text(operand: int, element: int, shapes: list) -> str:
    shape = shapes[operand] if operand < len(shapes) else None
    return f"{operand}" if shape is None or not shape.is_tuple else f"{operand} (tuple element {element})"
