"""Include lines in migrations: a library's DDL filled in for one table, and nothing else."""

from __future__ import annotations

import hashlib
import re
from importlib import resources

import pytest

from cograph_db import MigrationError
from cograph_db.migrate import Migration, render
from cograph_retrieval import ChunkTable

TABLES = "-- include: cograph_retrieval/ddl/term_stats_tables.sql term_stats=x_terms scope_stats=x_scopes"


def test_an_include_line_is_replaced_by_the_file_for_the_names_given() -> None:
    sql = render(f"-- before\n{TABLES}\n-- after\n")
    assert sql.startswith("-- before\n-- cograph_retrieval/ddl/term_stats_tables.sql")
    assert "CREATE TABLE x_terms (scope_id uuid NOT NULL" in sql
    assert "CREATE TABLE x_scopes (scope_id uuid PRIMARY KEY" in sql
    assert sql.endswith(");\n-- after\n")
    assert "{{" not in sql
    assert render("SELECT 1;\n") == "SELECT 1;\n"  # without includes, the text as written


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("-- include: term_stats_tables.sql", "is not -- include:"),
        (TABLES.replace(" scope_stats=x_scopes", ""), "takes scope_stats, term_stats; given term_stats"),
        (f"{TABLES} table=x", "given scope_stats, table, term_stats"),
        (f"{TABLES.replace('x_terms', 'X_terms')}", "'X_terms' is not a plain SQL identifier"),
        ("-- include: cograph_retrieval/ddl/no_such.sql", "cannot include"),
        ("-- include: no_such_package/ddl/x.sql", "cannot include"),
    ],
)
def test_an_include_that_cannot_be_filled_in_is_refused(line: str, error: str) -> None:
    with pytest.raises(MigrationError, match=re.escape(error)):
        render(line)


def test_the_retrieval_ddl_is_filled_in_from_a_chunk_tables_names() -> None:
    """Every placeholder of cograph_retrieval's DDL is a name a ChunkTable gives."""
    names = {"table", "scope_column", "term_stats", "scope_stats", "windows"}
    assert names <= set(ChunkTable.__struct_fields__)
    ddl = resources.files("cograph_retrieval").joinpath("ddl")
    files = [file for file in ddl.iterdir() if file.name.endswith(".sql")]
    assert files
    for file in files:
        assert set(re.findall(r"\{\{(\w+)\}\}", file.read_text(encoding="utf-8"))) <= names, file.name


def test_a_migration_names_the_earlier_checksums_it_stands_for() -> None:
    earlier = hashlib.sha256(b"CREATE TABLE t (id int);").hexdigest()
    migration = Migration(1, "t", f"-- equivalent-to: sha256:{earlier} (written out)\n{TABLES}\n")
    assert migration.equivalent_checksums == {earlier}
    assert Migration(1, "t", "SELECT 1;").equivalent_checksums == frozenset()
