"""Record shapes: turn one JSON record into its component chains, whatever tool wrote it.

A *shape detector* (:class:`Shape`) looks at a record and either declines (``None``) or
returns the record's component chains as :class:`Component` values: the chain identity
key, the edges in walk order and the nodes. :data:`DEFAULT_SHAPES` is the documented
default order; the first detector that accepts a record decides:

1. ``chaingraph-chain`` — chaingraph's own :class:`~chaingraph.records.ChainRecord`
   (``schema_version`` ``chaingraph.chain/…``);
2. ``chaingraph-task`` — a chaingraph task (``schema_version`` ``chaingraph.task/…``, or the
   task keys ``clues`` with ``components``/``chains``/``chain``);
3. ``task`` — any record holding chains under ``components`` (fused tasks, nested to any
   depth), ``chains`` or ``chain``, possibly with a chain at its own top level too;
4. ``chain`` — a record that *is* a chain: an edge list under ``steps``, ``edges``,
   ``path``, ``hops`` or ``triples``.

An edge is a mapping or a ``[source, relation, target]`` triple (a ``path`` may also
alternate ``node, relation, node, …``). From a mapping the edge takes its endpoints
(``source``/``subject``/``head``/``from`` and ``target``/``object``/``tail``/``to``) and
up to three annotations, each later classified by its own route (see
:mod:`chaingraph.audit.classify`):

* **label** — an explicit relation label (``relation_class``, ``relation``,
  ``relation_type``, ``label``, ``edge_type``), any spelling: ``part_of``, ``PartWhole``,
  the twelve-class scheme …;
* **property** — a raw Wikidata property id (``property``, ``pid``, ``predicate``, ``p``;
  an IRI or ``wdt:P131`` prefix form is reduced to the id). Any annotation whose value is
  a property id is a property, whatever its key, so ``{"relation": "P361"}`` is a
  property and ``{"relation": "part_of"}`` a label;
* **role** — an edge role: either a role name (``role``/``edge_role``, e.g. ``located_in``)
  or a subject/object role pair (``subject_role`` + ``object_role``, also ``source_role`` /
  ``head_role`` + ``target_role`` / ``tail_role``), written ``"part/whole"``.

**Chain identity key** (what "the same chain" means for de-duplication): the walk as
``(node₀, relation₁, node₁, …, relationₖ, nodeₖ)`` where a relation is the property id if
known, else the canonical label, else the role, with ``<`` appended for a backward step.
When a chain lists its nodes (``nodes``, one more than its edges) they give the walk
order, otherwise the edges' own endpoints do; unknown endpoints are ``?``, and a chain
with a ``seed``/``anchor`` but no endpoints starts from it.

>>> rec = {"components": [{"chain": [["Q1", "P361", "Q2"], ["Q2", "located_in", "Q3"]]}]}
>>> [c.key for c in detect(rec)[1]]
[('Q1', 'P361', 'Q2', 'label:locatedin', 'Q3')]
>>> detect(rec)[0], detect({"foo": 1})
('task', None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

__all__ = [
    "DEFAULT_SHAPES",
    "ChainShape",
    "ChaingraphChainShape",
    "ChaingraphTaskShape",
    "Component",
    "Edge",
    "Node",
    "Shape",
    "ShapeError",
    "TaskShape",
    "canonical_label",
    "detect",
    "parse_chain",
]

_PROPERTY_ID = re.compile(r"(?:^|[/:#])(P[1-9][0-9]*)$")
_PID = re.compile(r"P[1-9][0-9]*")
_CHAIN_KEYS = ("steps", "edges", "path", "hops", "triples")
_SOURCE_KEYS = ("source", "subject", "head", "from", "s", "h")
_TARGET_KEYS = ("target", "object", "tail", "to", "o", "t")
_PROPERTY_KEYS = ("property", "pid", "property_id", "wikidata_property", "predicate", "p")
_LABEL_KEYS = ("relation_class", "relation", "relation_type", "relation_label", "label", "edge_type", "r")
_ROLE_KEYS = ("role", "edge_role")
_ROLE_PAIRS = (("subject_role", "object_role"), ("source_role", "target_role"), ("head_role", "tail_role"))
_NODE_TYPE_KEYS = ("type", "entity_type")


class ShapeError(ValueError):
    """A record of a known shape is malformed; the message names the JSON path."""


class Edge(NamedTuple):
    """One directed edge occurrence with whatever annotations the record gave it."""

    source: str | None
    target: str | None
    label: str | None = None
    property: str | None = None
    role: str | None = None
    backward: bool = False


class Node(NamedTuple):
    id: str
    type: str | None = None


class Component(NamedTuple):
    """One component chain: its identity key, edges in walk order, nodes in walk order
    (empty when some endpoint is unknown) and its anchor (the first node, when known)."""

    key: tuple[str, ...]
    edges: tuple[Edge, ...]
    nodes: tuple[Node, ...]
    anchor: Node | None = None


class Shape(Protocol):
    """A record-shape detector: ``None`` when the record is not of this shape, else its
    component chains (possibly none, possibly repeated); :class:`ShapeError` when the
    record is of this shape but malformed."""

    name: str

    def components(self, record: Mapping[str, Any]) -> list[Component] | None: ...


def canonical_label(text: str) -> str:
    """A spelling-free form of a label, used only in chain keys.

    >>> canonical_label("Part-Whole"), canonical_label("part_whole"), canonical_label("PartWhole")
    ('partwhole', 'partwhole', 'partwhole')
    """
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _property_id(value: str) -> str | None:
    match = _PROPERTY_ID.search(value.strip())
    return match.group(1) if match else None


def _text(value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return str(value["id"])
    raise ShapeError(f"{path}: expected a string, found {type(value).__name__}")


def _first(step: Mapping[str, Any], keys: Sequence[str], path: str) -> str | None:
    for key in keys:
        if key in step:
            text = _text(step[key], f"{path}.{key}")
            if text is not None:
                return text
    return None


def _parse_edge(step: Any, path: str) -> Edge:
    if isinstance(step, (list, tuple)):
        if len(step) != 3:
            raise ShapeError(
                f"{path}: a triple edge needs [source, relation, target], found {len(step)} items"
            )
        source, relation, target = (_text(v, f"{path}[{i}]") for i, v in enumerate(step))
        prop = _property_id(relation) if relation else None
        return Edge(source, target, None if prop else relation, prop)
    if not isinstance(step, dict):
        raise ShapeError(f"{path}: an edge must be an object or a [source, relation, target] triple")
    label = prop = None
    for key in (*_PROPERTY_KEYS, *_LABEL_KEYS):
        if key not in step:
            continue
        text = _text(step[key], f"{path}.{key}")
        if text is None:
            continue
        found = _property_id(text)
        if found and prop is None:
            prop = found
        elif not found and label is None:
            label = text
    role = _first(step, _ROLE_KEYS, path)
    if role is None:
        for subject_key, object_key in _ROLE_PAIRS:
            subject_role = _first(step, (subject_key,), path)
            object_role = _first(step, (object_key,), path)
            if subject_role or object_role:
                role = f"{subject_role or '?'}/{object_role or '?'}"
                break
    return Edge(
        _first(step, _SOURCE_KEYS, path),
        _first(step, _TARGET_KEYS, path),
        label,
        prop,
        role,
        str(step.get("direction", "")).lower() == "backward",
    )


def _parse_node(node: Any, path: str) -> Node:
    if isinstance(node, str):
        return Node(node)
    if isinstance(node, dict) and isinstance(node.get("id"), str):
        node_type = _first(node, _NODE_TYPE_KEYS, path)
        if node_type is None and isinstance(node.get("types"), list) and node["types"]:
            node_type = _text(node["types"][0], f"{path}.types[0]")
        return Node(node["id"], node_type)
    raise ShapeError(f"{path}: a node must be an id string or an object with an 'id'")


def _relation(edge: Edge) -> str:
    if edge.property:
        name = edge.property
    elif edge.label:
        name = "label:" + canonical_label(edge.label)
    elif edge.role:
        name = "role:" + edge.role
    else:
        name = "?"
    return name + "<" if edge.backward else name


def _alternating(items: Sequence[Any], path: str) -> list[Edge]:
    if len(items) < 3 or len(items) % 2 == 0:
        raise ShapeError(f"{path}: a path of ids must alternate node, relation, node (odd length >= 3)")
    return [
        _parse_edge([items[i], items[i + 1], items[i + 2]], f"{path}[{i}]")
        for i in range(0, len(items) - 2, 2)
    ]


def parse_chain(obj: Any, path: str = "$") -> Component:
    """Parse a chain object (a mapping with an edge list, or a bare edge list).

    >>> c = parse_chain({"seed": "Q1", "nodes": [{"id": "Q1", "type": "Person"}, "Q2"],
    ...                  "steps": [{"property": "P19", "relation_class": "spatial"}]})
    >>> c.key, c.edges[0].label, c.nodes[0].type
    (('Q1', 'P19', 'Q2'), 'spatial', 'Person')
    """
    nodes: list[Node] = []
    seed: str | None = None
    if isinstance(obj, dict):
        steps_key = next((k for k in _CHAIN_KEYS if isinstance(obj.get(k), list)), None)
        if steps_key is None:
            raise ShapeError(f"{path}: a chain needs an edge list under one of {', '.join(_CHAIN_KEYS)}")
        steps = obj[steps_key]
        if isinstance(obj.get("nodes"), list):
            nodes = [_parse_node(n, f"{path}.nodes[{i}]") for i, n in enumerate(obj["nodes"])]
        seed = _text(obj.get("seed", obj.get("anchor")), f"{path}.seed")
        path = f"{path}.{steps_key}"
    elif isinstance(obj, list):
        steps = obj
    else:
        raise ShapeError(f"{path}: a chain must be an object or a list of edges")
    if steps and all(isinstance(s, str) for s in steps):
        edges = _alternating(steps, path)
    else:
        edges = [_parse_edge(step, f"{path}[{i}]") for i, step in enumerate(steps)]
    if nodes and len(nodes) == len(edges) + 1:
        edges = [e._replace(source=nodes[i].id, target=nodes[i + 1].id) for i, e in enumerate(edges)]
    elif edges and not nodes:
        ids = [edges[0].source or seed or "?", *(e.target or "?" for e in edges)]
        nodes = [Node(i) for i in ids] if "?" not in ids else []
    start = edges[0].source if edges and edges[0].source else (seed or "?")
    key: list[str] = [start]
    for edge in edges:
        key += [_relation(edge), edge.target or "?"]
    anchor = nodes[0] if nodes else None if start == "?" else Node(start)
    return Component(tuple(key), tuple(edges), tuple(nodes), anchor)


class ChaingraphChainShape:
    """chaingraph's own chain records (``schema_version`` ``chaingraph.chain/…``)."""

    name = "chaingraph-chain"

    def components(self, record: Mapping[str, Any]) -> list[Component] | None:
        if not str(record.get("schema_version", "")).startswith("chaingraph.chain/"):
            return None
        fast = _chaingraph_chain(record)
        return [fast if fast is not None else parse_chain(record)]


def _chaingraph_chain(record: Mapping[str, Any]) -> Component | None:
    """The common case of a well-formed chain record, read directly (``None``: take the
    general parser, which also names what is wrong)."""
    nodes, steps = record.get("nodes"), record.get("steps")
    if not (isinstance(nodes, list) and isinstance(steps, list) and len(nodes) == len(steps) + 1):
        return None
    ids: list[str] = []
    parsed_nodes: list[Node] = []
    for node in nodes:
        if not isinstance(node, dict) or not isinstance(node.get("id"), str):
            return None
        node_type = node.get("type")
        if node_type is not None and not isinstance(node_type, str):
            return None
        ids.append(node["id"])
        parsed_nodes.append(Node(node["id"], node_type))
    edges: list[Edge] = []
    key = [ids[0]]
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            return None
        prop, label = step.get("property"), step.get("relation_class")
        if not (isinstance(prop, str) and _PID.fullmatch(prop)) or not (
            label is None or isinstance(label, str)
        ):
            return None
        if label and _PROPERTY_ID.search(label):  # a property id given as a label: general rules
            return None
        backward = step.get("direction") == "backward"
        edges.append(Edge(ids[i], ids[i + 1], label or None, prop, None, backward))
        key += [prop + "<" if backward else prop, ids[i + 1]]
    return Component(tuple(key), tuple(edges), tuple(parsed_nodes), parsed_nodes[0])


class TaskShape:
    """Records that hold component chains: ``chain``, ``chains``, ``components`` (nested to
    any depth), plus a chain at the record's own top level. Components are returned in
    that order (top level first), so the first copy of a repeated chain is the top-level
    one."""

    name = "task"

    def accepts(self, record: Mapping[str, Any]) -> bool:
        return any(key in record for key in ("components", "chains", "chain"))

    def components(self, record: Mapping[str, Any]) -> list[Component] | None:
        if not self.accepts(record):
            return None
        found: list[Component] = []
        self._walk(record, "$", found)
        return found

    def _walk(self, obj: Mapping[str, Any], path: str, found: list[Component]) -> None:
        if any(isinstance(obj.get(k), list) for k in _CHAIN_KEYS):
            found.append(parse_chain(obj, path))
        if obj.get("chain") is not None:
            found.append(parse_chain(obj["chain"], f"{path}.chain"))
        chains = obj.get("chains")
        if chains is not None:
            if not isinstance(chains, list):
                raise ShapeError(f"{path}.chains: expected a list of chains")
            found.extend(parse_chain(c, f"{path}.chains[{i}]") for i, c in enumerate(chains))
        components = obj.get("components")
        if components is not None:
            if not isinstance(components, list):
                raise ShapeError(f"{path}.components: expected a list of components")
            for i, component in enumerate(components):
                where = f"{path}.components[{i}]"
                if isinstance(component, dict):
                    self._walk(component, where, found)
                else:
                    found.append(parse_chain(component, where))


class ChaingraphTaskShape(TaskShape):
    """chaingraph task records (``schema_version`` ``chaingraph.task/…`` or ``clues`` + chains)."""

    name = "chaingraph-task"

    def accepts(self, record: Mapping[str, Any]) -> bool:
        if str(record.get("schema_version", "")).startswith("chaingraph.task"):
            return True
        return "clues" in record and super().accepts(record)


class ChainShape:
    """A record that is itself one chain (an edge list under ``steps``/``edges``/``path``/…)."""

    name = "chain"

    def components(self, record: Mapping[str, Any]) -> list[Component] | None:
        if not any(isinstance(record.get(k), list) for k in _CHAIN_KEYS):
            return None
        return [parse_chain(record)]


#: the documented default order: the first detector that accepts a record decides
DEFAULT_SHAPES: tuple[Shape, ...] = (ChaingraphChainShape(), ChaingraphTaskShape(), TaskShape(), ChainShape())


def detect(record: Any, shapes: Sequence[Shape] = DEFAULT_SHAPES) -> tuple[str, list[Component]] | None:
    """``(shape name, components)`` of the first detector that accepts ``record``, else ``None``.

    Raises :class:`ShapeError` when the accepting detector finds the record malformed.
    """
    if not isinstance(record, dict):
        return None
    for shape in shapes:
        found = shape.components(record)
        if found is not None:
            return shape.name, found
    return None
