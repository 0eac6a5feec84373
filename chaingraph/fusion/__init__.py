"""The exact fusion calculator (DESIGN §7).

Fused tasks combine the answers of two or more chains ("the difference between the
founding years of the two cities reached from the two logos"). :func:`fuse` takes the
components' values as Wikidata gives them and an operation, and returns either a
:class:`FusionResult` (the exact result as text and as a typed value with its unit, the
normalised inputs, each step and the post-fusion checks) or a :class:`FusionRefusal`
(a reason code from :data:`REASONS` and a one-line message). Arithmetic is exact
(``Fraction``); ambiguity is refused, never guessed.

Modules, imports flowing downwards: ``spec`` (the input JSON) → ``records`` (results)
→ ``exact`` (``Decimal`` while finite, ``Fraction`` beyond) → ``inputs`` (statement-set
resolution, exact quantities, JDN date intervals) → ``operations`` → ``calculator``
(:func:`fuse`, :func:`fuse_spec`). Units come from :mod:`chaingraph.units`.

>>> from chaingraph.values import QuantityValue
>>> r = fuse([QuantityValue(amount="+173.46", unit="Q712226"),
...           QuantityValue(amount="+258.82", unit="Q712226")], "add")
>>> r.result, r.value.unit
('+432.28', 'Q712226')
>>> fuse([QuantityValue(amount="+1", unit="Q4917"), QuantityValue(amount="+1", unit="Q4916")],
...      "max").reason
'incompatible_dimensions'
"""

from __future__ import annotations

from chaingraph.fusion.calculator import fuse, fuse_spec
from chaingraph.fusion.records import (
    REASONS,
    Check,
    FusionRefusal,
    FusionResult,
    NormalisedInput,
    RationalValue,
    Step,
)
from chaingraph.fusion.spec import (
    OPERATIONS,
    Component,
    FusionSpec,
    Qualifier,
    Rounding,
    Rule,
    StatementInput,
    StatementRef,
    WikidataStatement,
    read_spec,
    spec_error,
)

__all__ = [
    "OPERATIONS",
    "REASONS",
    "Check",
    "Component",
    "FusionRefusal",
    "FusionResult",
    "FusionSpec",
    "NormalisedInput",
    "Qualifier",
    "RationalValue",
    "Rounding",
    "Rule",
    "StatementInput",
    "StatementRef",
    "Step",
    "WikidataStatement",
    "fuse",
    "fuse_spec",
    "read_spec",
    "spec_error",
]
