"""Building a certified task corpus from a seed list (DESIGN §10).

Modules (imports flow down): ``seeds`` (reading seed files, resolving names) →
``certify`` (the whole-store no-shortcut certificate) and ``endpoint_certify`` (the
whole-endpoint one, a bidirectional bounded search) → ``endpoint_seed`` (what a seed of
an endpoint build shares: settings, the per-run cache store) → ``corpus`` (the per-seed step
:func:`build_seed` and the records it writes) → ``fusing`` (fused pairs) → ``runner``
(:func:`build`: local processes or Ray, resume, assembly, funnel, manifest, audit).
"""

from __future__ import annotations

from chaingraph.build.corpus import BuildParameters, CorpusTask, SeedResult, build_seed
from chaingraph.build.runner import BuildResult, build
from chaingraph.build.seeds import read_seeds, resolve_names

__all__ = [
    "BuildParameters",
    "BuildResult",
    "CorpusTask",
    "SeedResult",
    "build",
    "build_seed",
    "read_seeds",
    "resolve_names",
]
