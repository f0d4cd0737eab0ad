"""OpenAPI details Litestar does not derive on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi.spec import Schema

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator
    from litestar.typing import FieldDefinition


class StrictStructSchemaPlugin(StructSchemaPlugin):
    """Request bodies that refuse unknown fields say so (additionalProperties: false), so clients
    and fuzzers know an extra field is a 400, not something silently ignored. What a body's
    fields must be together (one of two, at least one) is stated from its `schema_extra`: JSON
    Schema keywords the gateway checks in its own words."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        if not super().is_plugin_supported_field(field_definition):
            return False
        config: msgspec.structs.StructConfig = field_definition.type_.__struct_config__
        return config.forbid_unknown_fields

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: SchemaCreator) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        schema.additional_properties = False
        aliases = schema.field_aliases()  # JSON Schema's names of the keywords: Schema's own
        for keyword, value in getattr(field_definition.type_, "schema_extra", {}).items():
            setattr(schema, aliases.get(keyword, keyword), value)
        return schema
