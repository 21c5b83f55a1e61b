"""Typed device groups of collective ops, read from their attribute text: ``replica_groups`` (the
list, iota and mesh-axes forms) and ``source_target_pairs``. Imports nothing of the model, so the model's
accessors (``Instruction.replica_groups()``) can read through it without an import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_REPLICA_GROUP_DEVICES = 1 << 20
_IOTA_GROUPS = re.compile(r"\[([\d,\s]*)\]\s*<=\s*\[([\d,\s]*)\]\s*(?:T\(([\d,\s]*)\))?\Z")
_GROUP = re.compile(r"\{([^{}]*)\}")


def replica_groups(value: str) -> tuple[tuple[int, ...], ...]:
    """``{{0,1},{2,3}}`` → ((0, 1), (2, 3)); the iota form ``[G,S]<=[dims]T(perm)`` expanded:
    ``iota(prod(dims))`` reshaped to ``dims``, transposed by ``perm``, reshaped to ``[G,S]``.
    ``{}`` (all replicas in one group, size unknown here) → ()."""
    text = value.strip()
    if text.startswith("mesh"):
        return mesh_axes_groups(text)
    if text.startswith("["):
        m = _IOTA_GROUPS.match(text)
        if m is None:
            raise ValueError(f"malformed iota replica groups {text[:60]!r}")
        groups, dims = _ints(m.group(1)), _ints(m.group(2))
        perm = _ints(m.group(3)) if m.group(3) is not None else tuple(range(len(dims)))
        return _iota_groups(groups, dims, perm)
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected {{{{...}},...}} or [G,S]<=[...], got {text[:60]!r}")
    inner = text[1:-1]
    groups_found = _GROUP.findall(inner)
    if _GROUP.sub("", inner).replace(",", "").strip():
        raise ValueError(f"malformed replica groups {text[:60]!r}")
    return tuple(_ints(g) for g in groups_found)


def mesh_axes_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """The mesh-axes form ``mesh['a'=2,'b'=4](, device_ids=(...))? {'a', 'b':(1)2}``: the mesh's device
    array (iota over the axis sizes, or the listed ids, or an iota ``[dims]T(perm)``) laid out over the
    axes, each named sub-axis ``name:(pre)size`` split out of its axis; the named (sub-)axes, in the order
    written, move to the minor end and each run of their combined size is one group."""
    reader = _MeshText(text)
    names, sizes, devices = reader.mesh()
    refs = reader.axis_refs(names)
    reader.end()
    return _mesh_groups(sizes, devices, refs)


class _MeshText:
    """A cursor over the mesh-axes text; each malformed piece raises ValueError naming what was expected."""

    def __init__(self, text: str):
        self.text, self.i = text, 0

    def _skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def _peek(self, token: str) -> bool:
        self._skip()
        return self.text.startswith(token, self.i)

    def _eat(self, token: str) -> bool:
        if self._peek(token):
            self.i += len(token)
            return True
        return False

    def _expect(self, token: str, what: str) -> None:
        if not self._eat(token):
            raise ValueError(f"expected {token!r} {what} in {self.text[:80]!r}")

    def _int(self) -> int:
        self._skip()
        j = self.i
        while j < len(self.text) and (self.text[j].isdigit() or (j == self.i and self.text[j] == "-")):
            j += 1
        if j == self.i or self.text[self.i : j] == "-":
            raise ValueError(f"expected an integer at {self.text[self.i : self.i + 20]!r}")
        value, self.i = int(self.text[self.i : j]), j
        return value

    def _string(self) -> str:
        self._skip()
        if not self.text.startswith("'", self.i):
            raise ValueError(f"expected a quoted axis name at {self.text[self.i : self.i + 20]!r}")
        close = self.text.find("'", self.i + 1)
        if close < 0:
            raise ValueError("unterminated axis name")
        name, self.i = self.text[self.i + 1 : close], close + 1
        return name

    def _ints(self, close: str) -> tuple[int, ...]:
        values: list[int] = []
        if self._eat(close):
            return ()
        while True:
            values.append(self._int())
            if self._eat(close):
                return tuple(values)
            self._expect(",", f"or {close!r} in a list of integers")

    def mesh(self) -> tuple[list[str], list[int], list[int]]:
        self._expect("mesh", "at the start of mesh replica groups")
        self._expect("[", "after mesh")
        names: list[str] = []
        sizes: list[int] = []
        while not self._eat("]"):
            if names:
                self._expect(",", "between mesh axes")
            names.append(self._string())
            self._expect("=", "after a mesh axis name")
            sizes.append(self._int())
        if not names:
            raise ValueError("a mesh needs at least one axis")
        if len(set(names)) != len(names):
            raise ValueError(f"mesh axis names repeat: {names}")
        if any(s < 1 for s in sizes):
            raise ValueError(f"mesh axis sizes must be positive: {sizes}")
        total = _product(sizes)
        if total > MAX_REPLICA_GROUP_DEVICES:
            raise ValueError(f"{total} devices in replica groups is more than {MAX_REPLICA_GROUP_DEVICES}")
        devices = list(range(total))
        if self._eat(","):
            self._expect("device_ids", "after the mesh axes")
            self._expect("=", "after device_ids")
            self._expect("(", "to open device_ids")
            if self._eat("["):  # iota over these dimensions, transposed, read in row-major order
                dims = self._ints("]")
                perm = self._ints(")") if self._eat("T(") else tuple(range(len(dims)))
                if _product(dims) != total or sorted(perm) != list(range(len(dims))):
                    raise ValueError(f"device_ids [{dims}]T{perm} do not lay out the {total} devices of the mesh")
                devices = _transposed(list(range(total)), dims, perm)
                self._expect(")", "to close device_ids")
            else:
                devices = list(self._ints(")"))
                if sorted(devices) != list(range(total)):
                    raise ValueError(f"device_ids {devices} are not a permutation of the mesh's {total} devices")
        return names, sizes, devices

    def axis_refs(self, names: list[str]) -> list[tuple[int, int | None, int | None]]:
        """(mesh axis, pre-size, size) per named axis; pre-size and size None for a whole axis."""
        self._expect("{", "to open the grouped mesh axes")
        refs: list[tuple[int, int | None, int | None]] = []
        while not self._eat("}"):
            if refs:
                self._expect(",", "between grouped mesh axes")
            name = self._string()
            if name not in names:
                raise ValueError(f"axis {name!r} is not an axis of the mesh {names}")
            if self._eat(":"):
                self._expect("(", "to open a sub-axis pre-size")
                pre = self._int()
                self._expect(")", "to close a sub-axis pre-size")
                refs.append((names.index(name), pre, self._int()))
            else:
                refs.append((names.index(name), None, None))
        return refs

    def end(self) -> None:
        self._skip()
        if self.i != len(self.text):
            raise ValueError(f"unexpected text after the grouped mesh axes: {self.text[self.i : self.i + 20]!r}")


def _mesh_groups(
    sizes: list[int], devices: list[int], refs: list[tuple[int, int | None, int | None]]
) -> tuple[tuple[int, ...], ...]:
    # each mesh axis becomes one or more dimensions: a whole axis stays one; an axis with named
    # sub-axes is cut at each sub-axis's pre-size and pre-size * size
    dims: list[int] = []
    grouped: dict[int, int] = {}  # index into refs -> dimension
    for axis, full in enumerate(sizes):
        mine = [k for k, r in enumerate(refs) if r[0] == axis]
        if not mine:
            dims.append(full)
            continue
        whole = [k for k in mine if refs[k][1] is None]
        if whole:
            if len(mine) > 1:
                raise ValueError(f"mesh axis {axis} is grouped whole and again in part")
            grouped[whole[0]] = len(dims)
            dims.append(full)
            continue
        prefix = 1
        for k in sorted(mine, key=lambda k: refs[k][1] or 0):
            pre, size = refs[k][1] or 0, refs[k][2] or 0
            if pre < 1 or size < 2 or full % (pre * size) or size >= full:
                raise ValueError(f"sub-axis ({pre}){size} does not split a mesh axis of size {full}")
            if pre % prefix:
                raise ValueError(f"sub-axes of mesh axis {axis} overlap")
            if pre != prefix:
                dims.append(pre // prefix)
            grouped[k] = len(dims)
            dims.append(size)
            prefix = pre * size
        if full != prefix:
            dims.append(full // prefix)
    order = [d for d in range(len(dims)) if d not in grouped.values()] + [grouped[k] for k in range(len(refs))]
    size = _product([dims[grouped[k]] for k in range(len(refs))])
    if size < 2:
        raise ValueError(f"mesh replica groups need more than one device per group, got {size}")
    flat = _transposed(devices, tuple(dims), tuple(order))
    return tuple(tuple(flat[g : g + size]) for g in range(0, len(flat), size))


def _product(values: Iterable[int]) -> int:
    total = 1
    for v in values:
        total *= v
    return total


def _transposed(flat: list[int], dims: tuple[int, ...], perm: tuple[int, ...]) -> list[int]:
    """``flat`` (row-major over ``dims``) transposed by ``perm``, read back in row-major order."""
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    positions = [0]
    for k in perm:
        positions = [base + i * strides[k] for base in positions for i in range(dims[k])]
    return [flat[p] for p in positions]


def source_target_pairs(value: str) -> tuple[tuple[int, int], ...]:
    """``{{0,1},{1,2}}`` → ((0, 1), (1, 2)); ``{}`` → ()."""
    groups = replica_groups(value) if value.strip().startswith("{") else None
    if groups is None or any(len(g) != 2 for g in groups):
        raise ValueError(f"expected {{{{source,target}},...}}, got {value.strip()[:60]!r}")
    return tuple((a, b) for a, b in groups)


def _ints(text: str) -> tuple[int, ...]:
    text = text.strip()
    return tuple(int(x) for x in text.split(",")) if text else ()


def _iota_groups(groups: tuple[int, ...], dims: tuple[int, ...], perm: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    if len(groups) != 2:
        raise ValueError(f"iota replica groups need [groups,size], got {list(groups)}")
    total = 1
    for d in dims:
        total *= d
    if total != groups[0] * groups[1]:
        raise ValueError(f"iota replica groups {list(groups)} do not hold the {total} devices of {list(dims)}")
    if sorted(perm) != list(range(len(dims))):
        raise ValueError(f"T{tuple(perm)} is not a permutation of {len(dims)} dimensions")
    if total > MAX_REPLICA_GROUP_DEVICES:
        raise ValueError(f"{total} devices in replica groups is more than {MAX_REPLICA_GROUP_DEVICES}")
    flat = _transposed(list(range(total)), dims, perm)
    size = groups[1]
    return tuple(tuple(flat[g * size : (g + 1) * size]) for g in range(groups[0]))


def int_list_list(value: str) -> tuple[tuple[int, ...], ...]:
    """``{{128,32},{64,32}}`` → ((128, 32), (64, 32))."""
    inner = value.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError(f"expected {{{{...}},...}} list of integer lists, got {value!r}")
    inner = inner[1:-1]
    groups = _GROUP.findall(inner)
    if _GROUP.sub("", inner).replace(",", "").strip():
        raise ValueError(f"malformed list of integer lists {value[:60]!r}")
    return tuple(_ints(g) for g in groups)
