"""Text that is safe to show on a terminal: the one place control characters are neutralised.

(Used by the command line and by the library's own human-readable renderers, such as
:func:`chaingraph.audit.report.render_table`.)

Labels, descriptions, clue texts and error messages come from dumps, endpoints and task
files that anyone can write. Printed raw, ``ESC[2J`` clears the screen, ``ESC]0;…BEL``
retitles the window and a bidirectional override reorders what the reader sees.
Every human-readable output of the command line passes its data through
:func:`safe_text` (plain text) or :func:`safe_markup` (cells of rich tables, which would
otherwise also interpret ``[bold]``-style markup in the data). Data files (``jsonl``,
``json``, ``csv``, ``tsv``) keep the data exactly as it is: JSON escapes control
characters itself.

Neutralised: C0 controls (except the newline and tab when the layout keeps them), DEL,
C1 controls (``U+0080``–``U+009F``, which include the 8-bit CSI and OSC), the line and
paragraph separators and the bidirectional embedding, override and isolate marks. Each
becomes a visible escape such as ``\\x1b``, so nothing is hidden and nothing acts.

>>> safe_text("Douglas\\x1b[2J Adams\\x1b]0;pwned\\x07")
'Douglas\\\\x1b[2J Adams\\\\x1b]0;pwned\\\\x07'
>>> safe_text("two\\nlines\\tand a tab"), safe_text("two\\nlines", newlines=True)
('two\\\\nlines\\\\tand a tab', 'two\\nlines')
>>> safe_markup("[bold]not markup[/bold]")
'\\\\[bold]not markup\\\\[/bold]'
"""

from __future__ import annotations

import re

__all__ = ["safe_markup", "safe_text"]

_OTHER = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
_ALL = re.compile(f"[\x00-\x1f{_OTHER}]")
_KEEP_LAYOUT = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER}]")  # newline (0a) and tab (09) stay


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object, *, newlines: bool = False) -> str:
    """``str(value)`` with every control character shown as an escape (``\\x1b``).

    ``newlines=True`` keeps newline and tab (for multi-line text whose layout needs them).
    """
    text = value if isinstance(value, str) else str(value)
    return (_KEEP_LAYOUT if newlines else _ALL).sub(_escape, text)


_MARKUP = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")  # what rich reads as a markup tag


def safe_markup(value: object, *, newlines: bool = False) -> str:
    """:func:`safe_text`, then escaped for rich markup (as ``rich.markup.escape`` does,
    without importing rich): for data placed in rich tables."""
    text = safe_text(value, newlines=newlines)
    text = _MARKUP.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text
