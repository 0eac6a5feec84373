"""Neighbourhoods from a SPARQL endpoint: the batched queries of ``queries/*.rq``.

:class:`SparqlSource` expands a batch of entities with a fixed number of round trips,
whatever the batch size (``VALUES ?item { … }``)::

    statements.rq          all statements of the batch (rank, value, value node)
    snaks_by_item.rq       their qualifiers and references
    in_edges.rq            item-valued in-edges, capped per entity inside the query
    snaks_by_statement.rq  qualifiers and references of those in-edges (chunks of 200)
    properties.rq          datatypes and labels of every property seen (chunks of 500)

Statements whose property datatype is not item-valued or literal (external ids, URLs,
media) are dropped once ``properties.rq`` has told their datatypes, with their snaks.
:meth:`SparqlSource.describe` reads nodes with ``entity_info.rq`` (and
``snaks_by_statement.rq`` for their ``P31`` statements). Only validated ids reach a
query: items through :func:`~chaingraph.ids.qid`, properties through
:func:`~chaingraph.ids.pid`, statement IRIs through a strict pattern.
Statement ids become JSON form, values go through :func:`chaingraph.sources.sparql_terms.term_value`.

>>> "VALUES ?prop { wd:P31 wd:P569 }" in render_query("properties", properties=["P31", "P569"])
True
>>> render_query("entity_info", items=["Q42 } ?s ?p ?o {"])
Traceback (most recent call last):
...
chaingraph.errors.InvalidId: 'Q42 } ?s ?p ?o {' is not a Wikidata id (expected Q followed by digits, e.g. Q42)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from chaingraph.errors import InvalidInput
from chaingraph.ids import from_iri, pid, qid, statement_id_from_rdf
from chaingraph.resources import query_file
from chaingraph.settings import CrawlLimits, EndpointSettings
from chaingraph.sources.neighbours import KEPT_DATATYPES, Neighbour, Neighbourhoods, SourceRef
from chaingraph.sources.sparql import Response, SparqlClient
from chaingraph.sources.sparql_terms import datatype_name, infer_datatype, is_unknown, rank_name, term_value
from chaingraph.store import (
    Store,
    entity_row,
    property_row,
    qualifier_row,
    reference_row,
    statement_row,
)
from chaingraph.values import EntityValue

__all__ = ["SparqlSource", "render_query"]

_STATEMENT_IRI = re.compile(r"http://www\.wikidata\.org/entity/statement/[QqPpLl][0-9]+-[0-9A-Za-z-]+")
_PER_ITEM = re.compile(r"# BEGIN PER ITEM\n(.*?)# END PER ITEM\n", re.S)
_CHUNK = 200
_PROPERTY_CHUNK = 500


@cache
def _template(name: str) -> str:
    return query_file(name).read_text(encoding="utf-8")


def render_query(
    name: str,
    *,
    items: Sequence[str] = (),
    properties: Sequence[str] = (),
    statements: Sequence[str] = (),
    limit: int = 0,
) -> str:
    """Fill a ``queries/<name>.rq`` template with validated ids (see ``queries/README.md``)."""
    text = _template(name)
    wd_items = [f"wd:{qid(i)}" for i in items]
    m = _PER_ITEM.search(text)
    if m:
        blocks = "  UNION\n".join(
            m.group(1).replace("{{item}}", i).replace("{{limit}}", str(int(limit))) for i in wd_items
        )
        text = text[: m.start()] + blocks + text[m.end() :]
    iris = []
    for st in statements:
        if not _STATEMENT_IRI.fullmatch(st):
            raise InvalidInput(f"{st!r} is not a Wikidata statement IRI")
        iris.append(f"<{st}>")
    return (
        text.replace("{{items}}", " ".join(wd_items))
        .replace("{{properties}}", " ".join(f"wd:{pid(p)}" for p in properties))
        .replace("{{statements}}", " ".join(iris))
    )


_WD_PROP = "http://www.wikidata.org/prop/"
_NOVALUE = _WD_PROP + "novalue/"
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_PS = _WD_PROP + "statement/"
_WIKIBASE_RANK = "http://wikiba.se/ontology#rank"
_PID = re.compile(r"P[1-9][0-9]*")


def _snak_predicate(pred: str, value: str, in_reference: bool) -> tuple[str | None, str | None]:
    """``(kind, property)`` of a statement or reference triple: kind ``simple``, ``node``
    or ``novalue``; ``(None, None)`` for anything else (normalised values, ranks, types).

    >>> _snak_predicate("http://www.wikidata.org/prop/qualifier/value/P580", "", False)
    ('node', 'P580')
    >>> _snak_predicate("http://www.wikidata.org/prop/qualifier/value-normalized/P2048", "", False)
    (None, None)
    """
    if pred == _RDF_TYPE:
        return ("novalue", value[len(_NOVALUE) :]) if value.startswith(_NOVALUE) else (None, None)
    base = _WD_PROP + ("reference/" if in_reference else "qualifier/")
    if not pred.startswith(base):
        return None, None
    rest = pred[len(base) :]
    if rest.startswith("value/"):
        return "node", rest[len("value/") :]
    return ("simple", rest) if "/" not in rest else (None, None)


def _claim_property(claim: str) -> str | None:
    """``P31`` from a ``p:P31`` IRI (``None`` for anything else)."""
    if not claim.startswith(_WD_PROP):
        return None
    local = claim[len(_WD_PROP) :]
    return local if _PID.fullmatch(local) else None


def _snak_properties(rows: list[dict[str, Any]]) -> set[str]:
    out = set()
    for b in rows:
        _, prop = _snak_predicate(_v(b, "pred") or "", _v(b, "value") or "", b.get("ref") is not None)
        if prop is not None and _PID.fullmatch(prop):
            out.add(prop)
    return out


def _group_statements(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per statement IRI: subject, property, rank and one value row (``term_value`` input)
    from the triple-per-row answer of ``statements.rq``."""
    out: dict[str, dict[str, Any]] = {}
    for b in rows:
        st, item, prop = _v(b, "st"), from_iri(_v(b, "item") or ""), _claim_property(_v(b, "claim") or "")
        if st is None or item is None or prop is None:
            continue
        rec = out.setdefault(st, {"item": item, "prop": prop, "rank": "normal", "row": {}})
        pred, value = _v(b, "pred") or "", _v(b, "value") or ""
        if pred == _WIKIBASE_RANK:
            rec["rank"] = rank_name(value)
        elif pred == _RDF_TYPE:
            if value == _NOVALUE + prop:
                rec["row"]["novalue"] = True
        elif pred == _PS + prop:
            rec["row"]["value"] = b["value"]
        elif pred == _PS + "value/" + prop:
            rec["row"].update(
                {k: v for k, v in b.items() if k not in ("item", "claim", "st", "pred", "value")}
            )
    return out


def _v(b: dict[str, Any], key: str) -> str | None:
    term = b.get(key)
    return None if term is None else str(term["value"])


class SparqlSource:
    """Wikidata neighbourhoods from one SPARQL endpoint, responses cached in a store."""

    def __init__(
        self,
        endpoint: EndpointSettings | str,
        *,
        store_for_cache: Store | None,
        limits: CrawlLimits | None = None,
        describe_size: int = 200,
        client: SparqlClient | None = None,
    ) -> None:
        settings = endpoint if isinstance(endpoint, EndpointSettings) else EndpointSettings(url=endpoint)
        if describe_size < 1:
            raise InvalidInput(f"describe_size: must be >= 1, got {describe_size!r}").about("describe_size")
        self.settings = settings
        self.client = client or SparqlClient(
            settings.url,
            cache=store_for_cache,
            user_agent=settings.user_agent,
            timeout=settings.timeout,
            retry=settings.retry,
            offline=settings.offline,
            max_response_bytes=settings.max_response_bytes,
            deadline=settings.deadline,
        )
        self.endpoint = self.client.endpoint
        self.batch_size = settings.batch_size
        self.describe_size = describe_size
        self.in_limit = (limits or CrawlLimits()).in_limit
        self.name = f"sparql:{self.endpoint}"

    # -- plumbing -------------------------------------------------------------------------
    def _run(self, out: Neighbourhoods, name: str, **params: Any) -> tuple[list[dict[str, Any]], SourceRef]:
        before = (self.client.requests, self.client.retries, self.client.cache_hits)
        resp: Response = self.client.select(render_query(name, **params), query_file=f"{name}.rq")
        out.requests += self.client.requests - before[0]
        out.retries += self.client.retries - before[1]
        out.cache_hits += self.client.cache_hits - before[2]
        ref = SourceRef("sparql", self.endpoint, f"{name}.rq", resp.query_hash, resp.retrieved_at)
        out.sources.append(ref)
        return resp.bindings, ref

    def _statements(
        self, out: Neighbourhoods, rows: list[dict[str, Any]], ref: SourceRef, datatypes: dict[str, str]
    ) -> set[str]:
        """Statements of ``statements.rq`` rows whose datatype a crawl keeps; returns their IRIs."""
        kept: set[str] = set()
        for st, rec in sorted(_group_statements(rows).items()):
            subject, prop = rec["item"], rec["prop"]
            datatype = datatypes.get(prop) or infer_datatype(rec["row"])
            if datatype not in KEPT_DATATYPES and datatype != "novalue":
                continue  # external ids, URLs, media: never edges, not literal nodes
            try:
                snaktype, value = term_value(datatype, rec["row"])
                sid = statement_id_from_rdf(st)
            except InvalidInput:
                out.skipped += 1
                continue
            rank = rec["rank"]
            out.batch.statements.append(
                statement_row(sid, subject, prop, value, rank=rank, snaktype=snaktype)
            )
            out.provenance.append((sid, ref))
            kept.add(st)
            if isinstance(value, EntityValue):
                out.neighbours.setdefault(subject, []).append(Neighbour(value.id, prop, sid, True, rank))
        return kept

    def _snaks(self, out: Neighbourhoods, rows: list[dict[str, Any]]) -> None:
        """Qualifier and reference rows of ``snaks_*.rq``; value nodes win over simple values."""
        main = {r[0]: r[2] for r in out.batch.statements}
        groups: dict[tuple[str, str | None, str], list[tuple[str, dict[str, Any]]]] = {}
        for b in rows:
            st, ref, pred, obj = _v(b, "st"), _v(b, "ref"), _v(b, "pred") or "", _v(b, "value") or ""
            kind, prop = _snak_predicate(pred, obj, ref is not None)
            if st is None or prop is None or kind is None:
                continue  # normalized values, other triples of the node
            if kind == "novalue" and ref is None and main.get(statement_id_from_rdf(st)) == prop:
                continue  # the statement's own "no value" main snak
            groups.setdefault((st, ref, prop), []).append((kind, b))
        for (st, ref, prop), group in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])
        ):
            sid = statement_id_from_rdf(st)
            has_node = any(kind == "node" for kind, _ in group)
            for kind, b in group:
                if kind == "simple" and has_node and not is_unknown(b.get("value")):
                    continue  # the simple value duplicates a value node
                row = {"novalue": True} if kind == "novalue" else b
                try:
                    snaktype, value = term_value(infer_datatype(row), row)
                except InvalidInput:
                    out.skipped += 1
                    continue
                if ref is None:
                    out.batch.qualifiers.append(qualifier_row(sid, prop, value, snaktype))
                else:
                    out.batch.reference_snaks.append(
                        reference_row(sid, ref.rstrip("/").rsplit("/", 1)[-1], prop, value, snaktype)
                    )

    def _statement_snaks(self, out: Neighbourhoods, iris: Sequence[str]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        good = sorted({i for i in iris if _STATEMENT_IRI.fullmatch(i)})
        for i in range(0, len(good), _CHUNK):
            part, _ = self._run(out, "snaks_by_statement", statements=good[i : i + _CHUNK])
            rows += part
        return rows

    def _properties(self, out: Neighbourhoods, props: set[str]) -> dict[str, str]:
        """Property rows (datatype, label, ...) for ``props``; returns their datatypes."""
        datatypes: dict[str, str] = {}
        ordered = sorted(props, key=lambda p: (len(p), p))
        for i in range(0, len(ordered), _PROPERTY_CHUNK):
            rows, _ = self._run(out, "properties", properties=ordered[i : i + _PROPERTY_CHUNK])
            info: dict[str, dict[str, Any]] = {}
            for b in rows:
                prop = from_iri(_v(b, "prop") or "")
                if prop is None:
                    continue
                rec = info.setdefault(prop, {"texts": {}, "datatypes": set()})
                if b.get("dtype") is not None:
                    rec["datatypes"].add(datatype_name(_v(b, "dtype") or ""))
                if b.get("field") is not None:
                    rec["texts"].setdefault((_v(b, "field"), b["text"].get("xml:lang", "")), []).append(
                        _v(b, "text")
                    )
            for prop, rec in sorted(info.items()):
                label, lang, desc, aliases = _terms(rec["texts"])
                datatype = min(rec["datatypes"]) if rec["datatypes"] else None
                if datatype is not None:
                    datatypes[prop] = datatype
                out.batch.properties.append(
                    property_row(prop, label, desc, aliases, datatype=datatype, label_lang=lang)
                )
        return datatypes

    # -- the NeighbourSource protocol ------------------------------------------------------
    def fetch(self, entities: Sequence[str]) -> Neighbourhoods:
        """Expand a batch: statements, their snaks, capped in-edges and their snaks, properties."""
        ents = [qid(e) for e in entities]
        out = Neighbourhoods(neighbours={e: [] for e in ents})
        raw: list[tuple[list[dict[str, Any]], SourceRef]] = []
        snak_rows: list[dict[str, Any]] = []
        keep: set[str] = set()
        props: set[str] = set()
        for chunk in [ents[i : i + self.batch_size] for i in range(0, len(ents), self.batch_size)]:
            rows, ref = self._run(out, "statements", items=chunk)
            raw.append((rows, ref))
            props |= {_claim_property(_v(b, "claim") or "") or "" for b in rows} - {""}
            snak_rows += self._run(out, "snaks_by_item", items=chunk)[0]
            if self.in_limit > 0:
                rows, ref = self._run(out, "in_edges", items=chunk, limit=self.in_limit)
                in_iris = []
                for b in rows:
                    item, subject, prop = (from_iri(_v(b, k) or "") for k in ("item", "subject", "prop"))
                    st_iri = _v(b, "st")
                    if item is None or subject is None or prop is None or st_iri is None:
                        out.skipped += 1
                        continue
                    sid, rank = statement_id_from_rdf(st_iri), rank_name(_v(b, "rank") or "")
                    out.batch.statements.append(
                        statement_row(sid, subject, prop, EntityValue(id=item), rank=rank)
                    )
                    out.provenance.append((sid, ref))
                    out.neighbours.setdefault(item, []).append(Neighbour(subject, prop, sid, False, rank))
                    in_iris.append(st_iri)
                    props.add(prop)
                keep.update(in_iris)
                snak_rows += self._statement_snaks(out, in_iris)
        datatypes = self._properties(out, props | _snak_properties(snak_rows))
        for rows, ref in raw:
            keep |= self._statements(out, rows, ref, datatypes)
        self._snaks(out, [b for b in snak_rows if _v(b, "st") in keep])
        return out

    def describe(self, entities: Sequence[str]) -> Neighbourhoods:
        """Labels, descriptions, aliases, sitelinks and ``P31`` statements of a batch."""
        ents = [qid(e) for e in entities]
        out = Neighbourhoods()
        props: set[str] = set()
        for chunk in [ents[i : i + self.describe_size] for i in range(0, len(ents), self.describe_size)]:
            rows, ref = self._run(out, "entity_info", items=chunk)
            texts: dict[str, dict[tuple[str | None, str], list[str | None]]] = {e: {} for e in chunk}
            counts: dict[tuple[str, str], list[int]] = {}
            modified: dict[str, str] = {}
            class_iris = []
            for b in rows:
                item, fieldname = from_iri(_v(b, "item") or ""), _v(b, "field")
                if item is None or item not in texts:
                    continue
                if fieldname in ("sitelinks", "revision"):
                    counts.setdefault((fieldname, item), []).append(int(_v(b, "count") or 0))
                elif fieldname == "modified":
                    modified[item] = min(modified.get(item, "~"), _v(b, "text") or "~")
                elif fieldname == "class":
                    cls, st = from_iri(_v(b, "class") or ""), _v(b, "st") or ""
                    snaktype = "somevalue" if is_unknown(b.get("class")) else "value"
                    if (cls is None and snaktype == "value") or not st:
                        out.skipped += 1
                        continue
                    sid = statement_id_from_rdf(st)
                    out.batch.statements.append(
                        statement_row(
                            sid,
                            item,
                            "P31",
                            EntityValue(id=cls) if cls else None,
                            rank=rank_name(_v(b, "rank") or ""),
                            snaktype=snaktype,
                        )
                    )
                    out.provenance.append((sid, ref))
                    class_iris.append(st)
                else:
                    texts[item].setdefault((fieldname, b["text"].get("xml:lang", "")), []).append(
                        _v(b, "text")
                    )
            for item in chunk:
                label, lang, desc, aliases = _terms(texts[item])
                links, revs = counts.get(("sitelinks", item)), counts.get(("revision", item))
                if label is not None or desc is not None or aliases or links or revs or item in modified:
                    out.batch.entities.append(
                        entity_row(
                            item,
                            label,
                            desc,
                            aliases,
                            label_lang=lang,
                            sitelinks=max(links) if links else None,
                            revision=max(revs) if revs else None,
                            modified=modified.get(item),
                        )
                    )
            snak_rows = self._statement_snaks(out, class_iris)
            self._snaks(out, snak_rows)
            props |= _snak_properties(snak_rows)
        if out.batch.statements:
            self._properties(out, props | {"P31"})
        return out


def _terms(
    texts: dict[tuple[str | None, str], list[str | None]],
) -> tuple[str | None, str | None, str | None, list[str] | None]:
    """(label, label language, description, aliases) preferring ``en``, then ``mul``."""

    def pick(field: str) -> tuple[list[str], str | None]:
        for lang in ("en", "mul"):
            values = [t for t in texts.get((field, lang), []) if t is not None]
            if values:
                return values, lang
        return [], None

    labels, lang = pick("label")
    descs, _ = pick("description")
    aliases, _ = pick("alias")
    return (
        min(labels) if labels else None,
        lang,
        min(descs) if descs else None,
        sorted(set(aliases)) or None,
    )
