"""JSON request bodies are read strictly: a value of the wrong JSON type is a 400.

Litestar converts a body to its type leniently (strict=False, which path and query parameters,
strings by nature, need): "limit": "10" became 10 and "true" became True, while MCP, calling the
same operations, refused them. Here a route's JSON body is decoded straight to its declared type
with msgspec's strict rules, and refused in Litestar's own words, so the answer reads as every other
validation error: "Validation failed for POST /api/search/route: limit: Expected `int | null`,
got `str`".
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.exceptions import ValidationException
from litestar.params import BodyKwarg
from litestar.types import Empty

# Where msgspec says the error is: "... - at `$.documents[0].content`".
_AT = re.compile(r" - at `\$\.?(?P<key>[^`]*)`$")


class StrictJsonRequest(Request[Any, Any, Any]):
    """A request whose JSON body, when its route declares one, is decoded strictly to that type."""

    async def json(self) -> Any:
        data = self.route_handler.parsed_data_field
        already = self._json is not Empty or self._connection_state.json is not Empty
        if data is None or already or not _is_json(data.kwarg_definition):
            return await super().json()
        body = await self.body()
        if not body:
            return await super().json()  # Litestar's answer to a missing body stays
        try:
            decoded = msgspec.json.decode(body, type=data.annotation, strict=True)
        except msgspec.ValidationError as error:
            raise self._invalid(str(error)) from None
        except msgspec.DecodeError:
            return await super().json()  # not JSON: Litestar's answer, which names the problem
        self._json = self._connection_state.json = decoded
        return decoded

    def _invalid(self, message: str) -> ValidationException:
        at = _AT.search(message)
        key = (at["key"] if at else "") or "data"
        reason = message[: at.start()] if at else message
        return ValidationException(
            detail=f"Validation failed for {self.method} {self.url.path}",
            extra=[{"message": reason, "key": key, "source": "body"}],
        )


def _is_json(definition: Any) -> bool:
    media_type = definition.media_type if isinstance(definition, BodyKwarg) else RequestEncodingType.JSON
    return bool(media_type == RequestEncodingType.JSON)
