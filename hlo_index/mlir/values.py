"""Index values of a function as expressions: constants fold, ``arith`` / ``affine.apply`` /
``tensor.dim`` are followed, anything else is a symbol named after its SSA value."""

from __future__ import annotations

from .symbolic import Const, Expr, Sym, add, floordiv, mod, mul, product, sub

DYNAMIC = -(1 << 63)  # MLIR's ShapedType::kDynamic in static_* arrays


class Resolver:
    """Expressions for the index values and tensor dims of one parsed module."""

    def __init__(self, parsed):
        self.parsed = parsed

    def name(self, value) -> str:
        return "%" + self.parsed.name(value)

    # ---- index values ---------------------------------------------------------------------
    def value(self, v, depth: int = 0) -> Expr:
        from xdsl.dialects import affine, arith, tensor
        from xdsl.dialects.builtin import IntegerAttr
        from xdsl.ir import OpResult

        if depth > 64 or not isinstance(v, OpResult):
            return Sym(self.name(v))
        op = v.op
        rec = lambda x: self.value(x, depth + 1)  # noqa: E731
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return Const(op.value.value.data)
        binary = {
            arith.AddiOp: add,
            arith.SubiOp: sub,
            arith.MuliOp: mul,
            arith.DivUIOp: floordiv,
            arith.DivSIOp: floordiv,
            arith.FloorDivSIOp: floordiv,
            arith.RemUIOp: mod,
            arith.RemSIOp: mod,
        }
        for cls, fn in binary.items():
            if isinstance(op, cls):
                return fn(rec(op.lhs), rec(op.rhs))
        if isinstance(op, affine.ApplyOp):
            args = [rec(o) for o in op.mapOperands]
            amap = op.map.data
            if len(amap.results) == 1:
                dims, syms = args[: amap.num_dims], args[amap.num_dims :]
                return self._affine(amap.results[0], dims, syms)
        if isinstance(op, tensor.DimOp):
            k = rec(op.index).constant
            if k is not None:
                return self.dim(op.source, k, depth + 1)
        return Sym(self.name(v))

    def _affine(self, e, dims, syms) -> Expr:
        from xdsl.ir.affine import (
            AffineBinaryOpExpr,
            AffineBinaryOpKind,
            AffineConstantExpr,
            AffineDimExpr,
            AffineSymExpr,
        )

        if isinstance(e, AffineConstantExpr):
            return Const(e.value)
        if isinstance(e, AffineDimExpr):
            return dims[e.position]
        if isinstance(e, AffineSymExpr):
            return syms[e.position]
        assert isinstance(e, AffineBinaryOpExpr)
        a, b = self._affine(e.lhs, dims, syms), self._affine(e.rhs, dims, syms)
        fn = {
            AffineBinaryOpKind.Add: add,
            AffineBinaryOpKind.Mul: mul,
            AffineBinaryOpKind.Mod: mod,
            AffineBinaryOpKind.FloorDiv: floordiv,
        }.get(e.kind)
        if fn is None:  # ceildiv
            return floordiv(add(a, sub(b, Const(1))), b)
        return fn(a, b)

    # ---- tensor dims ----------------------------------------------------------------------
    def dim(self, t, k: int, depth: int = 0) -> Expr:
        """Size of dim ``k`` of tensor value ``t``: static, or followed through the ops that
        define it, or ``dim(%t, k)``."""
        from xdsl.dialects import tensor
        from xdsl.ir import OpResult

        shape = t.type.get_shape()
        if shape[k] != DYNAMIC and shape[k] >= 0:
            return Const(shape[k])
        if depth < 64 and isinstance(t, OpResult):
            op = t.op
            if isinstance(op, tensor.ExtractSliceOp):
                sizes = mixed(self, op.static_sizes, op.sizes, depth + 1)
                kept = [i for i, d in enumerate(rank_reduction(sizes, t.type.get_shape())) if not d]
                return sizes[kept[k]]
            if isinstance(op, tensor.ExpandShapeOp):
                return mixed(self, op.static_output_shape, op.dynamic_output_shape, depth + 1)[k]
            if isinstance(op, tensor.CollapseShapeOp):
                group = reassociation(op)[k]
                return product(self.dim(op.src, i, depth + 1) for i in group)
            if isinstance(op, tensor.EmptyOp):
                dyn = [i for i, d in enumerate(shape) if d == DYNAMIC]
                return self.value(op.dynamic_sizes[dyn.index(k)], depth + 1)
        return Sym(f"dim({self.name(t)}, {k})")

    def dims(self, t) -> list[Expr]:
        return [self.dim(t, k) for k in range(len(t.type.get_shape()))]


def mixed(resolver: Resolver, static, dynamic, depth: int = 0) -> list[Expr]:
    """MLIR's mixed static/dynamic list: ``DYNAMIC`` entries take the next SSA operand."""
    dyn = iter(dynamic)
    return [resolver.value(next(dyn), depth) if s == DYNAMIC else Const(s) for s in static.get_values()]


def reassociation(op) -> list[list[int]]:
    return [[int(i.value.data) for i in group.data] for group in op.reassociation.data]


def rank_reduction(sizes: list[Expr], result_shape) -> list[bool]:
    """Which slice dims a rank-reducing ``extract_slice`` drops: unit sizes the result does not
    keep, matched left to right (any consistent choice reads the same elements: they are 1 long)."""

    def fits(size: Expr, dim: int) -> bool:
        return dim == DYNAMIC or size.constant is None or size.constant == dim

    def match(i: int, j: int):
        if i == len(sizes):
            return [] if j == len(result_shape) else None
        if j < len(result_shape) and fits(sizes[i], result_shape[j]):
            rest = match(i + 1, j + 1)
            if rest is not None:
                return [False] + rest
        if sizes[i].constant == 1:
            rest = match(i + 1, j)
            if rest is not None:
                return [True] + rest
        return None

    found = match(0, 0)
    if found is None:
        raise ValueError(f"the slice sizes {[str(s) for s in sizes]} do not reduce to {list(result_shape)}")
    return found
