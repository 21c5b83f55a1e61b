"""XLA's own parser verdict on syntax probes and on files (run by hand with jax, never by the tests).

    python tests/data/xla_verdicts/probe.py OUT.json [FILE_OR_DIR ...]

Each probe in ``PROBES`` is a small module using one piece of syntax (output references ``%x#k``,
``original_value``, ``result_accuracy``) in a form XLA may accept or refuse; each file is a dump.
``OUT.json`` gets, per probe and per file, XLA's verdict: ``accept``, or ``reject`` with the line
and column of XLA's message. ``verdicts.json`` beside this file was made with the jaxlib named in
it; ``tests/hlo/test_xla_verdicts.py`` checks hlo-index's verdict on every entry against it.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys

HEAD = "HloModule m\n\nENTRY %e (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
TUPLE = "  %t = (f32[4]{0}, f32[4]{0}) tuple(%p, %p)\n"

PROBES = {
    # output references: XLA's printed form of get-tuple-element
    "output_reference": HEAD + TUPLE + "  ROOT %r = f32[4]{0} negate(%t#1)\n}\n",
    "output_reference_past_the_outputs": HEAD + TUPLE + "  ROOT %r = f32[4]{0} negate(%t#2)\n}\n",
    "output_reference_into_an_array": HEAD + "  ROOT %r = f32[4]{0} negate(%p#0)\n}\n",
    "output_reference_unknown_name": HEAD + "  ROOT %r = f32[4]{0} negate(%q#0)\n}\n",
    # original_value: the values of the program before optimizations an instruction stands for
    "original_value_array": HEAD + '  ROOT %r = f32[4]{0} negate(%p), original_value={"x"}\n}\n',
    "original_value_array_index": HEAD + '  ROOT %r = f32[4]{0} negate(%p), original_value={"x" {1}}\n}\n',
    "original_value_tuple": HEAD
    + '  %t = (f32[4]{0}, f32[4]{0}) tuple(%p, %p), original_value={({"a"}, {"b" {1}})}\n'
    + "  ROOT %r = f32[4]{0} negate(%t#0)\n}\n",
    "original_value_empty": HEAD + "  ROOT %r = f32[4]{0} negate(%p), original_value={}\n}\n",
    "original_value_bare_word": HEAD + "  ROOT %r = f32[4]{0} negate(%p), original_value=x\n}\n",
    "original_value_unquoted": HEAD + "  ROOT %r = f32[4]{0} negate(%p), original_value={x}\n}\n",
    # result_accuracy
    "result_accuracy_tolerance": HEAD
    + "  ROOT %r = f32[4]{0} exponential(%p), result_accuracy={tolerance={atol=1e-05,rtol=0,ulps=1}}\n}\n",
    "result_accuracy_mode": HEAD + "  ROOT %r = f32[4]{0} exponential(%p), result_accuracy={mode=highest}\n}\n",
    "result_accuracy_bad_mode": HEAD + "  ROOT %r = f32[4]{0} exponential(%p), result_accuracy={mode=bogus}\n}\n",
}


def _parser():
    from jax._src.lib import xla_client

    return (
        getattr(getattr(xla_client, "hlo", None), "hlo_module_from_text", None) or xla_client._xla.hlo_module_from_text
    )


def verdict(parse, text: str) -> dict:
    try:
        parse(text)
        return {"verdict": "accept"}
    except Exception as e:  # noqa: BLE001  XLA's errors come as several exception types
        message = str(e)
        where = re.search(r"(\d+):(\d+): error: (.*)", message)
        out = {"verdict": "reject", "message": (where.group(3) if where else message.splitlines()[0])[:300]}
        if where:
            out["line"], out["column"] = int(where.group(1)), int(where.group(2))
        return out


def _files(paths: list[str]) -> list[tuple[str, str]]:
    """(key, path): the key is the path below the directory given, under that directory's name."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            top = os.path.basename(os.path.normpath(path))
            for root, _, names in os.walk(path):
                for n in names:
                    if ".txt" in n or n.endswith(".hlo"):
                        full = os.path.join(root, n)
                        out.append((os.path.join(top, os.path.relpath(full, path)), full))
        else:
            out.append((os.path.basename(path), path))
    return sorted(out)


def main(out_path: str, paths: list[str]) -> None:
    import jaxlib

    parse = _parser()
    result = {"jaxlib": jaxlib.__version__, "probes": {}, "files": {}}
    for name, text in PROBES.items():
        result["probes"][name] = verdict(parse, text)
    for key, path in _files(paths):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            result["files"][key] = verdict(parse, f.read())
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
