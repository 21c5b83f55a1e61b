"""The analysis context: every cache and every budget of one analysis, in one object.

MLIR's ``MLIRContext`` is the model: the expression intern table, the per-domain bound memos, the
op-rule / composition / fingerprint caches, the rendered-text caches and the budgets all belong to
an :class:`AnalysisContext`, and die with it. Nothing of ours keeps module-level state that grows
while analysing (``tests/test_module_state.py`` checks it).

Lifetime: the CLI opens one context per module it reports; library users open one per session::

    with hlo_index.Session() as s:           # an AnalysisContext
        rows = s.output_to_input(fusion)     # or any hlo_index call inside the ``with``

Calls made outside any ``with`` use the thread's default context (created on first use, kept for
the thread's life; ``current().clear()`` empties it).

A module that needs a cache registers a *table* once, at import time, and looks it up in the
current context when it runs::

    from hlo_index.context import register_table, current
    _MEMO = register_table("my_module.memo")           # import time: a slot, no storage yet
    def f(x):
        memo = current().tables[_MEMO]                 # this context's dict (created on first use)

Keys of such tables must be structural (see ``hlo_index.fusion.fingerprint``), never names or
``id()`` alone; an ``id()`` key is only allowed together with the object itself in the value
(checked with ``is``), which makes it an identity memo of an object that is kept alive.

This module imports nothing of ours, so every package (``hlo``, ``affine``, ``ops``...) may use it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, fields, replace
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")
_K = TypeVar("_K")
_V = TypeVar("_V")


@dataclass(frozen=True)
class Budgets:
    """Every bound on the work one analysis may do. Hitting one never hangs or fails: the value
    concerned becomes UNDEFINED with a reason naming the budget and its value, or the check
    concerned becomes a bounded (seeded) sample, and the rest of the analysis goes on."""

    # Distinct maps kept for one value (one operand of one output). Beyond: UNDEFINED.
    maps_per_value: int = 64
    # Parameters (output to input) or root outputs (input to output) one value's summary may
    # reach in a whole-computation pass, counted by the distinct map sets they are reached through
    # (endpoints reached through one shared set count once: its compositions are done once).
    # Beyond: those it reads whole (or whole on a region of it) stay exact without composing, and
    # the others stay composed while they share at most this many map sets; past that, each becomes
    # one UNDEFINED map per parameter / output it reaches (what it reaches stays exact).
    endpoints_per_value: int = 128
    # Endpoints one value's summary keeps composed in all, however few map sets they share (each
    # costs a dictionary entry per value it reaches). Beyond: as past ``endpoints_per_value``.
    exact_endpoints_per_value: int = 4096
    # Map compositions one bottom-up / forward summary pass of a computation may do. Beyond: the
    # values not yet summarised become UNDEFINED (per value; the rest of the computation is kept).
    compositions_per_pass: int = 16_000
    # Candidate points (dims x range vars) up to which two maps of one value are compared by
    # brute force (a proof); larger maps stay distinct (the conservative answer).
    semantic_check_points: int = 1 << 14
    # Points enumerated to decide whether a witness-only range variable is satisfiable.
    witness_points: int = 1 << 16
    # Pairs of a lower and an upper bound combined to eliminate one range variable bounding runtime
    # values and dims (``fusion.bound_witnesses``). Beyond: the variable is kept.
    witness_bound_pairs: int = 64
    # Box up to which ``remove_unused_variables`` decides satisfiability of dropped constraints.
    satisfiability_box: int = 1 << 16
    # Largest modulus the constraint normaliser builds when merging congruences.
    merged_modulus: int = 1 << 12
    # Distinct variable domains whose bound memos are kept (memos of older domains are dropped).
    shared_domains: int = 4096
    # Points the utilization figures of one target may enumerate in all (counted as they are
    # enumerated; one figure is bounded by its own per-component limits). Once spent, the target's
    # remaining utilization figures are unknown, naming the budget (coalescing stays).
    figure_points_per_target: int = 1 << 27
    # Per-operand figures (utilization, coalescing, physical maps) memoised per context; also bounds
    # the table that makes equal sequences of map objects one tuple (``fusion.mapset.shared``).
    operand_figures: int = 1 << 14
    # Shapes, metadata and typed attributes memoised per context while parsing.
    parse_memo_entries: int = 100_000
    # --verify: reference points one sampled element may pull back per value, and range-variable
    # points a map may enumerate per element (beyond either, the target is skipped); in all per
    # target, elements pulled back and points enumerated: once this many, no further sampled
    # element is walked (the first always is).
    verify_points_per_value: int = 1 << 23
    verify_range_combinations: int = 1 << 23
    verify_points_per_target: int = 160_000
    # --verify: elements a reference materialises at once (an operand tagged with its indices,
    # every replica's for a collective); beyond, that op is not verified (a dynamic-slice of an
    # s8[56,4096,4096] operand would take 7 GiB of int64 tags).
    verify_reference_elements: int = 1 << 25
    # --verify: points of an input-to-output image listed per element; past it, elements are drawn.
    verify_image_points: int = 1 << 18
    # scatter with an overwriting combiner and static starts: update elements placed to find the
    # operand elements left in place. Beyond: that operand's maps are UNDEFINED.
    scatter_landing_points: int = 1 << 20
    # --verify: images of input-to-output maps, the pairs they give, read sets of output-to-input
    # maps and the seeded sampling decisions memoised per module (shared by its targets), this many
    # entries each; beyond, a memo starts afresh.
    verify_image_memo: int = 1 << 13
    # while loops: iterations a loop with jax's counter pattern is unrolled over, and compositions
    # tried for the loop-carried maps to stabilise. Beyond: the loop's maps are UNDEFINED.
    loop_steps: int = 24
    # while loops: distinct maps between two loop-state elements (an unrolled loop's pieces counted
    # once joined). Beyond: that pair is UNDEFINED.
    loop_maps_per_pair: int = 32
    # while loops: known maps kept beside the UNDEFINED one of a loop-state pair that the body reads
    # through an op whose maps are unknown (a full read among them, here or downstream, makes the
    # read exact again). Beyond: that pair is the UNDEFINED map alone.
    loop_known_maps_beside_unknown: int = 2
    # while loops: compositions of loop-carried maps remembered by what the maps are, not which
    # objects they are (each iteration makes new objects equal to the last ones). Beyond: that memo
    # starts afresh.
    loop_composition_memo: int = 1 << 14
    # while loops: iterations simulated to count the trips of a counter loop. Beyond: unknown count.
    loop_simulated_trips: int = 1 << 20
    # while loops: calls followed when folding a loop counter into the body.
    loop_counter_call_depth: int = 8
    # Utilization: largest operand marked element by element (beyond: box arithmetic or unknown).
    utilization_bitmap_elements: int = 1 << 27
    # Utilization: points of one independent component enumerated before a seeded sample is used.
    utilization_component_points: int = 1 << 20
    # Utilization: (output, range) points enumerated to count the union of several maps.
    utilization_union_points: int = 1 << 18
    # Utilization: points sampled to split a map into independent components.
    component_sample_points: int = 1 << 16
    # GPU coalescing: warps searched for the first one that reads an operand.
    coalescing_scan_warps: int = 4096

    def describe(self) -> list[tuple[str, int]]:
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


def budget_reason(name: str, value: int, what: str) -> str:
    """An UNDEFINED reason for a budget hit: names the budget and its value."""
    return f"budget {name}={value} exceeded: {what}"


_FACTORIES: list[Callable[[], object]] = []  # slot -> factory; filled at import time only
_NAMES: list[str] = []


def register_table(name: str, factory: Callable[[], object] = dict) -> int:
    """Reserve a per-context table (call at import time). Returns the slot for ``tables[slot]``."""
    if name in _NAMES:
        return _NAMES.index(name)
    _FACTORIES.append(factory)
    _NAMES.append(name)
    return len(_FACTORIES) - 1


def table_names() -> list[str]:
    return list(_NAMES)


class _Tables(dict[int, Any]):
    """slot -> table, each created on first use. A table's type is whatever its slot's factory makes,
    so the values are typed per use (``memo: dict[K, V] = current().tables[_MEMO]``)."""

    __slots__ = ()

    def __missing__(self, slot: int) -> Any:
        table = self[slot] = _FACTORIES[slot]()
        return table


_ACTIVE: ContextVar[AnalysisContext | None] = ContextVar("hlo_index_analysis_context", default=None)


class _Freeing:
    """Whether freeing a context's tables waits (``free_when_next_starts``), and the tables of the
    context whose life ended last while it does: freed when a context's life starts, or never, by
    a process that exits first."""

    __slots__ = ("waits", "ended")

    def __init__(self) -> None:
        self.waits = False
        self.ended: list[tuple[_Tables, dict[tuple[object, ...], Any]]] = []


_FREEING = _Freeing()


def free_when_next_starts() -> None:
    """From now on, a context whose life ends leaves its tables to be freed when the next one's
    starts: a process that exits after its last context (the command line) never frees the ~10^6
    objects of a big module's (~0.02 s of a GPU training step's run)."""
    _FREEING.waits = True


class AnalysisContext:
    """Owns every cache of an analysis and its budgets; a context manager that makes itself the
    current context for the calls made inside the ``with`` (contexts nest)."""

    __slots__ = ("budgets", "tables", "intern", "_tokens", "__weakref__")

    def __init__(self, budgets: Budgets | None = None, **overrides: int) -> None:
        budgets = budgets or Budgets()
        self.budgets = replace(budgets, **overrides) if overrides else budgets
        self.tables = _Tables()
        # The expression intern table (``hlo_index.affine.expr``): the hottest table, kept as an
        # attribute so building a node costs one lookup.
        # Keys are structural tuples, values the affine layer's nodes (this module imports nothing of ours).
        self.intern: dict[tuple[object, ...], Any] = {}
        self._tokens: list[Token[AnalysisContext | None]] = []

    def __enter__(self) -> AnalysisContext:
        if not self._tokens:
            _FREEING.ended.clear()
        self._tokens.append(_ACTIVE.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        # leaving the outermost ``with`` ends the context's life: its tables are freed
        _ACTIVE.reset(self._tokens.pop())
        if not self._tokens:
            if _FREEING.waits:
                _FREEING.ended.append((self.tables, self.intern))
                self.tables, self.intern = _Tables(), {}
            else:
                self.clear()

    def run(self, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """``fn(*args, **kwargs)`` with this context current (its tables are kept afterwards)."""
        token = _ACTIVE.set(self)
        try:
            return fn(*args, **kwargs)
        finally:
            _ACTIVE.reset(token)

    def clear(self) -> None:
        """Forget every cached result (the budgets stay)."""
        self.tables.clear()
        self.intern = {}

    def close(self) -> None:
        """End the context's life: free every table."""
        self.clear()

    def child(self) -> AnalysisContext:
        """A fresh context with the same budgets."""
        return AnalysisContext(self.budgets)

    def sizes(self) -> dict[str, int]:
        """Entries per non-empty table (diagnostics and tests)."""
        out = {"affine.intern": len(self.intern)} if self.intern else {}
        for slot, table in sorted(self.tables.items()):
            try:
                out[_NAMES[slot]] = len(table)
            except TypeError:
                out[_NAMES[slot]] = 1
        return out


def current() -> AnalysisContext:
    """The context of the innermost ``with`` in this thread, else the thread's default context."""
    ctx = _ACTIVE.get()
    if ctx is None:
        ctx = AnalysisContext()
        _ACTIVE.set(ctx)
    return ctx


def budgets() -> Budgets:
    return current().budgets


def remember(table: dict[_K, _V], key: _K, value: _V, limit: int) -> _V:
    """``table[key] = value`` in a memo bounded by ``limit`` entries: a full table is emptied first
    (it starts afresh rather than growing past its budget). Returns ``value``."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


__all__ = [
    "AnalysisContext",
    "Budgets",
    "budget_reason",
    "current",
    "budgets",
    "register_table",
    "remember",
    "table_names",
]
