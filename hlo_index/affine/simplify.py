"""Range-aware expression simplifier: a table of rewrite rules applied bottom-up to a fixpoint.

Each rule takes an expression whose children are already simplified plus the :class:`Domain`
and returns a strictly simpler equivalent expression or ``None``. Every rule is exact on the
domain: it may use the bounds of sub-expressions, never anything else. Results are memoised
per node per domain, so shared sub-expressions are simplified once.
"""

from __future__ import annotations

from ..context import current, register_table
from .bounds import Domain
from .expr import (
    CEILDIV,
    CONST,
    DIVISION_KINDS,
    FLOORDIV,
    MOD,
    RUNTIME,
    SUM,
    VARIABLE_KINDS,
    Expr,
    add_constant,
    ceildiv,
    const,
    floordiv,
    linear,
    make_sum,
    mod,
    scale,
    split_multiples,
)

INFINITE = 0  # digit descriptor upper bound meaning "no mod": x floordiv lo


# ------------------------------------------------------------------------------- helpers
_DIVISORS = register_table("affine.simplify.divisors")  # n -> its divisors


def _divisors(n: int) -> tuple[int, ...]:
    """Divisors of n strictly between 1 and n, largest first (memoised: divisors repeat)."""
    memo = current().tables[_DIVISORS]
    found = memo.get(n)
    if found is None:
        pairs = []
        i = 2
        while i * i <= n:
            if n % i == 0:
                pairs.append(i)
                if i * i != n:
                    pairs.append(n // i)
            i += 1
        found = memo[n] = tuple(sorted(pairs, reverse=True))
    return found


def _split_by_factor(x: Expr, g: int):
    """``x == g * y + z`` with ``y`` the terms (and constant part) divisible by ``g``."""
    constant, y_terms, z_terms = split_multiples(x, g)
    q, r = divmod(constant, g)
    return make_sum(q, y_terms), make_sum(r, z_terms)


def _factor_split(x: Expr, c: int, dom: Domain):
    """Find ``g | c`` and ``x == g*y + z`` with ``0 <= z < g`` (``z`` shifted by whole ``g``s
    into that window when it fits one); largest ``g`` wins. Returns ``(g, y, z)`` or None.

    Candidates are tested on the bounds of the atoms alone; expressions are built only for the
    winner."""
    if x.kind != SUM:
        return None
    bounds = dom.bounds
    ranged = [(k, bounds(atom)) for atom, k in x.terms]
    constant = x.value
    for g in _divisors(c):
        lo = hi = constant % g
        divisible = False
        for k, b in ranged:
            if k % g == 0:
                divisible = True
            elif k > 0:
                lo += k * b.lo
                hi += k * b.hi
            else:
                lo += k * b.hi
                hi += k * b.lo
        if not divisible:
            continue
        shift = lo // g
        if shift != hi // g:
            continue
        y, z = _split_by_factor(x, g)
        return g, add_constant(y, shift), add_constant(z, -shift * g)
    return None


def _fits_one_period(constant: int, terms, c: int, dom: Domain):
    """``k`` with ``constant + sum(coefficient * atom)`` in ``[k*c, k*c + c - 1]``, else None."""
    lo = hi = constant
    bounds = dom.bounds
    for atom, k in terms:
        b = bounds(atom)
        if k > 0:
            lo += k * b.lo
            hi += k * b.hi
        else:
            lo += k * b.hi
            hi += k * b.lo
    k = lo // c
    return k if k == hi // c else None


# ---------------------------------------------------------------------------- floordiv
def floordiv_constant(e: Expr, dom: Domain):
    b = dom.bounds(e.operand)
    if b.lo // e.value == b.hi // e.value:
        return const(b.lo // e.value)
    return None


def floordiv_factor_split(e: Expr, dom: Domain):
    """``(g*y + z) floordiv c == y floordiv (c/g)`` when ``g | c`` and ``0 <= z < g``."""
    found = _factor_split(e.operand, e.value, dom)
    if found is None:
        return None
    g, y, _ = found
    return floordiv(y, e.value // g)


def floordiv_of_inner_floordiv(e: Expr, dom: Domain):
    """``(A + z floordiv a) floordiv b == (a*A + z) floordiv (a*b)`` for any integer ``A``
    (nested floors); applied when ``A`` holds no division, so one division disappears."""
    x = e.operand
    if x.kind != SUM:
        return None
    lifted = _lift_inner_floordiv(x)
    if lifted is None:
        return None
    base, a = lifted
    return floordiv(base, a * e.value)


# --------------------------------------------------------------------------------- mod
def mod_one_period(e: Expr, dom: Domain):
    """``x mod c == x - k*c`` when ``x`` stays in ``[k*c, k*c + c - 1]``."""
    b = dom.bounds(e.operand)
    c = e.value
    k = b.lo // c
    if k == b.hi // c:
        return add_constant(e.operand, -k * c)
    return None


def mod_factor_split(e: Expr, dom: Domain):
    """``(g*y + z) mod c == g * (y mod (c/g)) + z`` when ``g | c`` and ``0 <= z < g``."""
    found = _factor_split(e.operand, e.value, dom)
    if found is None:
        return None
    g, y, z = found
    return scale(mod(y, e.value // g), g) + z


def mod_signed_remainder(e: Expr, dom: Domain):
    """Congruence: replace coefficients and constant by their smallest-magnitude residues mod
    ``c`` (``15*d0 mod 16 == -d0 mod 16``) when that makes the operand fit one period."""
    c = e.value
    constant, terms = e.operand.linear_terms()
    changed = []
    differs = False
    for atom, k in terms:
        r = k % c
        if 2 * r > c:  # the residue of smallest magnitude
            r -= c
        changed.append((atom, r))
        differs = differs or r != k
    if not differs:
        return None
    k = _fits_one_period(constant, changed, c, dom)
    if k is None:
        return None
    return make_sum(constant - k * c, dict(changed))


# ----------------------------------------------------------------------------- ceildiv
def ceildiv_constant(e: Expr, dom: Domain):
    b = dom.bounds(e.operand).ceildiv(e.value)
    return const(b.lo) if b.lo == b.hi else None


# --------------------------------------------------------------------------------- sums
_DIGIT_VIEWS = register_table("affine.simplify.digit_views")  # atom -> its digit view (needs no ranges)


def _digits(atom: Expr, memo: dict):
    view = memo.get(atom)
    if view is None:
        view = memo[atom] = _digit_view(atom)
    return view


def _digit_view(atom: Expr):
    """View an atom as the digit group ``D(x, lo, hi) == (x floordiv lo) mod (hi/lo)`` of a base
    ``x`` (``hi == INFINITE``: no mod). Returns ``(x, lo, hi)``.

    A mod of ``A + z floordiv a`` (``A`` division-free) is the digit group of the lifted base
    ``a*A + z`` from ``a``: ``(A + z floordiv a) mod m == ((a*A + z) floordiv a) mod m``, so it
    can meet ``(a*A + z) floordiv (a*m)`` produced by the nested-floordiv rule."""
    if atom.kind == MOD:
        inner = atom.operand
        if inner.kind == FLOORDIV:
            return inner.operand, inner.value, inner.value * atom.value
        if inner.kind == SUM:
            lifted = _lift_inner_floordiv(inner)
            if lifted is not None:
                return lifted[0], lifted[1], lifted[1] * atom.value
        return inner, 1, atom.value
    if atom.kind == FLOORDIV:
        return atom.operand, atom.value, INFINITE
    return atom, 1, INFINITE


def _lift_inner_floordiv(x: Expr):
    """``(a*A + z, a)`` when ``x == A + z floordiv a`` with ``A`` division-free, else None."""
    inner = None
    for atom, k in x.terms:
        if atom.kind in DIVISION_KINDS:
            if inner is not None or atom.kind != FLOORDIV or k != 1:
                return None
            inner = atom
    if inner is None:
        return None
    a = inner.value
    rest = [(atom, k * a) for atom, k in x.terms if atom is not inner]
    rest.append((inner.operand, 1))
    return linear(x.value * a, rest), a


def _digit_expr(x: Expr, lo: int, hi: int) -> Expr:
    y = floordiv(x, lo)
    return y if hi == INFINITE else mod(y, hi // lo)


def sum_merge_digits(e: Expr, dom: Domain):
    """Reshape round trips: ``D(lo, mid) + (mid/lo) * D(mid, hi) == D(lo, hi)`` for digit groups
    of one base, e.g. ``(x floordiv c) * c + x mod c == x`` and
    ``((x floordiv a) mod b) * a + x mod a == x mod (a*b)``; also the differences
    ``D(lo, hi) - (mid/lo) * D(mid, hi) == D(lo, mid)``.

    Bases may differ by a constant ``delta``: ``D(x, lo, hi) == D(x + delta, lo, hi)`` when
    ``hi`` divides ``delta``, so ``x mod 4 + ((x floordiv 4 + 42) mod 64) * 4`` (bases ``x`` and
    ``x + 168``) is ``(x + 168) mod 256``."""
    terms = e.terms
    # Only atoms sharing a base (up to its constant) can merge: bucket first, so most sums are
    # rejected in one pass.
    by_base: dict = {}
    shared = False
    views = current().tables[_DIGIT_VIEWS]
    for atom, k in terms:
        view = _digits(atom, views)
        base = view[0]
        key = base.terms if base.kind == SUM else base
        if base.kind == SUM and len(key) == 1 and key[0][1] == 1:
            key = key[0][0]  # x + c shares a bucket with x
        bucket = by_base.get(key)
        if bucket is None:
            by_base[key] = [(view, atom, k)]
        else:
            bucket.append((view, atom, k))
            shared = True
    if shared:
        for views in by_base.values():
            found = _merge_one_base(e, views)
            if found is not None:
                return found
    if len(by_base) > 1:
        return _merge_scaled_bases(e, list(by_base.values()), dom)
    return None


def _merge_scaled_bases(e: Expr, buckets, dom: Domain):
    """Digit groups of a base ``y`` are digit groups of ``x == g*y + z`` when ``0 <= z < g``:
    ``D(y, lo, hi) == D(x, g*lo, g*hi)``; and of ``x == y + hi*w`` for any integer ``w``. Re-base one
    bucket onto another and retry the merge (a reshape round trip through a dimension of size g:
    ``(6*d0 + d1) floordiv 4`` is ``(90*d0 + 15*d1 + d2) floordiv 60`` when ``d2 in [0, 14]``)."""
    divided = [b for b in buckets if any(v[1] != 1 or v[2] != INFINITE for v, _, _ in b)]
    if len(divided) < 2:
        return None
    for small in divided:
        y = small[0][0][0]
        _, y_terms = y.linear_terms()
        lead, k_small = y_terms[0]
        for big in divided:
            if big is small:
                continue
            x = big[0][0][0]
            moduli = [hi for (_, _, hi), _, _ in small]
            if INFINITE not in moduli:
                # bases differing by a multiple of every modulus: D(y, lo, hi) == D(x, lo, hi)
                delta_const, delta_terms = (x - y).linear_terms()
                if all(delta_const % m == 0 and all(k % m == 0 for _, k in delta_terms) for m in moduli):
                    found = _merge_one_base(e, big + [((x, lo, hi), atom, k) for (_, lo, hi), atom, k in small])
                    if found is not None:
                        return found
            _, x_terms = x.linear_terms()
            k_big = dict(x_terms).get(lead)
            if not k_big or k_big % k_small:
                continue
            g = k_big // k_small
            if g <= 1:
                continue
            b = dom.bounds(x - y * g)
            if b.lo < 0 or b.hi >= g:
                continue
            rebased = [((x, lo * g, hi if hi == INFINITE else hi * g), atom, k) for (_, lo, hi), atom, k in small]
            found = _merge_one_base(e, big + rebased)
            if found is not None:
                return found
    return None


def _merge_one_base(e: Expr, views):
    terms = e.terms
    for i, ((x1, lo1, hi1), a1, k1) in enumerate(views):
        for j, ((x2, lo2, hi2), a2, k2) in enumerate(views):
            if i == j:
                continue
            base = x1
            if x1 is not x2:  # same terms, other constants: re-base one group if exact
                delta = x2.linear_terms()[0] - x1.linear_terms()[0]
                if hi1 != INFINITE and delta % hi1 == 0:
                    base = x2
                elif hi2 == INFINITE or delta % hi2:
                    continue
            replacement = None
            if hi1 == lo2 and hi1 != INFINITE and k2 == k1 * (hi1 // lo1):
                replacement = (_digit_expr(base, lo1, hi2), k1)
            elif hi1 == hi2 and lo2 > lo1 and lo2 % lo1 == 0 and k2 == -k1 * (lo2 // lo1):
                replacement = (_digit_expr(base, lo1, lo2), k1)
            if replacement is not None:
                rest = [(atom, k) for atom, k in terms if atom is not a1 and atom is not a2]
                return linear(e.value, rest + [replacement])
    return None


def sum_cancel_floordiv(e: Expr, dom: Domain):
    """``k*x - k*c*(x floordiv c) == k*(x mod c)`` when ``x`` is itself a sum spread in ``e``."""
    for atom, coefficient in e.terms:
        if atom.kind != FLOORDIV or atom.operand.kind != SUM:
            continue
        c = atom.value
        if coefficient % c:
            continue
        k = -coefficient // c
        x = atom.operand
        rest = linear(0, [(e, 1), (x, -k), (atom, -coefficient)])  # e carries its constant
        if len(rest.linear_terms()[1]) + 1 < len(e.terms):
            return rest + scale(mod(x, c), k)
    return None


RULES = {
    FLOORDIV: (floordiv_constant, floordiv_factor_split, floordiv_of_inner_floordiv),
    MOD: (mod_one_period, mod_factor_split, mod_signed_remainder),
    CEILDIV: (ceildiv_constant,),
    # Both need a division atom (digit groups to merge, a floordiv to cancel): a sum of variables
    # alone is final and is not offered to them.
    SUM: (sum_merge_digits, sum_cancel_floordiv),
}


class Simplifier:
    """Simplify expressions over one domain; memoised per node and shared by every simplifier of
    an equal domain (see ``bounds.Domain``)."""

    __slots__ = ("domain", "_memo")

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._memo: dict[Expr, Expr] = domain.simplified_memo

    def __call__(self, e: Expr) -> Expr:
        return _simplify(e, self.domain, self._memo)


def simplify_all(exprs, domain: Domain) -> list[Expr]:
    """Each of ``exprs`` simplified over ``domain``."""
    memo = domain.simplified_memo
    return [_simplify(e, domain, memo) for e in exprs]


def _simplify(e: Expr, domain: Domain, memo: dict) -> Expr:
    """Children first, then the rules of ``e``'s kind; a rewrite is simplified again. A plain
    function, so that the recursion is the interpreter's cheapest call."""
    kind = e.kind
    if kind == CONST:
        return e
    if kind in VARIABLE_KINDS:  # cheaper than a memo lookup
        try:
            b = domain.by_kind[kind][e.value]
        except IndexError:
            b = domain.variable_bounds(e)  # raises, naming the variable
        return const(b.lo) if b.lo == b.hi else e
    done = memo.get(e)
    if done is not None:
        return done
    out = e
    if kind == SUM:
        terms = e.terms
        simplified = []
        changed = divided = False
        for atom, k in terms:
            new = _simplify(atom, domain, memo)
            if new is not atom:
                changed = True
            elif atom.kind >= FLOORDIV:
                divided = True
            simplified.append((new, k))
        if changed:
            rebuilt = linear(e.value, simplified)
            if rebuilt is not e:
                out = _of_simplified_atoms(rebuilt, domain, memo)
                divided = False
            else:
                divided = True  # as if unchanged: let the rules look
        if divided:
            out = _apply_rules(e, SUM, domain, memo)
    else:
        operand = e.operand
        inner = _simplify(operand, domain, memo)
        rebuilt = e
        if inner is not operand:
            rebuilt = (
                floordiv(inner, e.value)
                if kind == FLOORDIV
                else (mod(inner, e.value) if kind == MOD else ceildiv(inner, e.value))
            )
        out = _simplify(rebuilt, domain, memo) if rebuilt is not e else _apply_rules(e, kind, domain, memo)
    memo[e] = out
    if out is not e and out.kind > RUNTIME:
        memo[out] = out
    return out


def _of_simplified_atoms(e: Expr, domain: Domain, memo: dict) -> Expr:
    """``_simplify(e)`` for ``e`` made by ``linear`` of simplified expressions: a sum adds no
    atom of its own, so ``e``'s atoms (or ``e`` itself when it is not a sum) are simplified
    already and only the sum rules are left to try."""
    if e.kind != SUM:
        return e
    done = memo.get(e)
    if done is not None:
        return done
    out = e
    for atom, _ in e.terms:
        if atom.kind >= FLOORDIV:
            out = _apply_rules(e, SUM, domain, memo)
            break
    memo[e] = out
    if out is not e and out.kind > RUNTIME:
        memo[out] = out
    return out


def _apply_rules(e: Expr, kind: int, domain: Domain, memo: dict) -> Expr:
    for rule in RULES[kind]:
        rewritten = rule(e, domain)
        if rewritten is not None and rewritten is not e:
            return _simplify(rewritten, domain, memo)
    return e
