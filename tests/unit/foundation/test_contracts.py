"""The generated contracts match protos/, and the services keep to their own code."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from support.imports import imported_modules

ROOT = Path(__file__).resolve().parents[3]
GENERATED = ROOT / "libs" / "protos" / "src"
SERVICES = ["collections", "repodocs", "search", "gateway"]


def test_generated_code_matches_the_protos(tmp_path: Path) -> None:
    """Regenerating from protos/ gives exactly the committed code (run `make protos` after an edit)."""
    subprocess.run(
        [sys.executable, str(ROOT / "libs" / "protos" / "generate.py"), "--out", str(tmp_path)], check=True
    )
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(
        p.relative_to(GENERATED) for p in GENERATED.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    assert fresh == committed
    changed = [str(p) for p in fresh if not filecmp.cmp(tmp_path / p, GENERATED / p, shallow=False)]
    assert changed == [], f"generated code drifted from protos/: {changed}; run `make protos`"


def test_contracts_are_versioned_packages() -> None:
    from cograph.collections.v1 import collections_service_pb2
    from cograph.repodocs.v1 import repodocs_service_pb2
    from cograph.search.v1 import search_service_pb2

    assert collections_service_pb2.DESCRIPTOR.package == "cograph.collections.v1"
    assert repodocs_service_pb2.DESCRIPTOR.package == "cograph.repodocs.v1"
    assert search_service_pb2.DESCRIPTOR.package == "cograph.search.v1"


@pytest.mark.parametrize("service", SERVICES)
def test_services_import_only_libs_and_contracts(service: str) -> None:
    """A service never imports another service: they meet only through the generated contracts."""
    imported = imported_modules(ROOT / "services" / service / "src" / f"cograph_{service}")
    others = {f"cograph_{other}" for other in SERVICES if other != service}
    leaks = sorted(m for m in imported if m.split(".")[0] in others)
    assert leaks == []


@pytest.mark.parametrize("lib", [p.name for p in (ROOT / "libs").iterdir() if (p / "src").is_dir()])
def test_libs_never_import_services(lib: str) -> None:
    imported = imported_modules(ROOT / "libs" / lib / "src")
    services = {f"cograph_{service}" for service in SERVICES} | {"cograph_cli"}
    assert sorted(m for m in imported if m.split(".")[0] in services) == []
