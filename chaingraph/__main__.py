"""``python -m chaingraph`` and the ``chaingraph`` program: :func:`main`.

A Ctrl-C while Python is still importing the command line (a busy machine can take a
second there) exits 130 with one line, as a Ctrl-C during a command does
(:mod:`chaingraph.cli`), not with a traceback: nothing has been done yet.
"""

from __future__ import annotations

import sys

from chaingraph.errors import EXIT_INTERRUPTED, forget_interrupt

__all__ = ["main"]


def main() -> None:
    """Import the command line and run it."""
    try:
        from chaingraph.cli import cli
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: before the command started, nothing was done\n")
        forget_interrupt()
        sys.exit(EXIT_INTERRUPTED)
    cli()


if __name__ == "__main__":
    main()
