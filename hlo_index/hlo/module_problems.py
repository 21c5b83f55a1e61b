"""What XLA's parser and verifier would reject in a parsed module: the loader's checks, in order."""

from __future__ import annotations

from .checks import check_module
from .model import Diagnostic, Module
from .shape_checks import check_written_shapes
from .shape_inference import infer_module_shapes
from .validate import link


def module_problems(module: Module, references: bool) -> list[Diagnostic]:
    """Link ``module``, infer the shapes left unwritten, then check it; each step only where the
    ones before found no error (``references``: see ``validate.link``)."""
    found = link(module, references=references)
    for step in (infer_module_shapes, check_module, check_written_shapes):
        if any(d.severity == "error" for d in found):
            break
        found += step(module)
    return found
