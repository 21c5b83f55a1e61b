"""Reading HLO from files, ``.gz``, stdin (``-``) and XLA dump directories into linked modules."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from .deferred import DeferredBodies
from .diagnostics import ParseError, error, line_column_of, with_source
from .model import Diagnostic, Module
from .module_problems import module_problems
from .parser import gc_paused, parse_syntax_each
from .validate import link

# Siblings XLA writes next to the HLO text in a dump directory.
_NOT_HLO_SUFFIXES = (
    ".hlo_module_config.txt",
    "-buffer-assignment.txt",
    ".execution_options.txt",
    ".dot",
    ".html",
    ".pb",
    ".pbtxt",
    ".json",
    ".md",
    ".mlir",
    ".ll",
    ".o",
    ".svg",
)
_HLO_HEADER = re.compile(r"^[ \t]*HloModule\b", re.MULTILINE)
# Names that say the file is HLO text: XLA's module dumps (``module_0001.jit_f.before_optimizations.txt``,
# ``...sm_8.0_gpu_after_optimizations.txt``, a pass's ``...after_simplification.txt``) and ``.hlo``
# files. Such a file is read whatever it holds, so an empty or cut one (a crashed run) is an error
# at its line, not a file passed over without a word.
_HLO_BY_NAME = re.compile(r"(^module_\d+\..*[._](before|after)_[\w.-]*\.txt|\.hlo|\.hlo\.txt)$")


@dataclass
class LoadResult:
    """One module read from ``path`` (``module`` is None when it is unusable; see ``diagnostics``)."""

    path: str
    module: Module | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.module is not None


# Below this many characters a text is read whole even where deferring bodies is asked: the
# bodies read later pay off where the analysis is shared among processes (``hlo.deferred``).
DEFER_MIN_CHARS = 1 << 20
# ... and where the bodies left unread once the module's other computations are read hold less
# than this share of it, they are read at once.
DEFER_MIN_SHARE = 0.25


def parse_checked(text: str, path: str, defer_bodies: bool = False) -> list[LoadResult]:
    """Parse and link every module in ``text``; a module with errors becomes a result without module.

    ``defer_bodies``: a big text of one module whose ENTRY and callers read well may leave bodies
    to read on first use (``hlo.deferred``), each checked as it is read: the module's ``deferred``
    says so, and its user has every body read (``DeferredBodies.read_rest``) before it trusts an
    answer."""
    with gc_paused():  # one collection at the end instead of many during parse and link
        return _parse_and_link(text, path, defer_bodies and len(text) >= DEFER_MIN_CHARS and "#" not in text)


def _deferred_result(parsed: list[Module | ParseError], path: str) -> list[LoadResult] | None:
    """The one module parsed, with the bodies ``DeferredBodies`` took left unread, its other
    computations read, linked and checked; None where that is not so clean (several modules, a
    problem anywhere): the caller then reads the text eagerly, which words the problems."""
    if len(parsed) != 1 or not isinstance(parsed[0], Module) or parsed[0].diagnostics:
        return None
    module = parsed[0]
    bodies = module.deferred
    if link(module, references=False, read_only=True) or not bodies.check_read(module):
        return None
    if bodies.unread_share() < DEFER_MIN_SHARE:  # too little left to pay for what deferring costs
        if not bodies.read_rest():
            return None
        module.deferred = None  # every body read and checked: the module a whole read gives
    return [LoadResult(path, module, [])]


def _parse_and_link(text: str, path: str, defer: bool = False) -> list[LoadResult]:
    try:
        parsed = parse_syntax_each(text, path, defer=DeferredBodies if defer else None)
    except Exception as e:  # noqa: BLE001  a parser bug must still not become a traceback
        if defer:
            return _parse_and_link(text, path)
        return [LoadResult(path, None, [error(f"internal parser error: {type(e).__name__}: {e}", path=path)])]
    if defer and any(isinstance(m, Module) and m.deferred is not None for m in parsed):
        deferred = _deferred_result(parsed, path)
        return deferred if deferred is not None else _parse_and_link(text, path)
    results = []
    for module in parsed:
        if isinstance(module, ParseError):
            results.append(LoadResult(path, None, module.diagnostics))
            continue
        found = module_problems(module, references="#" in text)  # no output reference (%x#1) in most dumps
        problems = [with_source(d, text, path) for d in module.diagnostics + found]
        module.diagnostics = problems
        failed = any(d.severity == "error" for d in problems)
        results.append(LoadResult(path, None if failed else module, problems))
    return results


_GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes) -> bytes:
    """Every member of gzip ``data``; damaged data (zlib's own error, not an OSError) is an OSError."""
    import gzip  # only for compressed dumps
    import zlib

    try:
        return gzip.decompress(data)
    except zlib.error as e:
        raise OSError(f"corrupt gzip data: {e}") from None


def read_text(path: str) -> str:
    """Text of a file (``.gz`` decompressed) or of stdin for ``-``; raises ParseError if unreadable."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        else:
            with open(path, "rb") as f:
                data = f.read()
        if path.endswith(".gz") or data[:2] == _GZIP_MAGIC:
            # a compressed dump, also piped to '-' (cat dump.txt.gz | ...) or saved without its suffix
            data = _gunzip(data)
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        raise ParseError(error(f"cannot read: {getattr(e, 'strerror', None) or e}", path=path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = line_column_of(data, e.start)
        raise ParseError(
            error(f"not UTF-8 text: byte 0x{data[e.start]:02x} cannot start an HLO token", line, column, path=path)
        ) from None


def load(path: str) -> list[LoadResult]:
    """Every module under ``path``: a file, a ``.gz``, ``-`` for stdin, or a dump directory.

    Problems never raise: they come back as diagnostics, and one bad file does not stop the others.
    """
    return list(iter_load(path))


def iter_load(path: str, defer_bodies: bool = False) -> Iterator[LoadResult]:
    """``load(path)``, a file at a time: a directory's next file is read once the modules of the
    one before have been taken (and can be analysed, written and dropped first). ``defer_bodies``:
    see ``parse_checked``."""
    display = "<stdin>" if path == "-" else path
    if path != "-" and os.path.isdir(path):
        found = False
        for file in hlo_files_in(path):
            for result in iter_load(file, defer_bodies):
                found = True
                yield result
        if not found:
            yield LoadResult(path, None, [error("no HLO modules found in directory", path=path)])
        return
    try:
        text = read_text(path)
    except ParseError as e:
        yield LoadResult(display, None, e.diagnostics)
        return
    results = parse_checked(text, display, defer_bodies)
    del text  # not held while the caller analyses the modules (a GPU training step's is 8.8 MB)
    yield from results


def load_path(path: str) -> list[Module]:
    """Like :func:`load`, but raises ParseError for the first unusable module."""
    modules = []
    for result in load(path):
        if result.module is None:
            raise ParseError(result.diagnostics[0], result.diagnostics)
        modules.append(result.module)
    return modules


def hlo_files_in(directory: str) -> list[str]:
    """HLO text files under ``directory`` (recursively, sorted), skipping XLA's non-HLO siblings."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            if name.startswith(".") or "memory-usage-report" in name:
                continue
            stem = name.removesuffix(".gz")
            if stem.endswith(_NOT_HLO_SUFFIXES):
                continue
            if _HLO_BY_NAME.search(stem) or _looks_like_hlo(full):
                found.append(full)
    return found


def _looks_like_hlo(path: str) -> bool:
    try:
        if path.endswith(".gz"):
            import gzip

            with gzip.open(path, "rb") as f:
                head = f.read(65536)
        else:
            with open(path, "rb") as f:
                head = f.read(65536)
    except (OSError, EOFError):  # gzip.BadGzipFile included
        return True  # let load() report why it cannot be read
    return _HLO_HEADER.search(head.decode("utf-8", "replace")) is not None
