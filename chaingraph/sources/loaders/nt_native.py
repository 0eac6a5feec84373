"""The N-Triples loader's per-row loops compiled from C (``nt_scan.c``), when they were built.

``pip install`` builds the library (the build hook ``hatch_build.py`` calls
:func:`compile_library`); the N-Triples functions of
:mod:`~chaingraph.sources.loaders.nt_views` use it when :func:`library` finds it and
compute exactly the same with numpy otherwise (no C compiler at install time, or
``CHAINGRAPH_NATIVE=0``), only more slowly. The library's name carries a hash of the C
source, so a library built from another version of it is never loaded: after changing
``nt_scan.c`` in a checkout, ``pip install -e .`` builds it again.

This module imports only the standard library: the build hook loads it from its file.

>>> path = library_path()
>>> path.parent.name, path.name.startswith("nt_scan-"), path.suffix
('_native', True, '.so')
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

__all__ = ["ENV", "SOURCE", "BuildFailed", "compile_library", "compiler", "library", "library_path"]

#: the C source, beside this module
SOURCE = Path(__file__).with_name("nt_scan.c")
#: ``CHAINGRAPH_NATIVE=0`` makes :func:`library` return ``None`` (numpy everywhere)
ENV = "CHAINGRAPH_NATIVE"
_FLAGS = ("-O3", "-std=c99", "-fPIC", "-shared")


class BuildFailed(Exception):
    """The C compiler could not build the library (none installed, or it failed)."""


def library_path(directory: Path | None = None) -> Path:
    """Where the library built from the current ``nt_scan.c`` lives (by default in
    ``_native/`` beside it: a folder that is no package, so nothing that walks the package's
    modules takes the library for a Python extension)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    return (directory or SOURCE.parent / "_native") / f"nt_scan-{digest}.so"


def compiler() -> list[str]:
    """The C compiler command: ``$CC`` when set, else the one Python was built with if it is
    installed here, else ``cc``, ``gcc`` or ``clang``, whichever is."""
    if os.environ.get("CC"):
        return shlex.split(os.environ["CC"])
    candidates = [shlex.split(sysconfig.get_config_var("CC") or ""), ["cc"], ["gcc"], ["clang"]]
    return next((c for c in candidates if c and shutil.which(c[0])), ["cc"])


def compile_library(directory: Path | None = None) -> Path:
    """Build the library with :func:`compiler` into :func:`library_path` and return that
    path; :class:`BuildFailed` if it cannot."""
    target = library_path(directory)
    target.parent.mkdir(exist_ok=True)
    command = compiler()
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)  # renamed into place: builds may race
    os.close(fd)
    try:
        subprocess.run([*command, *_FLAGS, "-o", tmp, str(SOURCE)], check=True, capture_output=True,
                       text=True, timeout=300)
        os.replace(tmp, target)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = exc.stderr.strip().splitlines()[0] if isinstance(exc, subprocess.CalledProcessError) \
            and exc.stderr.strip() else str(exc)
        raise BuildFailed(f"cannot compile {SOURCE.name} with {command[0]}: {detail}") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for old in target.parent.glob("nt_scan-*.so"):  # built from earlier versions of the source
        if old != target:
            old.unlink(missing_ok=True)
    return target


@functools.cache
def library() -> ctypes.CDLL | None:
    """The compiled library with its functions' signatures set, or ``None`` when it was not
    built (or is turned off by ``CHAINGRAPH_NATIVE=0``). ctypes releases the GIL during each
    call, so the loader's worker threads run these loops side by side."""
    path = library_path()
    if os.environ.get(ENV, "1") == "0" or not path.exists():
        return None
    lib = ctypes.CDLL(str(path))
    p, n = ctypes.c_void_p, ctypes.c_int64
    lib.cg_count_lines.restype = n
    lib.cg_count_lines.argtypes = [p, n]
    lib.cg_split_lines.restype = None
    lib.cg_split_lines.argtypes = [p, n, n, *[p] * 9]
    lib.cg_views.restype = None
    lib.cg_views.argtypes = [p, p, p, n, p]
    lib.cg_starts_with.restype = None
    lib.cg_starts_with.argtypes = [p, p, p, n, p, n, p]
    lib.cg_statement_dashes.restype = None
    lib.cg_statement_dashes.argtypes = [p, p, n, p]
    lib.cg_surely_statements.restype = None
    lib.cg_surely_statements.argtypes = [p, p, p, n, p, p]
    lib.cg_surely_claims.restype = None
    lib.cg_surely_claims.argtypes = [p, p, p, p, p, n, p]
    lib.cg_surely_entity_values.restype = None
    lib.cg_surely_entity_values.argtypes = [p, p, p, n, p]
    lib.cg_same_terms.restype = None
    lib.cg_same_terms.argtypes = [p, p, p, p, n, n, p]
    lib.cg_intern.restype = n
    lib.cg_intern.argtypes = [p, p, p, n, p, n, p, p]
    return lib

