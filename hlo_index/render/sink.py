"""What the renderers write to: a file, ``sys.stdout``, a ``StringIO``, or the CLI's pipe-safe stream."""

from __future__ import annotations

from typing import Protocol


class TextSink(Protocol):
    """A text stream as the renderers use it; ``write``'s result (a count for files) is ignored.
    A sink may also copy ASCII text from a file without decoding it (``copy_range``, see
    ``cli.output.SafeStream``); the renderers write such text as text elsewhere."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> None: ...
