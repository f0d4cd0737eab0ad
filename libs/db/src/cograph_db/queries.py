"""Named SQL queries kept in .sql files beside the store that runs them.

A file holds blocks introduced by `-- name: <query_name>`; each block is one
statement, reached as an attribute: `queries.get_collection`.
"""

from __future__ import annotations

import re
from importlib import resources

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


class Queries:
    def __init__(self, statements: dict[str, str]) -> None:
        self._statements = statements

    @classmethod
    def load(cls, package: str, filename: str = "queries.sql") -> Queries:
        return cls.parse(resources.files(package).joinpath(filename).read_text(encoding="utf-8"))

    @classmethod
    def parse(cls, text: str) -> Queries:
        parts = _NAME.split(text)
        statements: dict[str, str] = {}
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name in statements:
                raise ValueError(f"query {name!r} is defined twice")
            statements[name] = body.strip().rstrip(";")
        return cls(statements)

    def __getattr__(self, name: str) -> str:
        try:
            return self._statements[name]
        except KeyError:
            raise AttributeError(f"no query named {name!r}") from None

    def names(self) -> list[str]:
        return sorted(self._statements)
