"""Typed HLO graph: what the parser builds and every analysis reads.

The model knows nothing of indexing maps. Attributes an analysis needs are parsed
into the small typed records below; everything else stays as raw text so that
unknown opcodes and attributes never stop a module from loading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import FrozenInstanceError, dataclass, field
from operator import attrgetter
from types import ModuleType
from typing import Any, ClassVar

# Bits per element of each primitive type; sub-byte types included.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1,
    "s2": 2,
    "s4": 4,
    "s8": 8,
    "s16": 16,
    "s32": 32,
    "s64": 64,
    "u1": 1,
    "u2": 2,
    "u4": 4,
    "u8": 8,
    "u16": 16,
    "u32": 32,
    "u64": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "c64": 64,
    "c128": 128,
    "f8e5m2": 8,
    "f8e4m3": 8,
    "f8e4m3fn": 8,
    "f8e4m3b11fnuz": 8,
    "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8,
    "f8e3m4": 8,
    "f8e8m0fnu": 8,
    "f4e2m1fn": 4,
    "f6e2m3fn": 6,
    "f6e3m2fn": 6,
    "token": 0,
    "opaque": 0,
}


class _Value:
    """An immutable record of the fields in ``__slots__``, with what a frozen dataclass gives:
    equality and hash by fields, a repr of them, assignment refused. A plain class: a frozen
    dataclass compiles six generated methods at every start, and these are on every run's path.

    The hash is computed once (``_hash``, a slot of this base, no field): records key the
    per-fusion memos (a shape its figures and warp reads, a slice's bounds its op rule's maps), and
    hashing the fields' tuple calls each nested record's hash again."""

    __slots__: tuple[str, ...] = ("_hash",)
    _hash: int
    _fields_of: ClassVar[Callable[..., tuple[Any, ...]]]

    def __init_subclass__(cls) -> None:
        get = attrgetter(*cls.__slots__)
        cls._fields_of = staticmethod(get if len(cls.__slots__) > 1 else lambda value: (get(value),))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields_of(self) == self._fields_of(other)
        return NotImplemented

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            known = hash(self._fields_of(self))
            object.__setattr__(self, "_hash", known)
            return known

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:  # copy and pickle through __init__
        return (type(self), self._fields_of(self))

    def _assign(self, *values: Any) -> None:
        """The fields, in ``__slots__`` order (each ``__init__`` ends here: assignment is refused)."""
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)


class Tile(_Value):
    """One tile of a tiled layout, e.g. ``T(8,128)``. ``COMBINED`` (-1) stands for ``*``."""

    __slots__ = ("dims",)
    dims: tuple[int, ...]

    COMBINED = -1

    def __init__(self, dims: tuple[int, ...]) -> None:
        self._assign(dims)


class Layout(_Value):
    """``{minor_to_major:suffixes}``. Suffix fields not listed are kept in ``raw_suffixes``."""

    __slots__ = ("minor_to_major", "tiles", "element_size_bits", "memory_space", "raw_suffixes")
    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...]
    element_size_bits: int | None  # E(n)
    memory_space: int | None  # S(n)
    raw_suffixes: str  # anything after ':' we do not interpret (D(...), L(n), #(...), ...)

    def __init__(
        self,
        minor_to_major: tuple[int, ...],
        tiles: tuple[Tile, ...] = (),
        element_size_bits: int | None = None,
        memory_space: int | None = None,
        raw_suffixes: str = "",
    ) -> None:
        self._assign(minor_to_major, tiles, element_size_bits, memory_space, raw_suffixes)


class Shape(_Value):
    """An array shape (``element_type``, ``dims``) or a tuple (``tuple_shapes`` not None)."""

    __slots__ = ("element_type", "dims", "dynamic", "layout", "tuple_shapes", "buffer")
    element_type: str
    dims: tuple[int, ...]
    dynamic: tuple[bool, ...]  # per dim: True for ``<=N`` (bound N) or ``?``
    layout: Layout | None
    tuple_shapes: tuple[Shape, ...] | None
    buffer: bool  # a buffer shape ``b(s32[2])``: a mutable array

    def __init__(
        self,
        element_type: str,
        dims: tuple[int, ...] = (),
        dynamic: tuple[bool, ...] = (),
        layout: Layout | None = None,
        tuple_shapes: tuple[Shape, ...] | None = None,
        buffer: bool = False,
    ) -> None:
        self._assign(element_type, dims, dynamic, layout, tuple_shapes, buffer)

    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    @property
    def element_bits(self) -> int:
        return ELEMENT_BITS.get(self.element_type, 0)

    def leaf(self, index: int) -> Shape:
        """The shape of output ``index``: a tuple's element, or the array itself for index 0."""
        if self.tuple_shapes is None:
            if index != 0:
                raise IndexError(f"array shape has no output {index}")
            return self
        return self.tuple_shapes[index]

    @property
    def num_outputs(self) -> int:
        return 1 if self.tuple_shapes is None else len(self.tuple_shapes)

    def __str__(self) -> str:  # short canonical text, e.g. f32[4,8]{1,0}
        from .shape_format import format_shape

        return format_shape(self)


# ---- typed attributes -------------------------------------------------------------------


class SliceDim(_Value):
    """One dim of ``slice={[start:limit:stride], ...}``."""

    __slots__ = ("start", "limit", "stride")
    start: int
    limit: int
    stride: int

    def __init__(self, start: int, limit: int, stride: int = 1) -> None:
        self._assign(start, limit, stride)


class PadDim(_Value):
    """One dim of ``padding=low_high_interior``."""

    __slots__ = ("low", "high", "interior")
    low: int
    high: int
    interior: int

    def __init__(self, low: int, high: int, interior: int = 0) -> None:
        self._assign(low, high, interior)


class WindowDim(_Value):
    """One dim of ``window={size=... stride=... pad=... lhs_dilate=... rhs_dilate=...}``."""

    __slots__ = ("size", "stride", "pad_low", "pad_high", "window_dilation", "base_dilation", "reversal")
    size: int
    stride: int
    pad_low: int
    pad_high: int
    window_dilation: int  # rhs_dilate
    base_dilation: int  # lhs_dilate
    reversal: bool

    def __init__(
        self,
        size: int,
        stride: int = 1,
        pad_low: int = 0,
        pad_high: int = 0,
        window_dilation: int = 1,
        base_dilation: int = 1,
        reversal: bool = False,
    ) -> None:
        self._assign(size, stride, pad_low, pad_high, window_dilation, base_dilation, reversal)


class ConvDimLabels(_Value):
    """``dim_labels=b01f_01io->b01f``: positions of each role in lhs, kernel, output."""

    __slots__ = (
        "input_batch",
        "input_feature",
        "input_spatial",
        "kernel_input_feature",
        "kernel_output_feature",
        "kernel_spatial",
        "output_batch",
        "output_feature",
        "output_spatial",
    )
    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]

    def __init__(
        self,
        input_batch: int,
        input_feature: int,
        input_spatial: tuple[int, ...],
        kernel_input_feature: int,
        kernel_output_feature: int,
        kernel_spatial: tuple[int, ...],
        output_batch: int,
        output_feature: int,
        output_spatial: tuple[int, ...],
    ) -> None:
        self._assign(
            input_batch,
            input_feature,
            input_spatial,
            kernel_input_feature,
            kernel_output_feature,
            kernel_spatial,
            output_batch,
            output_feature,
            output_spatial,
        )


@dataclass(frozen=True, slots=True)
class Metadata:
    """``metadata={op_type=... op_name=... source_file=... source_line=... stack_frame_id=...}``."""

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    stack_frame_id: int = 0


class SourceLocation(_Value):
    """Where a model's Python (or other) code created an op, resolved via the stack-frame tables."""

    __slots__ = ("file", "line", "function")
    file: str
    line: int
    function: str

    def __init__(self, file: str, line: int, function: str = "") -> None:
        self._assign(file, line, function)


# ---- graph --------------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Instruction:
    """One HLO instruction.

    ``attrs`` maps attribute name to a typed value:
      * ``dimensions``, ``slice_sizes``, ``dynamic_slice_sizes``, ``lhs_batch_dims``,
        ``lhs_contracting_dims``, ``rhs_batch_dims``, ``rhs_contracting_dims``, ``offset_dims``,
        ``collapsed_slice_dims``, ``start_index_map``, ``operand_batching_dims``,
        ``start_indices_batching_dims``, ``update_window_dims``, ``inserted_window_dims``,
        ``scatter_dims_to_operand_dims``, ``input_batching_dims``, ``scatter_indices_batching_dims``:
        ``tuple[int, ...]``
      * ``index``, ``iota_dimension``, ``index_vector_dim``, ``feature_group_count``,
        ``batch_group_count``, ``k``, ``mantissa_bits``, ``exponent_bits``: ``int``
      * ``slice``: ``tuple[SliceDim, ...]``; ``padding`` (of pad): ``tuple[PadDim, ...]``;
        ``window``: ``tuple[WindowDim, ...]``; ``dim_labels``: ``ConvDimLabels``
      * ``is_stable``, ``largest``, ``indices_are_sorted``, ``unique_indices``: ``bool``
      * ``direction``, ``kind``, ``custom_call_target``, ``comparison_type``...: ``str``
      * ``control-predecessors``: ``tuple[str, ...]`` (names; objects in ``control_predecessors``)
      * ``replica_groups``: the raw text; ``replica_groups_typed``: ``tuple[tuple[int, ...], ...]``
        (list form as written, iota form ``[G,S]<=[dims]T(perm)`` expanded; ``{}`` gives ``()``)
      * ``sharding``: the raw text, checked for balanced brackets
      * computation references (``calls``, ``to_apply``, ``condition``, ``body``, ``select``,
        ``scatter``, ``true_computation``, ``false_computation``): the callee's name (``str``),
        ``branch_computations``: ``tuple[str, ...]``; resolved objects are in ``called``.
      * everything else: the raw attribute text (``str``), never an error.
    """

    name: str
    opcode: str
    shape: Shape
    operand_names: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    metadata: Metadata | None = None
    is_root: bool = False
    line: int = 0
    column: int = 0
    # filled when the computation is resolved:
    operands: tuple[Instruction, ...] = ()
    called: dict[str, Computation] = field(default_factory=dict)  # role -> callee
    parameter_number: int | None = None  # for opcode == "parameter"
    literal: str | None = None  # raw literal text for constants
    computation: Computation | None = None
    # control-predecessors={...} resolved when the computation is (names in attrs["control-predecessors"])
    control_predecessors: tuple[Instruction, ...] = ()
    # typed values read from text once, on first use (literal_values, source_target_pairs)
    _read_once: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def literal_values(self) -> Any | None:
        """A constant's values as a numpy array shaped like it (``hlo.literals.literal_values``:
        bool, int64, float64 or complex128), or None: not a constant, a tuple, or a literal
        that does not spell out every value."""
        if self.opcode != "constant" or self.literal is None:
            return None
        return self._once("literal", lambda: _literals().literal_values(self.shape, self.literal))

    def replica_groups(self) -> tuple[tuple[int, ...], ...] | None:
        """``replica_groups`` typed (``attrs["replica_groups_typed"]``, see above); None when the
        instruction has none."""
        typed = self.attrs.get("replica_groups_typed")
        text = self.attrs.get("replica_groups")
        if typed is None and isinstance(text, str):  # built in code rather than parsed
            typed = self._once("groups", lambda: _collectives().replica_groups(text))
        return typed

    def source_target_pairs(self) -> tuple[tuple[int, int], ...]:
        """``source_target_pairs={{0,1},{1,2}}`` as ((0, 1), (1, 2)); () when there are none."""
        text = self.attrs.get("source_target_pairs")
        if not isinstance(text, str):
            return ()
        pairs: tuple[tuple[int, int], ...] = self._once("pairs", lambda: _collectives().source_target_pairs(text))
        return pairs

    def _once(self, key: str, read: Any) -> Any:
        if self._read_once is None:
            self._read_once = {}
        if key not in self._read_once:
            self._read_once[key] = read()
        return self._read_once[key]

    @property
    def fused_computation(self) -> Computation | None:
        return self.called.get("calls") if self.opcode == "fusion" else None

    def __repr__(self) -> str:
        return f"<{self.opcode} %{self.name} {self.shape}>"


def _literals() -> ModuleType:
    from . import literals  # the readers import this module's types

    return literals


def _collectives() -> ModuleType:
    from . import collectives  # reads text only; imports nothing of this module

    return collectives


@dataclass(eq=False, slots=True)
class Computation:
    """One HLO computation: its instructions in text order, with the root and parameters resolved."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)  # in text order
    is_entry: bool = False
    execution_thread: str | None = None
    line: int = 0
    column: int = 0
    root: Instruction | None = None
    parameters: dict[int, Instruction] = field(default_factory=dict)  # parameter number -> instr
    by_name: dict[str, Instruction] = field(default_factory=dict)
    module: Module | None = None
    is_fused: bool = False  # called by some fusion instruction
    result_shape: Shape | None = None  # the result shape its signature states, when written
    # every operand stands above its users in ``instructions`` (set by the linker, which rejects
    # any other text): the text order is then an order to compute them in
    operands_above: bool = False

    def __repr__(self) -> str:
        return f"<computation %{self.name} ({len(self.instructions)} instructions)>"


# What a deferred computation lacks until its body is read.
_BODY_FIELDS = frozenset({"instructions", "root", "parameters", "by_name", "operands_above"})


class DeferredComputation(Computation):
    """A computation whose body is read on first use (``hlo.deferred``): its name, signature and
    position are known; reading any of ``_BODY_FIELDS`` reads the body through its module's
    ``deferred`` bodies, and the object is then a plain :class:`Computation`, the one an eager read
    would have made."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:  # only for the body's fields, not yet set
        if name in _BODY_FIELDS and self.module is not None and self.module.deferred is not None:
            self.module.deferred.read_body(self)
            return getattr(self, name)
        raise AttributeError(name)

    def twin(self) -> Computation | None:
        """A computation read already whose body's text is this one's up to the names of their own
        instructions (so its structure is this one's, and its checks found what this one's
        would): this body then need not be read for its structure. None where there is none."""
        bodies = self.module.deferred if self.module is not None else None
        return bodies.twin_of(self) if bodies is not None else None

    def __repr__(self) -> str:
        return f"<computation %{self.name} (body not read yet)>"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """An error, warning or note about the text read, with its position."""

    severity: str  # "error" | "warning" | "note"
    message: str
    line: int = 0
    column: int = 0
    source_line: str = ""  # the offending line's text, for the caret display
    path: str = ""


@dataclass(eq=False, slots=True)
class Module:
    """One HLO module: its computations, the entry, header attributes and the diagnostics of reading it."""

    name: str
    computations: list[Computation] = field(default_factory=list)  # in text order
    entry: Computation | None = None
    attrs: dict[str, Any] = field(default_factory=dict)  # header attributes, raw text values
    source: str = ""  # path (or "<stdin>") it was read from
    stack_frames: dict[int, SourceLocation] = field(default_factory=dict)  # stack_frame_id -> innermost frame
    diagnostics: list[Diagnostic] = field(default_factory=list)
    by_name: dict[str, Computation] = field(default_factory=dict)
    # the bodies not read yet (``hlo.deferred.DeferredBodies``), None when every body is read
    deferred: Any = field(default=None, repr=False)

    @property
    def instructions(self) -> Iterator[Instruction]:
        for c in self.computations:
            yield from c.instructions

    @property
    def fusions(self) -> list[Instruction]:
        # a deferred body holds no fusion (it is deferred only where its text names none)
        return [i for c in self.read_computations() for i in c.instructions if i.opcode == "fusion"]

    def read_computations(self) -> Iterator[Computation]:
        """The computations whose bodies are read: all but those deferred (``hlo.deferred``), which
        hold nothing a scan of the whole module looks for."""
        return (c for c in self.computations if type(c) is not DeferredComputation)

    def source_location(self, instr: Instruction) -> SourceLocation | None:
        md = instr.metadata
        if md is None:
            return None
        if md.stack_frame_id and md.stack_frame_id in self.stack_frames:
            return self.stack_frames[md.stack_frame_id]
        if md.source_file:
            return SourceLocation(md.source_file, md.source_line)
        return None

    def __repr__(self) -> str:
        return f"<module {self.name} ({len(self.computations)} computations)>"
