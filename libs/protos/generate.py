"""Generate the Python gRPC contracts from protos/ (run by `make protos`).

The output is committed; tests/unit/foundation/test_contracts.py
(test_generated_code_matches_the_protos) regenerates into a temporary directory
and fails when the committed code differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos"
DEFAULT_OUT = Path(__file__).resolve().parent / "src"


def proto_files() -> list[str]:
    return sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))


def generate(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    well_known = Path(protoc.__file__).parent / "_proto"
    # mypy-protobuf types the generated stubs and servicers, so callers stay strictly typed.
    mypy_grpc = Path(sys.executable).parent / "protoc-gen-mypy_grpc"
    if not mypy_grpc.exists():
        raise SystemExit("protoc-gen-mypy_grpc is missing: install the dev dependencies (make test does)")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTOS}",
        f"-I{well_known}",
        f"--plugin=protoc-gen-mypy_grpc={mypy_grpc}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_grpc_out={out}",
        *proto_files(),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # Every generated directory is a regular package, so imports never depend
    # on namespace-package discovery order.
    for pb2 in out.rglob("*_pb2.py"):
        directory = pb2.parent
        while directory != out:
            (directory / "__init__.py").touch()
            directory = directory.parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    generate(parser.parse_args(argv).out)


if __name__ == "__main__":
    main(sys.argv[1:])
