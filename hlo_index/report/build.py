"""Turn analysed targets into plain-data reports (the one place maps become text)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import chain, repeat

from ..analyses.gpu_target import module_target
from ..analyses.structure_keys import fusion_structure_key
from ..api import SelectedTarget, TargetNotFound, operand_info, select_targets
from ..context import current
from ..fusion import OperandIndexing, RowTable, callee_of, input_to_output_table, output_to_input_table
from ..fusion.traverse import callee_misfit
from ..hlo.deferred import DeferredBodyProblem
from ..hlo.model import Computation, Diagnostic, Instruction, Module, Shape
from ..hlo.written_shapes import reached_instructions, written_shape_problem
from . import cost, finding_kinds, operand_figures, source, split_targets
from .model import DiagnosticReport, ModuleReport, OperandReport, OperandRows, TargetReport
from .texts import MAP_TEXTS, map_report, shape_text

DIRECTIONS = ("out2in", "in2out", "both")

# What fills each report's ``extra`` dicts after its maps, in this order (the order of the keys
# in the JSON objects): (report, target object, module, options) -> None. First the figures that
# follow from the target's structure (``fusion_structure_key``) and its module alone, then those
# of the target itself (where it comes from; its cost, which shares per structure on its own).
STRUCTURE_FIGURES = (finding_kinds.add_finding_kinds, operand_figures.add_operand_figures)
INSTANCE_FIGURES = (source.add_source, cost.add_cost)
TARGET_FIGURES = STRUCTURE_FIGURES + INSTANCE_FIGURES
# What fills each module report's ``extra`` once its targets are done: (report, module, options) -> None.
MODULE_FIGURES = (cost.add_cost_totals,)


def _operand_rows(
    table: RowTable, operands: list[tuple[str, Shape | None]], output_kinds: list[int] | None = None
) -> OperandRows:
    """The report's entries of ``table``'s rows, by kind: (operand, element, maps object and, with
    ``output_kinds``, the kind of the output). A whole ENTRY has ~10^6 rows over ~10^3 operands
    and map tuples: a row is numbered by its kind in one pass over the columns, the per-operand
    texts and the per-tuple map report lists are made once per kind and shared (read-only), and an
    entry is its kind and output."""
    tables = current().tables
    map_texts = tables[MAP_TEXTS]  # map_report's memo, read here first
    per_operand: dict[tuple[int, int], tuple[str, str, bool]] = {}
    # id(row.maps) -> (row.maps, its reports): the memo holds the maps, so no other object has its id
    per_maps: dict[int, tuple[tuple, list]] = {}
    output_kind = map(output_kinds.__getitem__, table.outputs) if output_kinds is not None else repeat(0)
    # the table keeps each key's maps alive; a new key is numbered by the kinds before it
    number: dict[tuple[int, int, int, int], int] = {}
    kind = number.setdefault
    kind_of = [kind(key, len(number)) for key in zip(map(id, table.maps), table.operands, table.elements, output_kind)]
    samples = dict(zip(kind_of, range(len(kind_of))))  # an entry of each kind: its last
    templates = [
        _template(table.row(samples[k]), operands, per_operand, per_maps, map_texts) for k in range(len(number))
    ]
    return OperandRows(templates, kind_of, table.outputs, [samples[k] for k in range(len(number))])


def _template(
    row: OperandIndexing, operands: list, per_operand: dict, per_maps: dict, map_texts: dict
) -> OperandReport:
    """The entry of ``row``; its texts and map reports from (and into) the memos given."""
    operand, element, maps = row.operand, row.operand_element, row.maps
    texts = per_operand.get((operand, element))
    if texts is None:  # first row of this operand
        name, shape = operands[operand] if operand < len(operands) else (f"operand{operand}", None)
        is_element = shape is not None and shape.is_tuple
        if is_element and shape is not None:
            shape = shape.leaf(element)
        texts = per_operand[(operand, element)] = (name, shape_text(shape) if shape is not None else "", is_element)
    hit = per_maps.get(id(maps))
    if hit is None:
        reports = []
        for m in maps:
            cached = map_texts.get(id(m))
            reports.append(cached[1] if cached is not None and cached[0] is m else map_report(m))
        hit = per_maps[id(maps)] = (maps, reports)
    # which element of a tuple operand the row reads
    extra = {"operand_element": element} if texts[2] else {}
    return OperandReport(operand, texts[0], texts[1], row.output, hit[1], len(maps) == 1, extra)


def _output_kinds(target) -> list[int]:
    """Per output of ``target``: the identity of its shape object (the per-operand figures of an
    entry depend on the shapes it relates, memoised by identity; the parser shares equal shapes)."""
    shape = target.shape if not isinstance(target, Computation) else (target.root.shape if target.root else None)
    if shape is None:
        return []
    return [id(shape.leaf(i)) for i in range(shape.num_outputs)]


def _location(module: Module, instr) -> str:
    loc = module.source_location(instr)
    if loc is None:
        return ""
    text = f"{loc.file}:{loc.line}" if loc.line else loc.file
    return f"{text} ({loc.function})" if loc.function else text


def target_report(
    selected: SelectedTarget,
    module: Module,
    direction: str = "out2in",
    options: dict | None = None,
    twins: Twins | None = None,
) -> TargetReport:
    """Analyse one target in the requested direction(s) and describe it as plain data.

    ``twins``: a memo of the fusions reported so far in this module, by structure (the caller's,
    for one module and one set of options): a fusion equal in structure to one of them gets that
    one's entries and structure figures under its own operand names, without analysing it again
    (a transformer repeats its layers' fusions; see ``_Twin``)."""
    target = selected.target
    options = options or {}
    if isinstance(target, Computation):
        root = target.root
        outputs = root.shape if root is not None else None
        report = TargetReport(
            "computation",
            target.name,
            None,
            target.name,
            None,
            [(i, shape_text(outputs.leaf(i))) for i in range(outputs.num_outputs)] if outputs else [],
            line=target.line,
        )
    else:
        callee = callee_of(target)
        report = TargetReport(
            selected.kind,
            target.name,
            target.opcode,
            target.computation.name if target.computation is not None else None,
            target.attr("kind") if target.opcode == "fusion" else None,
            [(i, shape_text(target.shape.leaf(i))) for i in range(target.shape.num_outputs)],
            calls=callee.name if callee is not None else None,
            op_name=target.metadata.op_name if target.metadata else "",
            source_location=_location(module, target),
            line=target.line,
        )
    operands = operand_info(target)
    key = twin = None
    if twins is not None and selected.kind == "fusion" and not isinstance(target, Computation):
        structure = fusion_structure_key(target)
        if structure is not None:
            key = (structure, direction)
            twin = twins.by_structure.get(key)
            if twin is not None and not twin.usable(twins.nameless):
                twin = None  # analysed afresh, and not remembered: the twin stays
                key = None
    if twin is not None:
        twin.fill(report, operands)
    else:
        if direction in ("out2in", "both"):
            report.output_to_input = _operand_rows(output_to_input_table(target), operands, _output_kinds(target))
        if direction in ("in2out", "both"):
            report.input_to_output = _operand_rows(input_to_output_table(target), operands)
        for add_figures in STRUCTURE_FIGURES:
            add_figures(report, target, module, options)
        if twins is not None and key is not None:
            twin = _Twin.of(report)
            if twin is not None:
                twins.by_structure[key] = twin
    for add_figures in INSTANCE_FIGURES:
        add_figures(report, target, module, options)
    return report


class _Twin:
    """What a fusion's report shares with every fusion equal to it in structure: its entries (maps,
    operand shapes, figures) and its structure figures, all but the operand names.

    Equal in structure (``fusion_structure_key``: the fused computation's structure, its literals
    included, the operand and result shapes with their layouts, the kind and backend configs) means
    equal maps and equal figures: every rule and analysis reads only those, and the module, which
    is the same. Not shared: a report whose texts name an instruction of the fused computation
    (an UNDEFINED map's reason, a coalescing verdict's), one whose utilization ran out of the
    target's figure budget (a repeat would start with a full one), and one with notes."""

    __slots__ = ("out2in", "in2out", "extra", "_usable")

    def __init__(self, out2in: OperandRows | None, in2out: OperandRows | None, extra: dict) -> None:
        self.out2in, self.in2out, self.extra = out2in, in2out, extra
        self._usable: bool | None = None

    @classmethod
    def of(cls, report: TargetReport) -> _Twin | None:
        """The twin of a report freshly analysed (its structure figures in), or None when it
        cannot be shared; what its texts and figures say is read once a repeat asks
        (``usable``): most structures never repeat."""
        if report.notes:
            return None
        parts: list[OperandRows | None] = []
        for rows in (report.output_to_input, report.input_to_output):
            if type(rows) is OperandRows:
                if rows.entries is not None:
                    return None
                parts.append(rows)
            elif rows:
                return None
            else:
                parts.append(None)
        return cls(parts[0], parts[1], dict(report.extra))

    def usable(self, nameless: dict) -> bool:
        """Whether the twin can be shared (no map UNDEFINED, no figure out of its budget, no text
        naming an instruction), decided once. ``nameless``: ``_names_nothing``'s memo."""
        if self._usable is None:
            self._usable = _names_nothing(self.extra, nameless) and all(
                _shareable(rows.templates, nameless) for rows in (self.out2in, self.in2out) if rows is not None
            )
        return self._usable

    def fill(self, report: TargetReport, operands: list) -> None:
        """Give ``report`` (its header made) the entries and structure figures of the twin, with
        its own operands' names."""
        if self.out2in is not None:
            report.output_to_input = _renamed(self.out2in, operands)
        if self.in2out is not None:
            report.input_to_output = _renamed(self.in2out, operands)
        report.extra.update(self.extra)


def _shareable(templates: list[OperandReport], nameless: dict) -> bool:
    # entries share their map lists and figure objects: each distinct one is looked at once
    maps = {id(t.maps): t.maps for t in templates}
    if any(m.text is None for reports in maps.values() for m in reports):
        return False
    figures = {id(v): v for t in templates for v in t.extra.values()}
    if any(type(u) is dict and u.get("method") == "skipped" for u in figures.values()):
        return False
    return _names_nothing(figures, nameless)


# An instruction as the texts name it: ``%`` and the start of a name (never a percentage's ``%)``)
_NAMED = re.compile(r"%[A-Za-z_]")


class Twins:
    """The fusions reported so far in one module (``target_report``): per (structure key,
    direction) its ``_Twin``, and ``_names_nothing``'s memo over their figures."""

    __slots__ = ("by_structure", "nameless")

    def __init__(self) -> None:
        self.by_structure: dict[tuple, _Twin] = {}
        self.nameless: dict[int, tuple] = {}


def new_twins() -> Twins:
    """An empty memo of twins for ``target_report``."""
    return Twins()


def _names_nothing(figures: dict | list | tuple, memo: dict) -> bool:
    """Whether no text in ``figures`` (a figure: a dict, list or tuple, nested) names an
    instruction. Figures are shared between entries and targets: each object is read once
    (``memo``: id -> (it, answer))."""
    for value in figures.values() if type(figures) is dict else figures:
        kind = type(value)
        if kind is str:
            if _NAMED.search(value):
                return False
        elif kind is dict or kind is list or kind is tuple:
            hit = memo.get(id(value))
            if hit is None or hit[0] is not value:
                hit = memo[id(value)] = (value, _names_nothing(value, memo))
            if not hit[1]:
                return False
    return True


def _renamed(rows: OperandRows, operands: list) -> OperandRows:
    """``rows`` with each entry's operand named as in ``operands`` (as ``_template`` names it);
    the maps, texts and figures are the same objects (each entry's ``extra`` a dict of its own)."""
    count = len(operands)
    templates = [
        OperandReport(
            t.operand,
            operands[t.operand][0] if t.operand < count else f"operand{t.operand}",
            t.operand_shape,
            t.output,
            t.maps,
            t.deduplicated,
            dict(t.extra),
        )
        for t in rows.templates
    ]
    return OperandRows(templates, rows.kind_of, rows.outputs, rows.samples)


def diagnostic_report(d: Diagnostic) -> DiagnosticReport:
    return DiagnosticReport(d.severity, d.message, d.line, d.column, d.path, d.source_line)


def module_report(
    module: Module,
    direction: str = "out2in",
    fusion: str | tuple[str, ...] | None = None,
    computation: str | None = None,
    instruction: str | None = None,
    options: dict | None = None,
    on_target=None,
    verify: bool = False,
    verify_samples: int = 8,
    seed: int | None = None,
    fusions_only: bool = False,
    own_context: bool = True,
    workers: int = 1,
    target_encoder: Callable[[], Callable[[TargetReport], str]] | None = None,
) -> ModuleReport:
    """Every selected target of one module; a failing target becomes an error diagnostic.

    The module is analysed in an analysis context of its own (``own_context``, the default), so
    its caches die with the report; with ``own_context=False`` the current context is used (its
    caches shared with other modules: the answers must not change, which tests check).

    With ``verify``, each target's maps are checked against the reference walk
    (``hlo_index.verify``): mismatches become error diagnostics, skipped targets get a note.

    ``workers`` > 1 (0: as many as there are idle CPUs): a module with enough to analyse has its
    targets shared among that many processes (``split_targets``); the report is the same. With
    ``target_encoder`` (the caller writes the JSON document only: it makes the function that
    encodes a target, with its memo of shared texts, in each process), the targets come back
    encoded, in files of their own (``TargetReport.encoded``): written there in parallel, and
    never held whole in memory.
    """
    report = ModuleReport(module.name, module.source, diagnostics=[diagnostic_report(d) for d in module.diagnostics])
    try:
        selected = select_targets(module, fusion, computation, instruction, fusions_only)
    except TargetNotFound as exc:
        report.diagnostics.append(DiagnosticReport("error", str(exc), path=module.source))
        return report

    # One analysis context per module: its caches die with the report, and a module's answers
    # cannot depend on what else this process analysed.
    def run() -> None:
        _report_targets(
            selected,
            module,
            report,
            direction,
            options,
            on_target,
            verify,
            verify_samples,
            seed,
            workers,
            target_encoder,
        )
        _module_figures(report, module, options)
        if module.deferred is not None and module.deferred.failed:  # a body read late, not cleanly
            raise DeferredBodyProblem(module.name)

    if own_context:
        with current().child():
            run()
    else:
        run()
    return report


def _module_figures(report: ModuleReport, module: Module, options: dict | None) -> None:
    for add_figures in MODULE_FIGURES:
        try:
            add_figures(report, module, options or {})
        except Exception as exc:  # noqa: BLE001  (a failing figure must not cost the targets)
            report.diagnostics.append(
                _invalid_input(module.instructions, module.source)
                or DiagnosticReport("error", f"{INTERNAL}module %{module.name}: {type(exc).__name__}: {exc}")
            )


def _report_targets(
    selected: list[SelectedTarget],
    module: Module,
    report: ModuleReport,
    direction: str,
    options: dict | None,
    on_target,
    verify: bool,
    verify_samples: int,
    seed: int | None,
    workers: int = 1,
    target_encoder: Callable[[], Callable[[TargetReport], str]] | None = None,
) -> None:
    verified: dict = {}  # identical targets of this module are verified once (hlo_index.verify)
    # fusions equal in structure are analysed once (``target_report``); a check reads each target's
    # own rows and verification checks each target's own maps
    twins = None if verify or (options or {}).get("check") else new_twins()
    shares = split_targets.plan(selected, options, workers)
    bodies = module.deferred  # bodies read on first use: trusted once the module is checked
    if shares is None:
        if bodies is not None and not bodies.read_rest():  # each body checked before any answer
            raise DeferredBodyProblem(module.name)
        for item in selected:
            _report_target(item, module, report, direction, options, twins, verify, verify_samples, seed, verified)
            if on_target is not None:
                on_target(report)  # the module report so far: its last target is the new one
        return
    costs = cost.module_entries(module, options or {})
    targets, diagnostics = report.targets, report.diagnostics

    def analyse_one(i: int) -> split_targets.Record:
        t0, d0, c0 = len(targets), len(diagnostics), len(costs)
        item = selected[i]
        _report_target(item, module, report, direction, options, twins, verify, verify_samples, seed, verified)
        # what the module's totals add for the target, made here where its cost is at hand
        row = cost.total_row(module, options or {}, item.target) if len(costs) > c0 else None
        return i, targets[t0:], diagnostics[d0:], costs[c0:], row

    # the records replace what this process's own targets added, in the module's order
    starts = len(targets), len(diagnostics), len(costs)
    groups, processes = shares
    files = split_targets.spill_files(processes) if target_encoder is not None else []
    to_send = None
    if files and target_encoder is not None:
        # Fusions equal in structure share their maps and figures, and are one group: each group
        # is encoded with a memo of its own, so that the texts they share are encoded once and
        # what they hold is freed with the group.
        group_of = {i: g for g, indices in enumerate(groups) for i in indices}
        encoding: list = [None, None]  # (the group, its encoder) in this process

        def to_send(record: split_targets.Record, worker: int) -> split_targets.Record:
            i, made, said, entries, row = record
            if encoding[0] != group_of[i]:
                encoding[:] = group_of[i], target_encoder()
            encode = encoding[1]
            return i, [split_targets.spilled(t, encode, worker, files[worker]) for t in made], said, entries, row

    machine = module_target(module, (options or {}).get("target", "auto")).target
    records, workers_said = split_targets.run_split(
        groups,
        processes,
        analyse_one,
        to_send,
        lambda: cost.prepare_totals(module, options or {}),
        machine,
        None if bodies is None else lambda: (not bodies.failed, bodies.names_read()),
    )
    if bodies is not None and not _all_bodies_clean(bodies, workers_said, processes - 1):
        raise DeferredBodyProblem(module.name)
    del targets[starts[0] :], diagnostics[starts[1] :], costs[starts[2] :]
    rows = []
    for i, made, said, entries, row in records:
        for t in made:
            if t.encoded is not None:
                t.encoded.file = files[t.encoded.worker]
        targets.extend(made)
        diagnostics.extend(said)
        costs.extend(entries)
        if row is not None:
            rows.append((selected[i].target, row))
        if on_target is not None and made:
            on_target(report)
    cost.take_total_rows(module, options or {}, rows)


def _all_bodies_clean(bodies, said: list, workers: int) -> bool:
    """Whether every deferred body was read, here or by a worker, and found clean (``said``: each
    worker's (clean, names read); where a worker said nothing, every body it may have read is
    read here)."""
    if any(not clean for clean, _ in said):
        return False
    elsewhere = set().union(*(names for _, names in said)) if len(said) == workers else None
    return bodies.read_rest(elsewhere)


def _report_target(
    item: SelectedTarget,
    module: Module,
    report: ModuleReport,
    direction: str,
    options: dict | None,
    twins,
    verify: bool,
    verify_samples: int,
    seed: int | None,
    verified: dict,
) -> None:
    """One target's report (or its internal failure) added to ``report``."""
    try:
        target = target_report(item, module, direction, options, twins)
        report.targets.append(target)
        if verify:
            _verify_into(item, module, target, report, verify_samples, seed, verified)
    except Exception as exc:  # noqa: BLE001  one broken rule must not hide every other target's maps
        report.diagnostics.append(
            _invalid_input(_reached(item.target), module.source) or internal_failure(item, exc, module.source)
        )


INTERNAL = "internal: "  # message prefix of an analysis that raised: a bug, never the input's fault
# message prefix of input that XLA's verifier rejects (a written shape its operands do not give),
# found when an analysis failed on it: the input's fault, said at the instruction
INVALID = "invalid: "


def _reached(target) -> Iterator[Instruction]:
    """The instructions an analysis of ``target`` reads: a computation's and what they call."""
    if isinstance(target, Computation):
        return chain.from_iterable(map(reached_instructions, target.instructions))
    return reached_instructions(target)


def _invalid_input(instructions: Iterator[Instruction], source: str) -> DiagnosticReport | None:
    """An error at the first of ``instructions`` whose written shape XLA's verifier rejects; None
    where each agrees with its operands (the failure is then the tool's)."""
    for instr in instructions:
        problem = written_shape_problem(instr)
        callee = callee_of(instr) if problem is None and instr.opcode in ("fusion", "call") else None
        if callee is not None:
            misfit = callee_misfit(instr, callee)
            problem = f"{instr.opcode} %{instr.name}: {misfit}, which XLA's verifier rejects" if misfit else None
        if problem is not None:
            return DiagnosticReport("error", f"{INVALID}{problem}", instr.line, instr.column, source)
    return None


def internal_failure(item: SelectedTarget, exc: Exception, source: str) -> DiagnosticReport:
    """``internal: <op> %name: <what failed>`` at the target, for an analysis that raised."""
    target = item.target
    what = getattr(target, "opcode", None) or item.kind
    return DiagnosticReport(
        "error",
        f"{INTERNAL}{what} %{target.name}: {type(exc).__name__}: {exc}",
        getattr(target, "line", 0),
        getattr(target, "column", 0),
        source,
    )


def _verify_into(
    item: SelectedTarget,
    module: Module,
    target: TargetReport,
    report: ModuleReport,
    samples: int,
    seed: int | None,
    verified: dict,
) -> None:
    from ..verify import verify_target

    outcome = verify_target(item, module, samples, seed, verified=verified)
    target.notes.extend(outcome.notes)
    target.extra["verify"] = {
        "elements_checked": outcome.checked_points,
        "elements_sampled": outcome.sampled_points,
        "input_pairs_not_walked": outcome.unchecked_pairs,
        "operand_elements_checked": getattr(outcome, "checked_input_points", 0),
        "mismatches": len(outcome.errors),
        "verdict": "mismatch"
        if outcome.errors
        else ("skipped" if any(n.startswith("verification skipped") for n in outcome.notes) else "ok"),
        "notes": list(outcome.notes),
    }
    if not outcome.notes:
        verdict = "mismatch" if outcome.errors else "ok"
        spent = ""
        if outcome.sampled_points > outcome.checked_points or outcome.unchecked_pairs:
            not_walked = ""
            if outcome.unchecked_pairs:
                not_walked = f", {outcome.unchecked_pairs} input-to-output pair(s) not walked back"
            spent = (
                f" (of {outcome.sampled_points} sampled{not_walked}: the walks spent budget "
                f"verify_points_per_target={current().budgets.verify_points_per_target})"
            )
        elements = "element" if outcome.checked_points == 1 else "elements"
        target.notes.append(f"verified {outcome.checked_points} sampled output {elements}{spent}: {verdict}")
    line, column = getattr(item.target, "line", 0), getattr(item.target, "column", 0)
    for message in outcome.errors:
        report.diagnostics.append(DiagnosticReport("error", f"verify: {message}", line, column, module.source))
