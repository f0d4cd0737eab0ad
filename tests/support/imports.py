"""What Python modules import, read from their source: the tests that keep layers apart use it."""

from __future__ import annotations

import ast
from pathlib import Path


def imported_modules(path: Path) -> set[str]:
    """The modules a file, or every file under a directory, imports by absolute name."""
    sources = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    modules: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module)
    return modules
