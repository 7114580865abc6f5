"""What the OpenAPI document says beyond what Litestar derives from the types, for validators and
code generators alike.

The document is generated from service.http.schemas; this package adds what Litestar does not, one
module per concept:

* ``patterns``: ``DAILY_DATE`` ... ``VERSION_HEADER``, the patterns the controllers and the domain
  enforce, for parameters (``schema_extra`` on their ``Parameter``, built by ``header``); the media
  types and the names the other modules share.
* ``structs``: ``refine`` (on the finished document, by component name): request bodies
  (``service.http.schemas.RequestBody``) get ``additionalProperties: false`` (msgspec refuses unknown
  fields); a tagged Struct (a move, an event, a deal source) gets its tag as a required ``const``
  with that value as its default (a generated ``Draw()`` needs no arguments); ``REFINEMENTS`` state
  what a Struct's types cannot (the foundations a map by suit). Litestar builds the Structs'
  schemas itself: nothing here imports its private modules.
* ``plugins``: the schema plugins Litestar calls while it builds the document.
  ``DealUnionPlugin``: a deal request is one of five (a race's: four) objects tagged by source, a
  ``oneOf`` component of its own. ``TaggedUnionPlugin``: each union of tagged Structs in
  ``TAGGED_UNIONS`` (moves, events, deal sources) becomes one named component, a ``oneOf`` with a
  ``discriminator`` and its ``mapping``. Every generator then emits one class per branch, and the
  branches cannot overlap: each has its own required constant. ``ComponentNamePlugin``: a renamed
  Struct keeps its published component name.
* ``bodies``: the bodies that are not JSON (``application/x-ndjson``; ``text/event-stream`` as
  text, and message by message as ``StreamMessage``) and the other media types of ``ALSO``
  (ndjson beside the JSON of ``listEvents``).
* ``document``: ``complete`` (on the finished document): response headers with their schemas
  (``ETag``, ``Location``, ``Idempotent-Replayed`` as each operation declares them with
  ``response_headers``; ``Retry-After`` on every 429 and 503, ``WWW-Authenticate`` on 401), the
  bodies of ``bodies``, ``Api-Version`` on every operation, parameters that are never null.

``tests/api/test_schema_fuzz.py`` checks that the server and the document agree in both
directions (whatever the document allows is never refused as malformed, whatever it rules out is
refused); ``tests/clients`` generates clients from it. What no schema can say stays in the
descriptions: a daily date must be within the offered window, a pool number within the pool's
size, an idempotency key must not be reused for another move, a player name needs a visible
character.
"""
