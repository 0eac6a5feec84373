"""Items named by a label or alias, looked up on a SPARQL endpoint (``queries/names.rq``).

:class:`EndpointNames` answers what :meth:`chaingraph.store.Store.entities_named` answers
for a store, so seed names resolve by the same rule on either source
(:func:`chaingraph.build.seeds.resolve_names`): items whose English (or ``mul``) label or
alias equals the name case-insensitively, with their label and sitelink count. On an
endpoint the match is made on the name's **case forms** (as given, lower case, upper
case, title case with and without lower-case particles such as "of", first letter
capital): an exact literal is an index lookup on every
engine, while a case-insensitive filter over every label times out on the Wikidata
Query Service. A label in another casing (``McCartney`` asked as ``paul mccartney``) is
therefore found only on a store. Names go into the query as escaped string literals; a
name with a backslash is refused.

>>> sorted(case_forms("united states of america"))[1:3]
['United States Of America', 'United States of America']
>>> literal("Tom \\"T\\" Jones", "en")
'"Tom \\\\"T\\\\" Jones"@en'
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from chaingraph.errors import InvalidInput
from chaingraph.ids import from_iri
from chaingraph.resources import query_file
from chaingraph.settings import EndpointSettings
from chaingraph.sources.neighbours import number
from chaingraph.sources.sparql import SparqlClient

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = ["EndpointNames", "case_forms", "literal"]

Candidate = tuple[str, str | None, int | None, str]  # id, label, sitelinks, matched by

_LANGS = ("en", "mul")
#: words a title keeps in lower case after its first word
_PARTICLES = frozenset({"a", "an", "and", "at", "by", "da", "de", "del", "der", "des", "di", "du", "for",
                        "in", "la", "le", "of", "on", "the", "to", "van", "von", "y"})
_CHUNK = 40


def case_forms(name: str) -> set[str]:
    """The casings of ``name`` looked up on an endpoint."""
    text = name.strip()
    words = text.title().split(" ")
    titled = " ".join([words[0], *(w.lower() if w.lower() in _PARTICLES else w for w in words[1:])])
    return {text, text.lower(), text.upper(), text.title(), titled, text[:1].upper() + text[1:]}


def literal(text: str, lang: str) -> str:
    """``text`` as a SPARQL string literal with a language tag (quotes escaped)."""
    if "\\" in text or any(ord(c) < 32 for c in text):
        raise InvalidInput(f"seeds: {text!r}: a name with a backslash or a control character cannot be "
                           "looked up on an endpoint; give its Q-id").about("seeds")
    return '"' + text.replace('"', '\\"') + f'"@{lang}'


class EndpointNames:
    """Name lookups on one endpoint, responses cached in ``cache`` (a store) when given."""

    def __init__(self, endpoint: EndpointSettings | str, *, cache: Store | None = None,
                 client: SparqlClient | None = None) -> None:
        settings = endpoint if isinstance(endpoint, EndpointSettings) else EndpointSettings(url=endpoint)
        self.client = client or SparqlClient(
            settings.url, cache=cache, user_agent=settings.user_agent, timeout=settings.timeout,
            retry=settings.retry, offline=settings.offline, max_response_bytes=settings.max_response_bytes,
            deadline=settings.deadline)

    def entities_named(self, names: Collection[str]) -> dict[str, list[Candidate]]:
        """Name (lower-cased) -> ``(id, label, sitelinks, "label" | "alias")`` of every item
        carrying it, sorted by id; an item matched by its label and an alias is listed once,
        as ``label`` (the shape of :meth:`~chaingraph.store.Store.entities_named`)."""
        keys = sorted({n.strip().lower() for n in names})
        found: dict[str, dict[str, tuple[str | None, int | None, str]]] = {k: {} for k in keys}
        template = query_file("names").read_text(encoding="utf-8")
        wanted = sorted({(form, lang) for n in names for form in case_forms(n) for lang in _LANGS})
        for i in range(0, len(wanted), _CHUNK):
            values = " ".join(literal(text, lang) for text, lang in wanted[i : i + _CHUNK])
            resp = self.client.select(template.replace("{{literals}}", values), query_file="names.rq")
            for b in resp.bindings:
                item = from_iri(b["item"]["value"])
                key = b["text"]["value"].strip().lower()
                if item is None or not item.startswith("Q") or key not in found:
                    continue
                label = b.get("label", {}).get("value")
                lang = b.get("label", {}).get("xml:lang")
                count = b.get("count", {}).get("value")
                links = int(count) if count is not None and count.lstrip("-").isdigit() else None
                how = b["how"]["value"]
                old = found[key].get(item)
                if old is not None:
                    label = _better_label(old[0], label, lang)
                    links = max((x for x in (old[1], links) if x is not None), default=None)
                    how = "label" if "label" in (old[2], how) else how
                elif lang != "en" and label is not None:
                    label = "\0" + label  # a mul label, kept only when no English one is seen
                found[key][item] = (label, links, how)
        return {k: [(i, _shown(v[0]), v[1], v[2]) for i, v in sorted(found[k].items(),
                                                                      key=lambda kv: number(kv[0]))]
                for k in keys}


def _better_label(old: str | None, new: str | None, lang: str | None) -> str | None:
    """The English label wins over ``mul``; among equals the smallest (deterministic)."""
    if new is None:
        return old
    new = new if lang == "en" else "\0" + new
    if old is None:
        return new
    old_en, new_en = not old.startswith("\0"), not new.startswith("\0")
    if old_en != new_en:
        return old if old_en else new
    return min(old, new)


def _shown(label: str | None) -> str | None:
    return None if label is None else label.removeprefix("\0")
