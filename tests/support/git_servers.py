"""Real git servers on loopback for credential tests: `git http-backend` behind a small HTTP server
that wants a token (Basic auth), and an `sshd` that takes one test key."""

from __future__ import annotations

import base64
import contextlib
import getpass
import hmac
import http.server
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from support.cograph_process import free_port

SSHD = shutil.which("sshd") or next(
    (path for path in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.access(path, os.X_OK)), None
)


@dataclass
class TokenGitServer:
    """Serves the bare repositories under `root` over smart HTTP to whoever gives `token` (any user
    name): anything else gets a 401 asking for Basic credentials."""

    root: Path
    token: str
    port: int = 0
    refused: list[str] = field(default_factory=list)
    """The Authorization headers refused, as sent (empty when none was)."""

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"


def _handler(server: TokenGitServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            given = self.headers.get("Authorization", "")
            if not self._authorized(given):
                server.refused.append(given)
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GIT_PROJECT_ROOT": str(server.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "REMOTE_USER": "git",
                "REMOTE_ADDR": "127.0.0.1",
            }
            done = subprocess.run(
                ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60, check=False
            )
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers: list[tuple[str, str]] = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _authorized(self, given: str) -> bool:
            scheme, _, encoded = given.partition(" ")
            if scheme != "Basic":
                return False
            try:
                _, _, password = base64.b64decode(encoded).decode().partition(":")
            except ValueError:
                return False
            return hmac.compare_digest(password, server.token)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextlib.contextmanager
def token_git_server(root: Path, token: str) -> Iterator[TokenGitServer]:
    """A TokenGitServer listening on a loopback port until the block ends; its token may be changed
    while it runs (a rotation)."""
    server = TokenGitServer(root, token)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def bare_clone(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", "--bare", str(source), str(target)], check=True)
    return target


def keygen(path: Path) -> tuple[str, str]:
    """A new ed25519 key pair at `path`: (private key, public key line)."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cograph-test", "-f", str(path)], check=True
    )
    return path.read_text(), path.with_suffix(".pub").read_text().strip()


@dataclass
class Sshd:
    port: int
    user: str
    host_key: str
    """The host's public key line (type and base64), for known_hosts."""

    def url(self, path: Path) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{path}"

    def known_hosts(self, key: str | None = None) -> str:
        """A known_hosts line for this server, with its own key or `key`."""
        return f"[127.0.0.1]:{self.port} {key or self.host_key}"


@contextlib.contextmanager
def sshd(directory: Path, authorized_key: str) -> Iterator[Sshd]:
    """An sshd on a loopback port that lets this user in with `authorized_key` only (no password,
    no other key), stopped when the block ends."""
    assert SSHD is not None, "sshd is not installed"
    directory.mkdir(parents=True, exist_ok=True)
    _, host_key = keygen(directory / "host_key")
    (directory / "authorized_keys").write_text(authorized_key + "\n")
    port = free_port()
    user = getpass.getuser()
    config = directory / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {directory / 'host_key'}",
                f"AuthorizedKeysFile {directory / 'authorized_keys'}",
                f"PidFile {directory / 'sshd.pid'}",
                f"AllowUsers {user}",
                "PermitRootLogin prohibit-password",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "LogLevel ERROR",
            ]
        )
        + "\n"
    )
    if os.geteuid() == 0:
        # sshd run by root checks for its privilege separation directory.
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    log = directory / "sshd.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert process.poll() is None, f"sshd exited: {log.read_text()}"
            assert time.monotonic() < deadline, "sshd did not listen within 10 s"
            time.sleep(0.05)
        yield Sshd(port, user, " ".join(host_key.split()[:2]))
    finally:
        process.terminate()
        process.wait(10)
