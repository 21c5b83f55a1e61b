"""The structural identity of instructions and computations: names and ``id()`` left out.

One module owns every structural identity, with one list of what never counts (``NEVER_READ``:
documentation, profiling and ordering attributes). There are two forms, because they answer
to different readers:

In-process keys (ints and tuples, interned per analysis context), for caches:

* ``instruction_key(instr)``: the key of one op-rule result. Opcode, result and operand shapes
  (layouts included), the attributes the op's rules declare they read (``ops.registry.Reads``),
  a called computation by its *body* (``fingerprint_id``, recursively), constant / iota
  operands' values when declared (a ``tuple`` operand by its elements' values), module
  attributes when declared. None when the opcode's rules declare nothing: such results are
  never shared between instructions.
* ``fingerprint_id(comp)``: a small int, equal for two computations exactly when their
  ``computation_fingerprint`` keys are equal: every instruction's opcode, shape, wiring (operand
  positions), parameter number, literal and attributes (the declared ones; all but the
  never-read ones for undeclared opcodes, plus the module's attributes), callees by body.
  ``--verify`` verifies the targets of one fingerprint once.
* ``instruction_structure(instr)``: opcode, shapes and every attribute but ``UNSTRUCTURAL``,
  for caches of code that must not rely on what the rules declare they read (``--verify``'s
  memo of the numpy reference's read sets).

Transformer layers repeat the same fused computations under different names; equal keys mean the
same instructions, shapes, attributes and wiring, so the indexing maps are identical and are
computed once.

Stable digests (sha256 text), for files: ``check``'s finding identities, which users keep in
baseline files, so their values are a public contract and never change with the keys above:

* ``computation_digest(comp)``: a hex digest of every instruction's opcode, printed shape,
  operand positions, parameter number, literal text and every attribute but ``UNSTRUCTURAL``
  (callees by their own digest), and the root's position; equal across processes and runs.
* ``finding_identity(digest, operand, output, maps)``: 16 hex digits naming one finding.
They cannot be the in-process keys: those hold per-context ints (shape tokens, callee ids) and
only the attributes rules read, while a baseline needs a value equal in every process that
covers every attribute that may change the structure.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeAlias

from ..context import current, register_table
from ..hlo.attributes import CALLEE_ROLES
from ..hlo.model import Computation, DeferredComputation, Instruction, Shape
from ..ops.registry import Reads, reads_of

# Attributes no indexing rule may read: documentation, profiling and ordering only (and they
# often differ between otherwise identical copies, or hold instruction names).
NEVER_READ = frozenset({"metadata", "statistics", "control-predecessors", "origin", "op_name"})
# Besides the never-read ones, attributes that differ between otherwise identical compiles
# (backend tuning, frontend notes, partitioning): no structural identity counts them.
UNSTRUCTURAL = NEVER_READ | {"backend_config", "frontend_attributes", "sharding"}

# The parser shares one Shape object between equal shapes; hashing a Shape rebuilds its field
# tuple every time, so each object gets a small int once (the entry keeps it alive: ids stay unique).
_SHAPE_TOKENS = register_table("fusion.fingerprint.shape_tokens")  # id(shape) -> (shape, token)
_SHAPE_IDS = register_table("fusion.fingerprint.shape_ids")  # Shape -> token
_KEY_IDS = register_table("fusion.fingerprint.computation_ids")  # fingerprint -> int
_BY_COMPUTATION = register_table("fusion.fingerprint.by_computation")  # id(comp) -> (comp, int)
_OUTLINES = register_table("fusion.fingerprint.outlines")  # see fingerprint_id

# A structural key: ints, strings and nested tuples of them (hashable unless an attribute value is not).
Key: TypeAlias = tuple[object, ...]


def shape_token(shape: Shape) -> int:
    """A small int equal for equal shapes (memoised per shape object)."""
    tables = current().tables
    tokens: dict[int, tuple[Shape, int]] = tables[_SHAPE_TOKENS]
    hit = tokens.get(id(shape))
    if hit is not None and hit[0] is shape:
        return hit[1]
    ids: dict[Shape, int] = tables[_SHAPE_IDS]
    token = ids.setdefault(shape, len(ids))
    tokens[id(shape)] = (shape, token)
    return token


def _hashable(value: object) -> object:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _callee_value(instr: Instruction, role: str) -> object:
    """A callee attribute's value by body: the callee's fingerprint id (a tuple for lists)."""
    called = instr.called
    callee = called.get(role)
    if callee is not None:
        return ("body", fingerprint_id(callee))
    value = instr.attrs.get(role)
    if isinstance(value, tuple):
        bodies = [body for i in range(len(value)) if (body := called.get(f"{role}.{i}")) is not None]
        if len(bodies) == len(value):
            return ("bodies", tuple(fingerprint_id(b) for b in bodies))
    # unresolved: the rule sees no callee either (and answers UNDEFINED, which is never shared)
    return ("unresolved", _hashable(value))


def _attribute_value(instr: Instruction, name: str) -> object:
    if name in CALLEE_ROLES:
        return _callee_value(instr, name)
    return _hashable(instr.attrs[name])


def _declared_attributes(instr: Instruction, names: Collection[str]) -> Key:
    attrs = instr.attrs
    if not attrs:
        return ()
    # the few declared names present (a set intersection in C), in name order as ever
    return tuple([(name, _attribute_value(instr, name)) for name in sorted(attrs.keys() & names)])


def _all_attributes(instr: Instruction) -> Key:
    """Every attribute but the never-read ones (undeclared rules may look at any), plus callees
    present only in ``called`` (multi-callee entries)."""
    items = [(name, _attribute_value(instr, name)) for name in sorted(instr.attrs) if name not in NEVER_READ]
    return tuple(items)


def _module_attributes(instr: Instruction, names: Collection[str] | None) -> Key:
    comp = instr.computation
    module = comp.module if comp is not None else None
    attrs = getattr(module, "attrs", None) or {}
    if names is None:
        return tuple(sorted((k, _hashable(v)) for k, v in attrs.items()))
    return tuple([(name, _hashable(attrs.get(name))) for name in sorted(names)])


def _operand_value(o: Instruction) -> Key:
    if o.opcode == "tuple":  # a while's init tuple: its constants (the loop counter's start) count
        return (o.opcode, shape_token(o.shape), tuple([_operand_value(e) for e in o.operands]))
    if o.opcode == "constant":
        return (o.opcode, shape_token(o.shape), o.literal)
    if o.opcode == "iota":
        return (o.opcode, shape_token(o.shape), _declared_attributes(o, ("iota_dimension",)))
    return (shape_token(o.shape),)


def instruction_key(instr: Instruction, reads: Reads | None = None) -> Key | None:
    """Everything ``instr``'s rules read, or None when the opcode declares nothing (not shared)."""
    if reads is None:
        reads = reads_of(instr.opcode)
        if reads is None:
            return None
    if reads.operand_values:
        operands: Key = tuple([_operand_value(o) for o in instr.operands])
    else:
        operands = tuple([shape_token(o.shape) for o in instr.operands])
    key: Key = (instr.opcode, shape_token(instr.shape), operands)
    if reads.attributes:
        key += (_declared_attributes(instr, reads.attributes),)
    if reads.module_attributes:
        key += (_module_attributes(instr, reads.module_attributes),)
    return key


def _row_attributes(instr: Instruction) -> Key:
    reads = reads_of(instr.opcode)
    if reads is None:
        return (_all_attributes(instr), _module_attributes(instr, None))
    out = _declared_attributes(instr, reads.attributes) if reads.attributes else ()
    # callees are part of a computation's structure even when no rule of the op reads them
    roles = (instr.attrs.keys() & CALLEE_ROLES) - reads.attributes
    extra = tuple([(role, _callee_value(instr, role)) for role in sorted(roles)]) if roles else ()
    if reads.module_attributes:
        return (out, extra, _module_attributes(instr, reads.module_attributes))
    return (out, extra) if extra else out


def computation_fingerprint(comp: Computation) -> Key:
    """Every instruction's opcode, shape, operand positions, parameter number, literal and the
    attributes its rules read (callees by body), names left out."""
    instructions = comp.instructions
    position = {id(instr): i for i, instr in enumerate(instructions)}
    rows: list[object] = []  # a row per instruction, then the root's position
    append = rows.append
    tokens: dict[int, tuple[Shape, int]] = current().tables[
        _SHAPE_TOKENS
    ]  # shape_token's memo, read here without a call per row
    for instr in instructions:
        shape = instr.shape
        hit = tokens.get(id(shape))
        token = hit[1] if hit is not None and hit[0] is shape else shape_token(shape)
        operands = instr.operands
        wiring = tuple([position.get(id(o), -1) for o in operands]) if operands else ()
        opcode = instr.opcode
        if instr.attrs or instr.called:
            append((opcode, token, wiring, instr.parameter_number, instr.literal, _row_attributes(instr)))
            continue
        reads = reads_of(opcode)
        if reads is None or reads.module_attributes:
            append((opcode, token, wiring, instr.parameter_number, instr.literal, _row_attributes(instr)))
        elif instr.parameter_number is not None or instr.literal is not None:
            append((opcode, token, wiring, instr.parameter_number, instr.literal, ()))  # no attributes to read
        else:
            append((opcode, token, wiring))
    root = comp.root
    append(position.get(id(root), -1) if root is not None else -1)
    return tuple(rows)


def _outline(comp: Computation) -> Key:
    """A few facts every computation with the same ``computation_fingerprint`` shares (instruction
    count, root opcode and shape), read without a pass over the instructions."""
    root = comp.root
    if root is None:
        return (len(comp.instructions), None, -1)
    return (len(comp.instructions), root.opcode, shape_token(root.shape))


def fingerprint_id(comp: Computation) -> int:
    """Interned ``computation_fingerprint``: equal ints exactly when the keys are equal (within
    one analysis context).

    Most fused computations of a big dump have an outline (``_outline``) no other has: those get
    an id without their key, which is computed only once a second computation with the same
    outline comes (structurally equal computations always share their outline)."""
    tables = current().tables
    by_computation: dict[int, tuple[Computation, int]] = tables[_BY_COMPUTATION]
    hit = by_computation.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    if type(comp) is DeferredComputation:  # a body unread: its text may say it is a read one's twin
        twin = comp.twin()
        if twin is not None:
            fid = fingerprint_id(twin)
            by_computation[id(comp)] = (comp, fid)
            return fid
    key_ids: dict[Key, int] = tables[_KEY_IDS]
    # outline -> the one computation seen with it so far, its id (None once keys are computed)
    alone: dict[Key, tuple[Computation, int] | None] = tables[_OUTLINES]
    outline = _outline(comp)
    if outline not in alone:
        fid = len(alone) + len(key_ids)  # never issued before: both only grow
        alone[outline] = (comp, fid)
    else:
        first = alone[outline]
        if first is not None:  # the outline's first computation: its key, under the id it has
            # marked done first: its key may need the id of a callee of the same outline (an
            # ENTRY and its conditional's branch), which then finds no key left to compute
            alone[outline] = None
            key_ids[computation_fingerprint(first[0])] = first[1]
        key = computation_fingerprint(comp)
        fid = key_ids.get(key, -1)
        if fid < 0:
            fid = key_ids[key] = len(alone) + len(key_ids)
    by_computation[id(comp)] = (comp, fid)
    return fid


def instruction_structure(instr: Instruction) -> Key:
    """Opcode, result and operand shapes and every attribute but ``UNSTRUCTURAL`` (as text):
    all a reading of the instruction alone can depend on, whatever any rule declares."""
    attrs = tuple(sorted((k, repr(v)) for k, v in instr.attrs.items() if k not in UNSTRUCTURAL))
    return (instr.opcode, instr.shape, tuple(o.shape for o in instr.operands), attrs)


# ---- stable digests: check's finding identities, stored in baseline files -----------------------


def computation_digest(comp: Computation, memo: dict[int, tuple[Computation, str]] | None = None) -> str:
    """A name-free digest of ``comp``'s structure (callees included, each digested once).

    Baseline files store it: see the module docstring for why it is not ``computation_fingerprint``."""
    import hashlib  # digests serve only baseline files: other commands never load it

    memo = {} if memo is None else memo
    hit = memo.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    position = {id(instr): k for k, instr in enumerate(comp.instructions)}
    h = hashlib.sha256()
    for instr in comp.instructions:
        parts = [
            instr.opcode,
            str(instr.shape),
            ",".join(str(position.get(id(o), -1)) for o in instr.operands),
            "" if instr.parameter_number is None else str(instr.parameter_number),
            instr.literal or "",
        ]
        for key, value in instr.attrs.items():
            if key in UNSTRUCTURAL:
                continue
            callee = instr.called.get(key)
            parts.append(f"{key}={computation_digest(callee, memo) if callee is not None else value}")
        for role, callee in instr.called.items():
            if role not in instr.attrs:
                parts.append(f"{role}={computation_digest(callee, memo)}")
        h.update("\x1f".join(parts).encode("utf-8", "replace") + b"\n")
    h.update(f"root={position.get(id(comp.root), -1)}".encode())
    digest = h.hexdigest()
    memo[id(comp)] = (comp, digest)
    return digest


def finding_identity(structure: str, operand: int, output: int, maps: tuple[str, ...]) -> str:
    """One finding's identity: the structure's digest, the operand and output numbers, the maps."""
    import hashlib

    h = hashlib.sha256("\x1f".join((structure, str(operand), str(output), *sorted(maps))).encode())
    return h.hexdigest()[:16]
