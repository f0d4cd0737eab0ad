"""A `cograph` command that cannot start says why in one `cograph: ...` line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COGRAPH = Path(sys.executable).parent / "cograph"


def _run(argv: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGRAPH_")} | environ
    return subprocess.run(
        [str(COGRAPH), *argv], check=False, capture_output=True, text=True, env=env, timeout=180
    )


def _one_line(finished: subprocess.CompletedProcess[str]) -> str:
    assert finished.returncode == 1, finished.stderr
    assert "Traceback" not in finished.stderr, finished.stderr
    last = finished.stderr.strip().splitlines()[-1]
    assert last.startswith("cograph: "), finished.stderr
    return last


def test_a_grpc_message_limit_grpc_cannot_take_is_refused_by_name() -> None:
    """2 GiB and more overflowed gRPC's C int when the server was built: an OverflowError traceback."""
    last = _one_line(
        _run(
            ["serve", "gateway"],
            {
                "COGRAPH_GRPC__MAX_MESSAGE_BYTES": str(2**31),
                "COGRAPH_GATEWAY__PORT": "0",
                "COGRAPH_GATEWAY__GRPC_PORT": "0",
            },
        )
    )
    assert "COGRAPH_GRPC__MAX_MESSAGE_BYTES: Expected `int` <= 2147483647" in last, last


def test_shared_buffers_below_postgresql_minimum_is_refused_by_name(tmp_path: Path) -> None:
    """16kB went to pg_ctl, whose failure was a CalledProcessError traceback."""
    last = _one_line(
        _run(
            ["migrate"],
            {
                "COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS": "16kB",
                "COGRAPH_DATABASE__DATA_DIR": str(tmp_path / "pg"),
            },
        )
    )
    assert (
        "COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS (16kB) is below PostgreSQL's minimum of 128kB" in last
    ), last
    assert not (tmp_path / "pg").exists()


def test_an_embedded_postgresql_that_does_not_start_points_at_its_log(tmp_path: Path) -> None:
    """A value PostgreSQL itself refuses (more shared_buffers than it can count) stops the command
    with one line naming the server's log, which says why."""
    data_dir = tmp_path / "pg"
    last = _one_line(
        _run(
            ["migrate"],
            {
                "COGRAPH_DATABASE__EMBEDDED_SHARED_BUFFERS": "1000000GB",
                "COGRAPH_DATABASE__DATA_DIR": str(data_dir),
            },
        )
    )
    assert last == (
        f"cograph: the embedded PostgreSQL in {data_dir} did not start (pg_ctl exited 1);"
        f" its log says why: {data_dir / 'log'}"
    ), last
    assert "shared_buffers" in (data_dir / "log").read_text()


@pytest.mark.slow
def test_a_model_directory_that_is_not_a_model_is_one_line(tmp_path: Path) -> None:
    """A directory with a config.json that sentence-transformers cannot load was a ValueError
    traceback from transformers once PostgreSQL had started."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    last = _one_line(
        _run(
            ["up", "--port", "0", "--data-dir", str(tmp_path / "state")],
            {"COGRAPH_EMBEDDING__MODEL": "custom", "COGRAPH_EMBEDDING__MODEL_PATH": str(model)},
        )
    )
    assert f"COGRAPH_EMBEDDING__MODEL_PATH: {model} is not a sentence-transformers model" in last, last
    assert "model_type" in last, last  # the library's reason, on the same line


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_that_is_not_one_is_refused_before_anything_starts(tmp_path: Path, port: str) -> None:
    """`cograph up --port 70000` failed with an OverflowError only after PostgreSQL and the model
    had started."""
    finished = _run(["up", "--port", port, "--data-dir", str(tmp_path / "state")], {})
    assert finished.returncode == 2, finished.stderr
    assert "Traceback" not in finished.stderr, finished.stderr
    assert "argument --port: " in finished.stderr.strip().splitlines()[-1], finished.stderr
    assert not (tmp_path / "state").exists()  # nothing started
