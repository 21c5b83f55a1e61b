"""``IndexingMap``: a map from a box of dimension variables (plus existentially quantified range
variables and runtime variables) to index tuples, restricted by ``expr in [lo, hi]`` constraints.

Two special maps are first-class: KNOWN EMPTY (no point of the domain is feasible) and UNDEFINED
(the map is unknown; ``undefined_reason`` says why). Maps are immutable values; every operation
returns a new map.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from ..context import budgets
from .constraints import simplify_parts
from .expr import DIM, RANGE, RUNTIME, Expr, const, dim, replace_variables, variable
from .interval import Interval, RuntimeVar

if TYPE_CHECKING:
    import numpy as np

# What the public constructors accept for a bound and a runtime variable: the typed value or a
# ``(lo, hi)`` pair; a result or constraint expression may be a plain integer.
IntervalLike: TypeAlias = Interval | tuple[int, int]
RuntimeVarLike: TypeAlias = RuntimeVar | Interval | tuple[int, int]
ExprLike: TypeAlias = Expr | int

_REGULAR, _EMPTY, _UNDEFINED = 0, 1, 2


def _interval(value: IntervalLike) -> Interval:
    if isinstance(value, Interval):
        return value
    lo, hi = value
    return Interval(int(lo), int(hi))


@functools.cache
def _compose() -> Callable[[IndexingMap, IndexingMap], IndexingMap]:
    """``compose.compose``, imported on the first composition (that module imports this one); a
    cached call, where an import statement costs as much as composing two small maps."""
    from .compose import compose

    return compose


@functools.cache
def _format_map() -> Callable[..., str]:
    """``text.format_map``, imported on the first map printed (the text module's reader imports
    this one); a cached call, as ``_compose``."""
    from .text import format_map

    return format_map


def _runtime(value: RuntimeVarLike) -> RuntimeVar:
    if isinstance(value, RuntimeVar):
        return value
    if isinstance(value, Interval):
        return RuntimeVar(value, "")
    return RuntimeVar(_interval(value), "")


class IndexingMap:
    """See the module docstring and docs/CONTRACTS.md (``hlo_index.affine``)."""

    __slots__ = (
        "dims",
        "range_vars",
        "runtime_vars",
        "results",
        "constraints",
        "_state",
        "_reason",
        "_arity",
        "_simplified",
        "_key",
        "_uses_dims",
        "_pruned",
    )

    dims: tuple[Interval, ...]
    range_vars: tuple[Interval, ...]
    runtime_vars: tuple[RuntimeVar, ...]
    results: tuple[Expr, ...]
    constraints: tuple[tuple[Expr, Interval], ...]
    _state: int
    _reason: str
    _arity: tuple[int, int]
    _simplified: IndexingMap | None
    _key: tuple[object, ...] | None
    _uses_dims: bool | None
    # ``remove_unused_variables()``, once asked: the map, or True where it is this map itself (no
    # reference to itself: a map's own cycle would outlive it while the collector is paused)
    _pruned: IndexingMap | bool | None

    def __init__(
        self,
        dims: Sequence[IntervalLike],
        range_vars: Sequence[IntervalLike] = (),
        runtime_vars: Sequence[RuntimeVarLike] = (),
        results: Sequence[ExprLike] = (),
        constraints: Sequence[tuple[ExprLike, IntervalLike]] = (),
    ) -> None:
        self.dims = tuple(_interval(b) for b in dims)
        self.range_vars = tuple(_interval(b) for b in range_vars)
        self.runtime_vars = tuple(_runtime(v) for v in runtime_vars)
        self.results = tuple(e if isinstance(e, Expr) else const(e) for e in results)
        self.constraints = tuple((e if isinstance(e, Expr) else const(e), _interval(b)) for e, b in constraints)
        self._state = _REGULAR
        self._reason = ""
        self._arity = (len(self.dims), len(self.results))
        self._simplified = None
        self._key = None
        self._uses_dims = None
        self._pruned = None
        self._check_variables()

    def _check_variables(self) -> None:
        counts = {DIM: len(self.dims), RANGE: len(self.range_vars), RUNTIME: len(self.runtime_vars)}
        seen: set[Expr] = set()
        for e in self.results + tuple(e for e, _ in self.constraints):
            seen |= e.variables()
        for v in seen:
            if v.value >= counts[v.kind]:
                raise ValueError(
                    f"variable {v} is used but not declared "
                    f"({counts[DIM]} dims, {counts[RANGE]} range, "
                    f"{counts[RUNTIME]} runtime variables)"
                )

    # ----------------------------------------------------------------------- constructors
    @classmethod
    def identity(cls, dims: Sequence[int]) -> IndexingMap:
        return cls.from_shape_dims(dims, [dim(i) for i in range(len(dims))])

    @classmethod
    def from_shape_dims(
        cls,
        dims: Sequence[int],
        results: Sequence[ExprLike],
        range_vars: Sequence[IntervalLike] = (),
        runtime_vars: Sequence[RuntimeVarLike] = (),
        constraints: Sequence[tuple[ExprLike, IntervalLike]] = (),
    ) -> IndexingMap:
        """Dimension ``i`` ranges over ``[0, dims[i] - 1]``; range vars given as intervals."""
        return cls([Interval(0, int(n) - 1) for n in dims], range_vars, runtime_vars, results, constraints)

    @classmethod
    def known_empty(
        cls, num_dims: int = 0, num_results: int = 0, num_range_vars: int = 0, num_runtime_vars: int = 0
    ) -> IndexingMap:
        """No point is feasible. As XLA's ResetToKnownEmpty, the map keeps its variables (each
        bounded by the empty interval [0, -1]) and its results (all 0), so its arity is intact."""
        m = cls._special(_EMPTY, "")
        empty = Interval(0, -1)
        m.dims = (empty,) * num_dims
        m.range_vars = (empty,) * num_range_vars
        m.runtime_vars = tuple(RuntimeVar(empty, "") for _ in range(num_runtime_vars))
        m.results = (const(0),) * num_results
        m._arity = (num_dims, num_results)
        return m

    def emptied(self) -> IndexingMap:
        """This map made KNOWN EMPTY, keeping its dims, range and runtime variable counts and results."""
        return IndexingMap.known_empty(self.num_dims, self.num_results, len(self.range_vars), len(self.runtime_vars))

    @classmethod
    def undefined(cls, reason: str) -> IndexingMap:
        return cls._special(_UNDEFINED, reason)

    @classmethod
    def _special(cls, state: int, reason: str) -> IndexingMap:
        m = object.__new__(cls)
        m.dims = m.range_vars = m.runtime_vars = m.results = m.constraints = ()
        m._state = state
        m._reason = reason
        m._arity = (0, 0)
        m._simplified = m
        m._key = None
        m._uses_dims = None
        m._pruned = None
        return m

    @classmethod
    def _from_parts(
        cls,
        dims: Iterable[Interval],
        range_vars: Iterable[Interval],
        runtime_vars: Iterable[RuntimeVar],
        results: Iterable[Expr],
        constraints: Iterable[tuple[Expr, Interval]],
    ) -> IndexingMap:
        """Trusted constructor (no re-validation): parts are already canonical types."""
        m = object.__new__(cls)
        m.dims = tuple(dims)
        m.range_vars = tuple(range_vars)
        m.runtime_vars = tuple(runtime_vars)
        m.results = tuple(results)
        m.constraints = tuple(constraints)
        m._state = _REGULAR
        m._reason = ""
        m._arity = (len(m.dims), len(m.results))
        m._simplified = None
        m._key = None
        m._uses_dims = None
        m._pruned = None
        return m

    # ------------------------------------------------------------------------- properties
    @property
    def is_known_empty(self) -> bool:
        return self._state == _EMPTY

    @property
    def is_undefined(self) -> bool:
        return self._state == _UNDEFINED

    @property
    def undefined_reason(self) -> str:
        return self._reason

    @property
    def num_dims(self) -> int:
        return self._arity[0]

    @property
    def num_results(self) -> int:
        return self._arity[1]

    @property
    def num_range_vars(self) -> int:
        return len(self.range_vars)

    @property
    def num_runtime_vars(self) -> int:
        return len(self.runtime_vars)

    def variable_interval(self, v: Expr) -> Interval:
        """The interval of variable ``v`` (a dim, range or runtime variable of this map)."""
        if v.kind == DIM:
            return self.dims[v.value]
        if v.kind == RANGE:
            return self.range_vars[v.value]
        return self.runtime_vars[v.value].interval

    # ------------------------------------------------------------------------- operations
    def simplified(self) -> IndexingMap:
        """Range-aware canonical form: simplified results and constraints, constraints
        normalised and sorted, bounds tightened; KNOWN EMPTY when infeasible."""
        if self._simplified is not None:
            return self._simplified
        runtime_vars = self.runtime_vars
        parts = simplify_parts(
            self.dims,
            self.range_vars,
            [v.interval for v in runtime_vars] if runtime_vars else (),
            self.results,
            self.constraints,
        )
        if parts is None:
            out = self.emptied()
        else:
            dims, ranges, runtime_bounds, results, constraints = parts
            runtime = [
                v if b == v.interval else RuntimeVar(b, v.description, True)
                for b, v in zip(runtime_bounds, runtime_vars)
            ]
            out = IndexingMap._from_parts(dims, ranges, runtime, results, constraints)
        out._simplified = out
        self._simplified = out
        return out

    @property
    def uses_dims(self) -> bool:
        """Whether some result or constraint mentions a dimension variable (False: every point of
        the domain reads the same elements)."""
        if self._uses_dims is None:
            self._uses_dims = any(
                v.kind == DIM for e in (*self.results, *(c for c, _ in self.constraints)) for v in e.variables()
            )
        return self._uses_dims

    def with_dims(self, dims: Sequence[Interval]) -> IndexingMap:
        """This map over other dimension intervals: as many as it has, or any number when no
        result or constraint uses a dimension. A dimension-free map that is simplified stays
        simplified (simplification only reads the bounds of the variables it meets): nothing
        is recomputed."""
        dims = tuple(_interval(b) for b in dims)
        if self._state != _REGULAR:
            raise ValueError("with_dims: a regular map only")
        dim_free = not self.uses_dims
        if not dim_free and len(dims) != len(self.dims):
            raise ValueError(f"with_dims: {len(dims)} intervals for a map of {len(self.dims)} dims")
        out = IndexingMap._from_parts(dims, self.range_vars, self.runtime_vars, self.results, self.constraints)
        out._uses_dims = self._uses_dims
        if dim_free and self._simplified is self and all(b.lo <= b.hi for b in dims):
            out._simplified = out
        return out

    def compose(self, inner: IndexingMap) -> IndexingMap:
        """``self ∘ inner`` (x -> self(inner(x))), simplified. See ``compose.py``."""
        return _compose()(self, inner)

    def remove_unused_variables(self) -> IndexingMap:
        """Drop range and runtime variables used by no result and no constraint (renumbering
        the rest; a runtime variable narrowed by a constraint or with one value left is kept).
        Dimensions are kept: they are the map's interface.

        Constraints that only tie range variables used nowhere else are a closed statement:
        when brute force over their (small) box shows it satisfiable they are dropped with
        their variables (XLA's RemoveUnusedSymbols does the same); unsatisfiable makes the
        map KNOWN EMPTY; a box too large to check keeps them."""
        pruned = self._pruned
        if pruned is not None:
            return self if pruned is True else pruned  # type: ignore[return-value]
        out = self._remove_unused_variables()
        self._pruned = True if out is self else out
        return out

    def _remove_unused_variables(self) -> IndexingMap:
        if self._state != _REGULAR:
            return self
        used: set[Expr] = set()
        for e in self.results:
            used |= e.variables()
        constraints = self.constraints
        detached = _detached_range_constraints(constraints, used)
        if detached:
            verdict = _satisfiable(detached, self.range_vars)
            if verdict is False:
                return self.emptied()
            if verdict:
                constraints = tuple(c for c in constraints if c not in detached)
        for e, _ in constraints:
            used |= e.variables()
        if constraints is not self.constraints:
            return IndexingMap._from_parts(
                self.dims, self.range_vars, self.runtime_vars, self.results, constraints
            ).remove_unused_variables()
        keep_range = [i for i in range(len(self.range_vars)) if variable(RANGE, i) in used]
        # a runtime variable narrowed by a constraint, or to one value, is a condition on the
        # runtime value (the map applies only when it takes those values), not a value known in
        # advance: it stays
        keep_runtime = [
            i
            for i in range(len(self.runtime_vars))
            if variable(RUNTIME, i) in used or self.runtime_vars[i].narrowed or self.runtime_vars[i].interval.is_point
        ]
        if len(keep_range) == len(self.range_vars) and len(keep_runtime) == len(self.runtime_vars):
            return self
        renumber = {variable(RANGE, old): variable(RANGE, new) for new, old in enumerate(keep_range)}
        renumber.update({variable(RUNTIME, old): variable(RUNTIME, new) for new, old in enumerate(keep_runtime)})
        return self._rewritten(
            renumber.get, [self.range_vars[i] for i in keep_range], [self.runtime_vars[i] for i in keep_runtime]
        )

    def substitute_runtime_values(self, values: Sequence[int | None]) -> IndexingMap:
        """Replace runtime variables whose value is known (``values[i]`` not None) by that
        constant; the remaining runtime variables are renumbered. Result simplified."""
        if self._state != _REGULAR:
            return self
        keep = [i for i, v in enumerate(values) if v is None]
        keep += list(range(len(values), len(self.runtime_vars)))
        mapping: dict[Expr, Expr] = {}
        for i, v in enumerate(values):
            if v is not None:
                if not self.runtime_vars[i].interval.contains(v):
                    return self.emptied()
                mapping[variable(RUNTIME, i)] = const(v)
        for new, old in enumerate(keep):
            mapping[variable(RUNTIME, old)] = variable(RUNTIME, new)
        return self._rewritten(mapping.get, self.range_vars, [self.runtime_vars[i] for i in keep]).simplified()

    def convert_range_vars_to_dims(self) -> IndexingMap:
        """Turn every range variable into a trailing dimension (``s_i -> d_{n+i}``)."""
        if self._state != _REGULAR:
            return self
        n = len(self.dims)
        mapping = {variable(RANGE, i): dim(n + i) for i in range(len(self.range_vars))}
        return self._rewritten(mapping.get, (), self.runtime_vars, dims=self.dims + self.range_vars)

    def rescale_range_vars(self) -> IndexingMap:
        """Use ``s mod m in [r, r]`` constraints to substitute ``s = m*s' + r`` with a dense new
        range variable ``s'`` (XLA's RescaleSymbols). Result simplified."""
        from .compose import rescale_range_vars

        return rescale_range_vars(self)

    def _rewritten(
        self,
        replace: Callable[[Expr], Expr | None],
        range_vars: Sequence[Interval],
        runtime_vars: Sequence[RuntimeVar],
        dims: Sequence[Interval] | None = None,
    ) -> IndexingMap:
        memo: dict[Expr, Expr] = {}
        results = [replace_variables(e, replace, memo) for e in self.results]
        constraints = [(replace_variables(e, replace, memo), b) for e, b in self.constraints]
        # every caller passes this map's own intervals and runtime variables and renames onto
        # declared variables: the parts need no conversion or check
        return IndexingMap._from_parts(
            self.dims if dims is None else dims, range_vars, runtime_vars, results, constraints
        )

    # ------------------------------------------------------------------------- evaluation
    def evaluate(
        self, dims: Sequence[int], range_vals: Sequence[int] = (), runtime_vals: Sequence[int] = ()
    ) -> tuple[int, ...]:
        from .evaluate import evaluate_point

        return evaluate_point(self, dims, range_vals, runtime_vals)

    def enumerate(
        self, runtime_vals: Sequence[int] | None = None, limit: int = 1 << 20, seed: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        from .evaluate import enumerate_map

        return enumerate_map(self, runtime_vals, limit, seed)

    def read_set(self, dim_point: Sequence[int], runtime_vals: Sequence[int] | None = None) -> set[tuple[int, ...]]:
        from .evaluate import read_set

        return read_set(self, dim_point, runtime_vals)

    def semantically_equal(self, other: IndexingMap, limit: int = 1 << 18, seed: int = 0) -> bool:
        """Brute-force relation comparison: exhaustive (a proof) on small domains, a bounded
        seeded check beyond ``limit`` points (see ``evaluate.semantically_equal``)."""
        from .evaluate import semantically_equal

        return semantically_equal(self, other, limit, seed)

    # ------------------------------------------------------------------------------- text
    def __str__(self) -> str:
        return _format_map()(self)

    def to_string(self, field_separator: str = ", ", known_empty_arity: bool = False) -> str:
        """``str(m)`` with another separator between domain items (e.g. ``"\\n"``); with
        ``known_empty_arity`` a KNOWN EMPTY map keeps its counts:
        ``(d0, d1) -> (3 results): KNOWN EMPTY`` (``parse_map`` reads both forms)."""
        return _format_map()(self, field_separator, known_empty_arity)

    def to_mlir(self) -> str:
        from .text import format_mlir

        return format_mlir(self)

    def __repr__(self) -> str:
        return f"IndexingMap({str(self)!r})"

    # ----------------------------------------------------------------------------- equality
    def written_key(self) -> tuple[object, ...]:
        """Identity of the map exactly as it stands: not simplified, runtime variables with their
        descriptions. Maps with equal keys give equal results from every operation, so a memo of
        compositions may share them between map objects (unlike ``canonical_key``, under which
        two maps may still be written, or describe their runtime values, differently)."""
        return (
            self._state,
            self._reason,
            self.dims,
            self.range_vars,
            self.runtime_vars,
            self.results,
            self.constraints,
        )

    def canonical_key(self) -> tuple[object, ...]:
        """Structural identity of the simplified map (runtime descriptions excluded)."""
        s = self.simplified()
        if s._key is None and s._state == _EMPTY:
            s._key = (s._state, s._arity)  # every empty map of one arity reads the same: nothing
        if s._key is None:
            s._key = (
                s._state,
                s._reason,
                s._arity,
                s.dims,
                s.range_vars,
                tuple(v.interval for v in s.runtime_vars),
                s.results,
                s.constraints,
            )
        return s._key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return self is other or self.canonical_key() == other.canonical_key()

    def __hash__(self) -> int:
        return hash(self.canonical_key())


def _detached_range_constraints(
    constraints: Sequence[tuple[Expr, Interval]], used: set[Expr]
) -> list[tuple[Expr, Interval]]:
    """Constraints whose variables are all range variables, none of them in ``used`` nor linked
    (through shared variables) to a constraint that mentions another kind or a used one."""
    tainted = set(used)
    changed = True
    while changed:
        changed = False
        for e, _ in constraints:
            variables = e.variables()
            if (any(v.kind != RANGE for v in variables) or variables & tainted) and not variables <= tainted:
                tainted |= variables
                changed = True
    return [(e, b) for e, b in constraints if e.variables() and not (e.variables() & tainted)]


def _satisfiable(constraints: Sequence[tuple[Expr, Interval]], range_vars: Sequence[Interval]) -> bool | None:
    """Whether some range-variable point meets every constraint; None when the box is too big."""
    import itertools

    from .evaluate import evaluate_expr

    variables = sorted(set().union(*(e.variables() for e, _ in constraints)), key=lambda v: v.value)
    boxes = [range_vars[v.value] for v in variables]
    size = 1
    for b in boxes:
        size *= max(b.size, 0)
    if size > budgets().satisfiability_box:
        return None
    for point in itertools.product(*(range(b.lo, b.hi + 1) for b in boxes)):
        env: dict[tuple[int, int], int] = {(RANGE, v.value): x for v, x in zip(variables, point)}
        memo: dict[Expr, int] = {}
        if all(b.contains(evaluate_expr(e, env, memo)) for e, b in constraints):
            return True
    return False
