"""Settings: the one home of every default (DESIGN §2, §3, §4).

Each group of settings is a frozen pydantic model; library functions take these models
(with a few keyword shortcuts where that reads better), the CLI builds them from its
options, and every chain record embeds the ones that produced it. A default is written
here and nowhere else.

* :class:`CrawlLimits` — how much of a neighbourhood is collected (§3);
* :class:`ChainBounds` — chain lengths and how many chains are kept per seed (§4);
* :class:`TraversalPolicy` — which statements are chain steps (§2);
* :class:`EndpointSettings` — how a SPARQL endpoint is asked (§3).

Bad values are refused when the model is built, by :func:`settings`, with an
:class:`~chaingraph.errors.InvalidInput` that names the Python parameter:

>>> settings(ChainBounds, min_hops=6, max_hops=5)
Traceback (most recent call last):
...
chaingraph.errors.InvalidInput: max_hops: 5 is smaller than min_hops (6); pass min_hops <= max_hops
>>> CrawlLimits().max_neighbours, ChainBounds().top, TraversalPolicy().hub_limit
(30, 20, 1000)
>>> TraversalPolicy(hub_limit=3).allows("P31"), TraversalPolicy().allows("P361")
(False, True)
"""

from __future__ import annotations

import math
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
)

from chaingraph import __version__
from chaingraph.errors import InvalidInput

__all__ = [
    "DEFAULT_BULK_LOAD_MEMORY_MB",
    "DEFAULT_CLASS_PROPERTIES",
    "DEFAULT_DEADLINE",
    "DEFAULT_ENDPOINT",
    "DEFAULT_EXPORT_MEMORY_MB",
    "DEFAULT_KEY_CHECK_MEMORY_MB",
    "DEFAULT_LOAD_END_MEMORY_MB",
    "DEFAULT_LOAD_MEMORY_MB",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_PARQUET_LOAD_MEMORY_MB",
    "DEFAULT_STAGING_MEMORY_MB",
    "DEFAULT_SUMMARY_MEMORY_MB",
    "DEFAULT_USER_AGENT",
    "ChainBounds",
    "CrawlLimits",
    "EndpointSettings",
    "RetryPolicy",
    "TraversalPolicy",
    "endpoint_url_problem",
    "merged",
    "settings",
    "user_agent_problem",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

DEFAULT_CLASS_PROPERTIES = frozenset({"P31", "P279"})
DEFAULT_ENDPOINT = "https://query.wikidata.org/sparql"
#: largest SPARQL response body read (bytes); a bigger one is refused, never cached
DEFAULT_MAX_RESPONSE_BYTES = 128 * 1024 * 1024
#: seconds one HTTP request may take from connecting to its last byte, however slowly
#: the server sends (``timeout`` bounds each wait for data)
DEFAULT_DEADLINE = 120.0
#: DuckDB's memory budgets (MiB) while an RDF dump loads into a store *file*: staging (the
#: staged triples spill to the store's temporary directory beyond it, while the blocks in
#: flight take memory of their own) and building the statement model (its joins, aggregates
#: and sorts spill beyond it); the store's own limit is back afterwards. codex-m's N-Triples
#: (1.4 M triples) does not fill them; its 10x to 80x synthetic dumps do. For the build to
#: hold to a budget, each step is one join, aggregate or sort, no aggregate keeps a text per
#: group (those do not spill), aliases are gathered in passes (rdf_entities.ALIAS_ROWS_PER_PASS), and
#: the items are written in chunks in id order, a checkpoint each (rdf_entities.gather_entities,
#: rdf_entities.write_entities). Then 64 and 16 hold to 80x: the process peaked (above its
#: baseline, one run each) at 147, 162 and 190 MB on the 10x, 40x and 80x dumps, against
#: 167-169, 194 and 224 at 96 and 32, in the same time (10x: 19.0-19.9 s against 18.4-20.4,
#: two alternated runs each), while the dump itself peaked at 136-138 MB either way
DEFAULT_STAGING_MEMORY_MB = 16
DEFAULT_LOAD_MEMORY_MB = 64
#: DuckDB's memory budget (MiB) for the steps that end an N-Triples dump's load in chunks
#: (the statement-id check, the statement sources, the entities a range of ids at a time):
#: they scan tables of the whole dump, and DuckDB's buffers filled any budget they had.
#: At 64 they peaked 234-239 MB resident on the 80x synthetic dump (above the chunk builds,
#: ~230), at 48 210-224 (the whole 80x load in 84.8-87.7 s against 84.2-86.1; paired at 40x,
#: 0.97x the time, two rounds);
#: the id check is then grouped in parts (store_memory.REPEAT_ROWS_PER_PART), which ran out
#: of 48 MiB at once. A chunk's build needs the 64 (at 48 its statement insert ran out)
DEFAULT_LOAD_END_MEMORY_MB = 48
#: DuckDB's memory budget (MiB) while a JSON dump load checks the keys a store *file* already
#: holds (:class:`~chaingraph.store_load.BulkLoad`: one pass of anti-joins over the statement
#: tables, whose hash tables grow with the store): over a store of 4.6 M statements (the
#: items of codex-m's 10x synthetic dump and ten more copies) the pass peaked 763 MB above
#: its baseline and kept it for the rest of the load without a budget, 163 MB at 160 MiB and
#: 65 at 64 MiB (the same time at both), and took 3.0-3.3 s instead of 1.9-2.2 s (load ~3).
#: Over 9.1 M statements (the 40x dump's store) DuckDB's spilling join needed more than 64 MiB:
#: a check out of memory shows nothing, and the load checks every batch instead
DEFAULT_KEY_CHECK_MEMORY_MB = 64
#: DuckDB's memory budget (MiB per DuckDB thread, and two more threads' worth) while a store
#: *file* is summarised (:func:`chaingraph.sources.loaders.summarize`, after every load and
#: for ``chaingraph summary``), beyond what DuckDB holds and cannot let go: the grouped counts
#: scan whole statement columns, and DuckDB keeps every block it reads until its own limit.
#: Unheld, the summary of codex-m's 80x synthetic JSON dump (18.2 M statements) took 77 MB
#: and kept it; held to 16 MiB (two threads) it peaked at 18 MB and kept 2, in the same time
#: (0.11 s). Per thread it needs about 2 MiB: with 16 threads 17 MiB ran out, 40 did not
DEFAULT_SUMMARY_MEMORY_MB = 4
#: DuckDB's memory budget (MiB) while ``chaingraph export --parquet`` writes a store *file*
#: (:func:`~chaingraph.store_parquet.export`): each table is sorted by its key, and unheld the
#: sort kept the whole table in memory, 1.9 GB above the baseline for a store of 4.6 M
#: statements (codex-m's 10x synthetic dump and ten more copies), which a store of Wikidata's
#: size could never have. Held, the sort spills: 281-283 MB there in 15.3-15.9 s, against
#: 1,878-1,925 MB in 7.4-8.2 s unheld (two runs each; 546 MB and 13-15 s at 512 MiB, 225 MB
#: and 16-17 s at 192, and 64 ran out of memory); codex-m's own store (228k statements) fits
#: either way (0.5-0.8 s, ~150 MB)
DEFAULT_EXPORT_MEMORY_MB = 256
#: DuckDB's memory budget (MiB) while a directory written by ``export --parquet`` is loaded
#: into a store *file* (:func:`~chaingraph.store_parquet.load_parquet`, one transaction). The
#: export of that 4.6 M-statement store loaded unheld at 2.7-3.0 GB (peak resident memory of
#: the whole command), most of it grouping every row by its key, which an export's rows never
#: repeat; checked first and not grouped, 784 MB unheld, and 440 MB in 14.0-14.6 s held to
#: 256 MiB (14.8 s before). At 128 MiB three runs of four ran out of memory (a 16 MiB
#: allocation), at 64 MiB every one
DEFAULT_PARQUET_LOAD_MEMORY_MB = 256
#: DuckDB's memory budget (MiB) while a JSON dump's batches are written into a store *file*
#: (:class:`~chaingraph.store_load.BulkLoad`): what DuckDB caches of the store (the entity
#: index it looks ids up in, blocks read and written) then never outgrows it, whatever the
#: size of the dump, while a batch's own rows (~35 MB) still fit. Unheld, DuckDB's memory at
#: a batch's commit was ~46 MB for codex-m's dump and ~63 MB for its 10x and 20x synthetic
#: dumps; held to 48, the load's peak (whole process, one run each) was 224, 233 and 237 MB for
#: 1x, 10x and 40x against 227, 244 and 250 unheld, in the same time (40x: 38 s against 36).
#: It is now 36, about what codex-m's own dump takes (31-35 MiB), so that a larger dump, which
#: fills the budget, does not take more: held to 36 the 10x dump peaked at 119-120 MB above
#: the baseline against 129-134 at 48, and the dump itself at 112-113 either way (two runs
#: each); 10x took ~5 % longer (seven alternated runs at 32 against 48, medians 24.6 and
#: 22.9 s; four at 36, 24.5 against 23.8), the dump itself the same time (2.84 against 2.93 s).
#: Lower is not safe: at 24 both peaks fell by ~11 MB (10x ~6 % slower), and at 16 the dump's
#: load failed, DuckDB unable to commit a batch within the budget
DEFAULT_BULK_LOAD_MEMORY_MB = 36


def _sparqlwrapper_version() -> str:
    try:
        return version("SPARQLWrapper")
    except PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "unknown"


#: WDQS asks for a contact in the User-Agent; chaingraph cannot know yours, so say so
DEFAULT_USER_AGENT = (
    f"chaingraph/{__version__} (Wikidata evidence-chain collector; no contact given, set "
    f"user_agent) SPARQLWrapper/{_sparqlwrapper_version()}"
)

M = TypeVar("M", bound=BaseModel)


def settings(model: type[M], /, **values: Any) -> M:
    """Build a settings ``model`` from ``values``, refusing a bad one with an
    :class:`~chaingraph.errors.InvalidInput` that names the parameter (one line)."""
    try:
        return model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"]) or model.__name__
        message = str(first["msg"]).removeprefix("Value error, ")
        value = first.get("input")
        raise InvalidInput(f"{name}: {message}" + ("" if first["type"] == "value_error"
                                                   else f", got {value!r}"),
                           ).about(name) from None


def merged(model: type[M], base: M | None, /, **shortcuts: Any) -> M:
    """``base`` (or the model's defaults) with the keyword ``shortcuts`` that are not
    ``None`` laid over it, validated by :func:`settings`.

    >>> merged(ChainBounds, ChainBounds(top=3), max_hops=6, min_hops=None)
    ChainBounds(min_hops=5, max_hops=6, top=3)
    """
    given = {k: v for k, v in shortcuts.items() if v is not None}
    if base is None:
        return settings(model, **given)
    if not given:
        return base
    return settings(model, **{**base.model_dump(), **given})


class CrawlLimits(BaseModel):
    """How much of each neighbourhood is collected (DESIGN §3).

    ``max_neighbours`` item neighbours are kept per expanded entity (deterministic
    order), the selector expands ``select`` of them, at most ``layer_budget`` entities are
    expanded per depth (``None``: no budget), and at most ``in_limit`` in-edges are read
    per entity.
    """

    model_config = _FROZEN
    max_neighbours: int = Field(default=30, ge=0, strict=True)
    select: int = Field(default=10, ge=0, strict=True)
    layer_budget: int | None = Field(default=1000, ge=1, strict=True)
    in_limit: int = Field(default=100, ge=0, strict=True)


class ChainBounds(BaseModel):
    """Chain lengths ``min_hops ≤ k ≤ max_hops`` (DESIGN §4 rule 1) and the ``top``
    chains kept per seed, best ``s_div`` first."""

    model_config = _FROZEN
    min_hops: int = Field(default=5, ge=1, strict=True)
    max_hops: int = Field(default=7, ge=1, strict=True)
    top: int = Field(default=20, ge=1, strict=True)

    @field_validator("max_hops")
    @classmethod
    def _ordered(cls, value: int, info: ValidationInfo) -> int:
        low = info.data.get("min_hops")
        if isinstance(low, int) and value < low:
            raise ValueError(f"{value} is smaller than min_hops ({low}); pass min_hops <= max_hops")
        return value


class TraversalPolicy(BaseModel):
    """Which statements are chain steps (DESIGN §2).

    Class edges (``class_properties``) type nodes but are not steps; an entity with more
    incident step edges than ``hub_limit`` is not walked through (``None``: no limit);
    ``properties`` restricts steps to a set of properties and ``excluded_properties``
    removes some; ``include_literals`` makes literal statements terminal nodes; ``as_of``
    keeps only the statements valid on that date (:mod:`chaingraph.timeline`).
    """

    model_config = _FROZEN
    class_properties: frozenset[str] = DEFAULT_CLASS_PROPERTIES
    hub_limit: int | None = Field(default=1000, ge=0, strict=True)
    include_literals: bool = False
    excluded_properties: frozenset[str] = frozenset()
    properties: frozenset[str] | None = None
    as_of: str | None = Field(default=None, description=(
        "only statements valid on this date are steps (ISO date, YYYY-MM or a year; DESIGN §11)"))

    @field_validator("as_of", mode="before")
    @classmethod
    def _date(cls, value: Any) -> Any:
        from chaingraph.timeline import parse_as_of

        if value is None:
            return value
        try:
            return parse_as_of(value).text
        except InvalidInput as exc:  # settings() puts the parameter name back in front
            raise ValueError(str(exc).removeprefix("as_of: ")) from None

    @field_validator("class_properties", "excluded_properties", "properties", mode="before")
    @classmethod
    def _property_ids(cls, value: Any) -> Any:
        from chaingraph.ids import pid

        if value is None or isinstance(value, str):
            return value  # a bare string is refused by the field type, not split into letters
        return frozenset(pid(p) for p in value)

    @field_serializer("class_properties", "excluded_properties", "properties", when_used="json")
    def _sorted(self, value: frozenset[str] | None) -> list[str] | None:
        """Sets as sorted lists in JSON: a set's iteration order depends on the process's hash
        seed, and records must be byte-identical whichever process wrote them."""
        return None if value is None else sorted(value)

    def allows(self, property_id: str) -> bool:
        """True when statements of this property may be chain steps."""
        if property_id in self.class_properties or property_id in self.excluded_properties:
            return False
        return self.properties is None or property_id in self.properties

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description (sorted lists), as recorded in chain records and reports."""
        return {
            "class_properties": sorted(self.class_properties),
            "hub_limit": self.hub_limit,
            "include_literals": self.include_literals,
            "excluded_properties": sorted(self.excluded_properties),
            "properties": None if self.properties is None else sorted(self.properties),
            "as_of": self.as_of,
        }


class RetryPolicy(BaseModel):
    """How long to keep asking an endpoint. ``attempts`` counts the first try; waits grow
    as ``backoff · 2^retry`` up to ``max_backoff``; a ``Retry-After`` is honoured up to
    ``retry_after_cap``; ``total`` bounds all waiting.

    >>> RetryPolicy(backoff=0.5).delay(3)
    4.0
    """

    model_config = _FROZEN
    attempts: int = Field(default=6, ge=1, strict=True)
    backoff: float = Field(default=1.0, ge=0)
    max_backoff: float = Field(default=60.0, ge=0)
    retry_after_cap: float = Field(default=120.0, ge=0)
    total: float = Field(default=300.0, ge=0)

    def delay(self, retry: int) -> float:
        """Back-off before retry number ``retry`` (0-based): ``backoff · 2^retry``, capped."""
        return float(min(self.max_backoff, self.backoff * 2**retry))


class EndpointSettings(BaseModel):
    """How a SPARQL endpoint is asked (DESIGN §3): its ``url``, the ``user_agent`` sent,
    ``timeout`` seconds per request, the ``retry`` policy (429, 5xx, time-outs, bad
    bodies), ``batch_size`` entities per request, and ``offline`` (replay cached
    responses only); ``max_response_bytes`` and ``deadline`` (seconds per request, from
    connecting to the last byte) bound what a server can make the client hold and wait.
    The URL is an ``http(s)`` URL with a host; the User-Agent is printable Latin-1 text.

    >>> EndpointSettings(url="http://127.0.0.1:7878/query").retry.attempts
    6
    """

    model_config = _FROZEN
    url: str = DEFAULT_ENDPOINT
    user_agent: str = DEFAULT_USER_AGENT
    timeout: float = Field(default=60.0, gt=0)
    retry: RetryPolicy = RetryPolicy()
    batch_size: int = Field(default=50, ge=1, strict=True)
    offline: bool = False
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, ge=1, strict=True)
    deadline: float = Field(default=DEFAULT_DEADLINE, gt=0)

    @field_validator("timeout", "deadline")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number of seconds, got {value!r}")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("give the endpoint's URL (e.g. https://query.wikidata.org/sparql)")
        problem = endpoint_url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("user_agent")
    @classmethod
    def _agent(cls, value: str) -> str:
        problem = user_agent_problem(value)
        if problem:
            raise ValueError(problem)
        return value


def endpoint_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a SPARQL endpoint (``None`` if it can): only ``http(s)`` URLs
    with a host, no spaces or control characters.

    >>> endpoint_url_problem("http://[::1"), endpoint_url_problem("https://query.wikidata.org/sparql")
    ('not a valid URL (Invalid IPv6 URL)', None)
    """
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "a URL holds no spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- parsing the port is the check
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"only http and https endpoints are asked, not {parts.scheme or 'a scheme-less'!s} URLs"
    if not parts.hostname:
        return "the URL names no host"
    return None


def user_agent_problem(agent: str) -> str | None:
    """Why ``agent`` cannot be sent as a User-Agent header (``None`` if it can).

    >>> user_agent_problem("me/1.0" + chr(10) + "X-Evil: 1")[:40]
    'only printable Latin-1 text without line'
    >>> user_agent_problem("bot/1 (me@example.org)") is None
    True
    """
    if not agent.strip():
        return "an empty User-Agent is refused by WDQS; give a descriptive one"
    if len(agent) > 1000:
        return "longer than 1000 characters"
    if any(ord(c) < 32 or 127 <= ord(c) < 160 or ord(c) > 255 for c in agent):
        return ("only printable Latin-1 text without line breaks can be sent (no CR, LF, tabs or "
                "other controls)")
    return None
