"""Build hook: compile the N-Triples loader's C loops (chaingraph/sources/loaders/nt_scan.c).

Without a C compiler the install goes on with a warning, and the loader computes the same
with numpy, more slowly (see chaingraph/sources/loaders/nt_native.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class NativeScanHook(BuildHookInterface):  # type: ignore[misc]  # hatchling is installed only to build
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        path = Path(self.root, "chaingraph", "sources", "loaders", "nt_native.py")
        spec = importlib.util.spec_from_file_location("_chaingraph_nt_native", path)
        assert spec is not None and spec.loader is not None
        native = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(native)  # standard library only: no dependency is installed yet
        try:
            built = native.compile_library()
        except native.BuildFailed as exc:
            self.app.display_warning(f"chaingraph: {exc}; N-Triples loading will use numpy (slower)")
            return
        build_data["artifacts"].append(built.relative_to(self.root).as_posix())
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
