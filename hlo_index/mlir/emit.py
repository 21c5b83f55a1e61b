"""MLIR text of a swapped pair, in the input's own spelling (``tensor.expand_shape ... output_shape``,
``tensor.extract_slice %t[...] [...] [...]``); runtime quantities become ``arith`` / ``tensor.dim``
ops placed before the pair."""

from __future__ import annotations

from .symbolic import Bin, Cmp, Cond, Const, Expr, Select, Sym

_ARITH = {
    "+": "arith.addi",
    "-": "arith.subi",
    "*": "arith.muli",
    "floordiv": "arith.divui",
    "mod": "arith.remui",
    "ceildiv": "arith.ceildivui",
}


class Emitter:
    def __init__(self, taken: set[str], types: dict[str, str], prefix: str = "bubble"):
        self.taken = set(taken)
        self.types = types  # tensor value name (with %) -> its type text
        self.lines: list[str] = []
        self.values: dict[Expr | Cond, str] = {}  # a select's flag is keyed by its condition
        self.prefix = prefix

    def fresh(self, hint: str) -> str:
        n = 0
        while f"{self.prefix}_{hint}{n}" in self.taken:
            n += 1
        name = f"{self.prefix}_{hint}{n}"
        self.taken.add(name)
        return "%" + name

    def index(self, e: Expr) -> str:
        """An SSA value holding ``e`` (emitting the ops that compute it once)."""
        if e in self.values:
            return self.values[e]
        if isinstance(e, Sym) and not e.name.startswith("dim("):
            return e.name
        if isinstance(e, Const):
            name = self.fresh("c")
            self.lines.append(f"{name} = arith.constant {e.v} : index")
        elif isinstance(e, Sym):  # dim(%t, k)
            tensor, k = e.name[4:-1].rsplit(", ", 1)
            k_value = self.index(Const(int(k)))
            name = self.fresh("d")
            self.lines.append(f"{name} = tensor.dim {tensor}, {k_value} : {self.types[tensor]}")
        elif isinstance(e, Select):
            cond = e.cond
            assert isinstance(cond, Cmp), "a select's flag is emitted for one comparison"
            flag = self.values.get(cond)
            if flag is None:
                a, b = self.index(cond.a), self.index(cond.b)
                flag = self.values[cond] = self.fresh("p")
                pred = {"==": "eq", "!=": "ne", "<": "ult", "<=": "ule", ">": "ugt", ">=": "uge"}[cond.op]
                self.lines.append(f"{flag} = arith.cmpi {pred}, {a}, {b} : index")
            x, y = self.index(e.a), self.index(e.b)
            name = self.fresh("i")
            self.lines.append(f"{name} = arith.select {flag}, {x}, {y} : index")
        else:
            assert isinstance(e, Bin)
            a, b = self.index(e.a), self.index(e.b)
            name = self.fresh("i")
            self.lines.append(f"{name} = {_ARITH[e.op]} {a}, {b} : index")
        self.values[e] = name
        return name

    def mixed(self, es: list[Expr]) -> str:
        return "[" + ", ".join(str(e.constant) if e.constant is not None else self.index(e) for e in es) + "]"


def tensor_type(dims: list[Expr], element: str) -> str:
    return "tensor<" + "".join(("?" if d.constant is None else str(d.constant)) + "x" for d in dims) + element + ">"


def reassociation_text(groups: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in groups) + "]"


def reshape_line(
    em: Emitter, result: str, kind: str, source: str, groups, src_type: str, dims: list[Expr], element: str
) -> str:
    out_type = tensor_type(dims, element)
    if kind == "expand":
        shape = em.mixed(dims)
        return (
            f"{result} = tensor.expand_shape {source} {reassociation_text(groups)} output_shape {shape} "
            f": {src_type} into {out_type}"
        )
    return f"{result} = tensor.collapse_shape {source} {reassociation_text(groups)} : {src_type} into {out_type}"


def slice_line(em: Emitter, result: str, source: str, spec, src_type: str, out_type: str) -> str:
    offs = em.mixed([s[0] for s in spec])
    sizes = em.mixed([s[1] for s in spec])
    strides = em.mixed([s[2] for s in spec])
    return f"{result} = tensor.extract_slice {source}{offs} {sizes} {strides} : {src_type} to {out_type}"
