"""Starting the fake Met (met-fixture-server), themet and redis-server, and waiting until they answer.

themet and met-fixture-server bind port 0 and announce the port the kernel gave them; redis-server
listens on a Unix socket in the run's temporary directory and on no TCP port at all."""

import http.client
import re
import shutil
import socket
import time
from collections.abc import Iterable
from pathlib import Path

from . import BenchmarkError
from .http_client import http_get
from .processes import Child, Supervisor
from .workload import HOST, LOOPS, PICTURE_ID, REPO, SYNTHETIC_IDS

THEMET_FLAGS = [
    "--log-level", "warning", "--loops", str(LOOPS), "--cache-size", "1GiB",
    # The default pacing (1 request/s, for the real Met's firewall) would measure the pacer.
    "--upstream-rate", "10000", "--upstream-burst", "1000", "--upstream-concurrency", "64",
]
# The image host's pacing likewise; left out for a baseline build older than the pictures.
IMAGE_FLAGS = ["--image-rate", "10000", "--image-burst", "1000", "--image-concurrency", "64"]
REDIS_SERVER = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")
START_TIMEOUT_SECONDS = 15


def listening_port(child: Child) -> int:
    """The port from the child's first stdout line, "listening on http://127.0.0.1:PORT", read every
    millisecond (the start-up steps time launch to first answer, this wait included)."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        match = re.search(rf"listening on http://{re.escape(HOST)}:(\d+)", child.stdout.read_text())
        if match:
            return int(match.group(1))
        if child.popen.poll() is not None:
            raise BenchmarkError(f"{child.name} exited ({child.popen.returncode}) before listening\n{child.tail()}")
        time.sleep(0.001)
    raise BenchmarkError(f"{child.name} printed no 'listening on' line in {START_TIMEOUT_SECONDS} s\n{child.tail()}")


def wait_until_healthy(child: Child, port: int, path: str = "/health") -> float:
    """Polls GET `path` every millisecond until it answers 200; returns when that happened."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if child.popen.poll() is not None:
            raise BenchmarkError(f"{child.name} exited ({child.popen.returncode}) while starting\n{child.tail()}")
        try:
            if http_get(port, path, timeout=1)[0] == 200:
                return time.monotonic()
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.001)
    raise BenchmarkError(f"{child.name} did not answer GET {path} in {START_TIMEOUT_SECONDS} s\n{child.tail()}")


def fixture_tree(supervisor: Supervisor) -> Path:
    """A fixture tree with departments.json (the fake requires it) and one real record above the
    synthetic ids, PICTURE_ID, for its pictures: every object the other workloads ask for is
    synthetic.

    The repository's Fixtures/ also has real records for a few ids below 100,000 (1, 1027, ...),
    which would make those objects differ in size from the rest."""
    tree = supervisor.path("fixtures")
    v1 = tree / "public/collection/v1"
    (v1 / "objects").mkdir(parents=True)
    shutil.copy(REPO / "Fixtures/public/collection/v1/departments.json", v1)
    shutil.copy(REPO / f"Fixtures/public/collection/v1/objects/{PICTURE_ID}.json", v1 / "objects")
    return tree


def start_fake(supervisor: Supervisor, bins: Path, fixtures: Path, latency_ms: int = 0,
               synthetic: int = SYNTHETIC_IDS) -> int:
    """Starts a met-fixture-server serving `synthetic` records; returns its port."""
    argv = [str(bins / "met-fixture-server"), "--port", "0", "--fixtures", str(fixtures),
            "--synthetic", str(synthetic)]
    if latency_ms:
        argv += ["--latency", str(latency_ms)]
    name = f"fake-{latency_ms}ms" if latency_ms else "fake" if synthetic == SYNTHETIC_IDS else f"fake-{synthetic}"
    return listening_port(supervisor.start(name, argv))


def launch_themet(supervisor: Supervisor, bins: Path, upstream_port: int, data: Path | None = None,
                  extra: Iterable[str] = (), images: bool = True) -> tuple[Child, int]:
    """Starts `themet serve` on port 0 with a fresh data directory (or `data`); returns it and the
    port it announced, without waiting for /health. `extra` flags come last, so they override
    THEMET_FLAGS; `images` False leaves out IMAGE_FLAGS (a build without pictures)."""
    data = data or supervisor.path(f"themet-data-{len(supervisor.children):02d}")
    argv = [str(bins / "themet"), "serve", "--port", "0", "--upstream", f"http://{HOST}:{upstream_port}",
            "--data-dir", str(data), *THEMET_FLAGS, *(IMAGE_FLAGS if images else []), *extra]
    child = supervisor.start("themet", argv)
    child.data = data
    return child, listening_port(child)


def start_themet(supervisor: Supervisor, bins: Path, upstream_port: int, data: Path | None = None,
                 extra: Iterable[str] = (), images: bool = True) -> tuple[Child, int]:
    """Starts themet on a port it picks; returns it and its port once it answers /health."""
    child, port = launch_themet(supervisor, bins, upstream_port, data=data, extra=extra, images=images)
    wait_until_healthy(child, port)
    return child, port


def start_redis(supervisor: Supervisor) -> Path:
    """A redis-server on a Unix socket, no persistence; returns the socket's path once it answers.

    redis-server cannot pick a TCP port and say which (`--port 0` turns TCP off), and themet's
    --redis takes unix:///path, so the socket sits in the run's directory: no port to find."""
    directory = supervisor.path("redis")
    path = directory / "redis.sock"
    supervisor.start("redis", [REDIS_SERVER, "--port", "0", "--unixsocket", str(path), "--unixsocketperm", "700",
                               "--save", "", "--appendonly", "no", "--dir", str(directory)])
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX) as connection:
                connection.settimeout(1)
                connection.connect(str(path))
                connection.sendall(b"PING\r\n")
                if connection.recv(16).startswith(b"+PONG"):
                    return path
        except OSError:
            time.sleep(0.02)
    raise BenchmarkError(f"redis-server on {path} did not answer PING")
