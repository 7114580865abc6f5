"""The schema plugins Litestar calls while it builds the OpenAPI document: each turns a type of
service.http.schemas into the component the contract names.

* ``ComponentNamePlugin``: a Struct renamed in Python keeps the component name it is published
  under (``__schema_name__``).
* ``DealUnionPlugin``: a deal request is one of five (a race's: four) objects tagged by source, a
  ``oneOf`` component of its own.
* ``TaggedUnionPlugin``: each union of tagged Structs in ``TAGGED_UNIONS`` (moves, events, deal
  sources) becomes one named component, a ``oneOf`` with a ``discriminator`` and its ``mapping``.
  Every generator then emits one class per branch, and the branches cannot overlap: each has its
  own required constant.

They use only the public plugin protocol and the schema creator they are handed; ``refine``
(service.http.openapi.structs) edits the Structs' own schemas in the finished document.
"""

from __future__ import annotations

from typing import Any, get_args

import msgspec
from litestar.openapi.spec import Discriminator, Reference
from litestar.params import KwargDefinition
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from ..schemas import AnalysedMove, DealSource, EventView, MoveRequest, RaceDeal, RevertedEvent
from .patterns import COMPONENTS
from .structs import ONE_OF, REFINEMENTS, component_name

TAGGED_UNIONS: dict[str, tuple[Any, str]] = {
    "MoveRequest": (
        MoveRequest,
        (
            "A move, tagged by `type`: draw, recycle, undo, resign, or move (a card and where to). Legal moves, "
            "hints and solver hints list moves in this form: any of them can be sent back as it is."
        ),
    ),
    "AnalysedMove": (
        AnalysedMove,
        (
            "A move of a game as its analysis names it, tagged by `type`: a move of `MoveRequest`, or `abandon`: "
            "the service ended the game after ABANDON_AFTER_DAYS without a move (its `GameAbandoned` event). "
            "No client sends `abandon`."
        ),
    ),
    "EventView": (
        EventView,
        (
            "One event of a game's log, tagged by `type`. While the game is in progress, fields that would reveal "
            "face-down cards are withheld."
        ),
    ),
    "DealSource": (
        DealSource,
        "Where a game's cards came from, tagged by `source`. A daily deal is never named by seed or pool number.",
    ),
    "RevertedEvent": (RevertedEvent, "An event of the move an undo took back, tagged by `type`."),
    "RaceDeal": (
        RaceDeal,
        (
            "A race's deal, tagged by `source`: seed, pool or deck when its creator named one, secret when the race "
            "was created without a deal (a deck nobody knows in advance, proven winnable, never named). A seed or "
            "pool number shows only once the race has finished and every game of it has ended: before, either would "
            "give the deck away through the documented shuffle."
        ),
    ),
}


def _pinned(field_definition: FieldDefinition) -> str | None:
    """The component name a Struct field must be keyed by, if Litestar's own (its class name) would differ."""
    kind = field_definition.type_
    if field_definition.is_union or not isinstance(kind, type) or not issubclass(kind, msgspec.Struct):
        return None
    name = component_name(kind)
    return None if name == kind.__name__ else name


class ComponentNamePlugin(OpenAPISchemaPlugin):
    """A Struct with a ``__schema_name__`` is the component of that name, as before it was renamed.

    Litestar keys a component by the class's ``__qualname__`` and titles it by ``__schema_name__``;
    this plugin hands Litestar's own Struct schema generation the same type keyed by its
    ``schema_component_key`` instead (a public ``KwargDefinition`` field), so the key and the title
    agree, and a generated client keeps its class names."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        name = _pinned(field_definition)
        kwargs = field_definition.kwarg_definition
        keyed = isinstance(kwargs, KwargDefinition) and kwargs.schema_component_key == name
        return name is not None and not keyed

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        name = _pinned(field_definition)
        key = FieldDefinition.from_annotation(
            field_definition.type_, kwarg_definition=KwargDefinition(schema_component_key=name)
        )
        reference: Reference = schema_creator.for_field_definition(key)  # Litestar's Struct schema, under ``name``
        return reference


class DealUnionPlugin(OpenAPISchemaPlugin):
    """A deal request (``DealRequest``, ``RaceDealRequest``) on the wire: one component, a ``oneOf``
    of its objects tagged by source, referenced by name (never spliced into another ``oneOf``).

    Litestar's own Struct schemas are left as it builds them; ``refine`` edits them in the finished
    document (this plugin and ``TaggedUnionPlugin`` use only the public plugin protocol and the
    schema creator they are handed)."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return not field_definition.is_union and field_definition.type_ in ONE_OF

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        registry = schema_creator.schema_registry
        schema = registry.get_schema_for_field_definition(field_definition)
        kind = field_definition.type_
        schema.title = kind.__name__
        REFINEMENTS[kind](schema, schema_creator)  # _one_of
        reference: Reference = registry.get_reference_for_field_definition(field_definition)
        return reference


class TaggedUnionPlugin(OpenAPISchemaPlugin):
    """A union of tagged Structs in ``TAGGED_UNIONS``: one component, a ``oneOf`` of the Structs
    with a ``discriminator`` on their tag field, mapping each tag to its Struct's component."""

    def __init__(self) -> None:
        self._names = {frozenset(get_args(union)): name for name, (union, _) in TAGGED_UNIONS.items()}

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return field_definition.is_union and frozenset(get_args(field_definition.annotation)) in self._names

    # Litestar's protocol says Schema; a Reference is what its own Struct plugin ends up giving too.
    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Reference:  # type: ignore[override]
        name = self._names[frozenset(get_args(field_definition.annotation))]
        union, description = TAGGED_UNIONS[name]
        key = FieldDefinition.from_annotation(union, kwarg_definition=KwargDefinition(schema_component_key=name))
        registry = schema_creator.schema_registry
        reference: Reference | None = registry.get_reference_for_field_definition(key)
        if reference is not None:
            return reference
        schema = registry.get_schema_for_field_definition(key)
        members = get_args(union)
        tags: dict[str, str] = {}  # tag -> the member's component
        tag_fields: set[str] = set()
        for member in members:
            info = msgspec.inspect.type_info(member)
            assert isinstance(info, msgspec.inspect.StructType), f"{name}: {member} is not a Struct"
            assert info.tag_field is not None, f"{name}: {member} has no tag"
            tag_fields.add(info.tag_field)
            tags[str(info.tag)] = COMPONENTS + component_name(member)
        assert len(tag_fields) == 1, f"{name}: every member needs the same tag field"
        schema.title = name
        schema.one_of = [
            schema_creator.for_field_definition(FieldDefinition.from_annotation(member)) for member in members
        ]
        schema.discriminator = Discriminator(property_name=tag_fields.pop(), mapping=tags)
        schema.description = description
        reference = registry.get_reference_for_field_definition(key)
        assert reference is not None
        return reference

