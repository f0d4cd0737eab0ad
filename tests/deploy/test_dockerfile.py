"""The Dockerfile, checked statically (no Docker engine here): a multi-stage build of one image that
runs `cograph` as uid 10001, with no secrets in it, agreeing with the Kubernetes manifests."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
BASE = ROOT / "deploy" / "k8s" / "base"
UID = 10001


@dataclass
class Instruction:
    keyword: str
    arguments: str


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [i.arguments for i in self.instructions if i.keyword == keyword]


def _instructions(text: str) -> list[Instruction]:
    """Logical lines of a Dockerfile: continuations joined, comments and parser directives dropped."""
    out: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical, pending = pending + line, ""
        keyword, _, arguments = logical.partition(" ")
        out.append(Instruction(keyword.upper(), arguments.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def _stages(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the build stages, in order."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for instruction in _instructions(text):
        if instruction.keyword == "FROM":
            words = instruction.arguments.split()
            image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(image, name))
        elif not stages:
            assert instruction.keyword == "ARG", "only ARG may come before the first FROM"
            key, _, value = instruction.arguments.partition("=")
            args[key] = value
        else:
            stages[-1].instructions.append(instruction)
    return args, stages


def _env(stage: Stage) -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in stage.all("ENV"):
        for word in shlex.split(arguments):
            key, _, value = word.partition("=")
            env[key] = value
    return env


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return _stages(DOCKERFILE.read_text())[1]


def test_the_build_has_a_builder_and_a_slim_runtime(stages: list[Stage]) -> None:
    assert len(stages) >= 2, "multi-stage: the build tools stay out of the runtime image"
    runtime = stages[-1]
    assert all("slim" in stage.image for stage in stages), [stage.image for stage in stages]
    copies = runtime.all("COPY")
    assert copies
    assert all(copy.startswith("--from=") for copy in copies), (
        "the runtime copies only what the builder made, never the source tree"
    )
    assert "cograph --help" in stages[0].all("RUN")[-1], "the builder smoke-tests the installed command"


def test_torch_is_the_cpu_build_at_the_pinned_version(stages: list[Stage]) -> None:
    pins = dict(
        line.split("==", 1)
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    runs = stages[0].all("RUN")
    torch = [run for run in runs if "torch==" in run]
    assert len(torch) == 1
    assert f"torch=={pins['torch']}" in torch[0]
    assert "--index-url https://download.pytorch.org/whl/cpu" in torch[0]
    # torch is in place before the packages whose dependencies would pull another build.
    assert runs.index(torch[0]) < next(i for i, run in enumerate(runs) if "./cli" in run)


def test_the_image_runs_the_models_export_without_pytorch(stages: list[Stage]) -> None:
    """The export is made in the builder, where PyTorch is, into the environment the runtime
    copies; PyTorch then leaves it, and the runtime looks for the export there."""
    builder, runtime = stages[0], stages[-1]
    export_dir = _env(builder)["COGRAPH_EMBEDDING__EXPORT_DIR"]
    assert _env(runtime)["COGRAPH_EMBEDDING__EXPORT_DIR"] == export_dir
    assert export_dir.startswith("/opt/cograph/"), "inside what the runtime copies from the builder"
    assert "--from=builder /opt/cograph /opt/cograph" in runtime.all("COPY")
    assert "COGRAPH_EMBEDDING__RUNTIME" not in _env(runtime), "the default, openvino, runs the export"
    runs = builder.all("RUN")
    install = next(i for i, run in enumerate(runs) if "./cli" in run)
    [prepare] = [run for run in runs[install + 1 :] if "cograph prepare" in run]
    uninstall = prepare[prepare.index("cograph prepare") :]
    assert re.search(r"pip uninstall --yes torch\b", uninstall), "PyTorch leaves after the export is made"


def test_the_runtime_runs_cograph_as_uid_10001(stages: list[Stage]) -> None:
    runtime = stages[-1]
    users = runtime.all("USER")
    assert users, "the runtime stage must drop root"
    user, _, group = users[-1].partition(":")
    # Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
    assert user == str(UID)
    assert group in ("", str(UID))
    keywords = [i.keyword for i in runtime.instructions]
    assert keywords.index("USER") > max(i for i, k in enumerate(keywords) if k == "RUN")
    entrypoint: Any = json.loads(runtime.all("ENTRYPOINT")[-1])
    assert entrypoint == ["cograph"], "exec form, so cograph is PID 1 and receives SIGTERM"
    # Kubernetes probes each process on its own ports; an image-wide check is switched off on purpose.
    assert runtime.all("HEALTHCHECK") == ["NONE"]


SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|CREDENTIAL|DSN|PRIVATE", re.IGNORECASE)


def test_no_secret_goes_into_the_image(stages: list[Stage]) -> None:
    args, _ = _stages(DOCKERFILE.read_text())
    for stage in stages:
        names = set(_env(stage)) | {a.partition("=")[0] for a in stage.all("ARG")}
        assert not {name for name in names if SECRET_NAME.search(name)}, stage.name
        for copy in stage.all("COPY") + stage.all("ADD"):
            assert not re.search(r"\.env\b|\.pem\b|\.key\b|secret", copy, re.IGNORECASE), copy
    assert not {name for name in args if SECRET_NAME.search(name)}
    assert not [stage for stage in stages if stage.all("ADD")], "ADD fetches and unpacks; COPY is enough"


def _ignored(path: str, patterns: list[str]) -> bool:
    """.dockerignore matching, enough for the patterns we write (no `!` exceptions)."""
    return any(
        fnmatch.fnmatch(path, pattern)
        or fnmatch.fnmatch(path, pattern.removeprefix("**/"))
        or any(fnmatch.fnmatch(part, pattern.removeprefix("**/")) for part in Path(path).parts)
        for pattern in patterns
    )


def test_the_build_context_holds_what_the_build_copies_and_nothing_private(stages: list[Stage]) -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not [p for p in patterns if p.startswith("!")]
    for private in (".git", ".venv", ".cograph", ".env", "tests"):
        assert _ignored(private, patterns), private
    for copy in stages[0].all("COPY"):
        *sources, _ = shlex.split(copy)
        for source in sources:
            assert (ROOT / source).exists(), source
            assert not _ignored(source.rstrip("/"), patterns), f"{source} is copied but ignored"
    # Every package the build installs is in the context, its sources included.
    for pyproject in [*ROOT.glob("libs/*/pyproject.toml"), *ROOT.glob("services/*/pyproject.toml")]:
        package = pyproject.parent.relative_to(ROOT)
        assert not _ignored(str(package), patterns)
        for module in (pyproject.parent / "src").rglob("*.py"):
            assert not _ignored(str(module.relative_to(ROOT)), patterns), module


def test_the_image_matches_the_manifests(stages: list[Stage]) -> None:
    """The uid, the writable paths and the ports the manifests assume are the image's."""
    runtime = stages[-1]
    env = _env(runtime)
    exposed = {int(port) for arguments in runtime.all("EXPOSE") for port in arguments.split()}
    seen_ports: set[int] = set()
    for path in BASE.glob("*.yaml"):
        for obj in yaml.safe_load_all(path.read_text()):
            if not obj or obj["kind"] not in ("Deployment", "Job"):
                continue
            spec = obj["spec"]["template"]["spec"]
            assert spec["securityContext"]["runAsUser"] == UID
            for container in spec["containers"]:
                assert container["command"] == [json.loads(runtime.all("ENTRYPOINT")[-1])[0]]
                seen_ports |= {port["containerPort"] for port in container.get("ports", [])}
                mounts = {mount["mountPath"] for mount in container.get("volumeMounts", [])}
                assert "/tmp" in mounts
                if "model-cache" in {mount["name"] for mount in container.get("volumeMounts", [])}:
                    assert env["XDG_CACHE_HOME"] in mounts
                    assert env["HF_HOME"].startswith(env["XDG_CACHE_HOME"] + "/")
    assert seen_ports == exposed
