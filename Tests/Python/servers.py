"""The processes the Python tests start: the fake Met (met-fixture-server) and themet in front of
it. Both bind 127.0.0.1 port 0 and read their port back; both are stopped by `Servers.stop`."""

import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("THEMET_BIN_DIR", ROOT / ".build" / "debug"))
# Where each run keeps its files (data directories); the runner removes it.
WORK = Path(os.environ.get("THEMET_TEST_WORK") or tempfile.mkdtemp(prefix="themet-python-"))
LISTENING = re.compile(rb"listening on (http://127\.0\.0\.1:\d+)")


class Process:
    """A child process that prints `listening on http://127.0.0.1:PORT` once it serves."""

    def __init__(self, arguments, timeout=30):
        self.arguments = [str(argument) for argument in arguments]
        self.errors = tempfile.TemporaryFile(dir=WORK)
        self.process = subprocess.Popen(self.arguments, stdout=subprocess.PIPE, stderr=self.errors)
        found = {}

        def read():
            for line in self.process.stdout:
                match = LISTENING.search(line)
                if match and "url" not in found:
                    found["url"] = match.group(1).decode()
                    ready.set()
            ready.set()

        ready = threading.Event()
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout) or "url" not in found:
            self.stop()
            raise RuntimeError(f"{' '.join(self.arguments)} did not start: {self.standard_error()}")
        self.url = found["url"]

    def standard_error(self):
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Servers:
    """The fake Met with `fake` arguments, and themet against it (over real HTTP, through its
    libcurl client) with `themet` arguments and a data directory of its own."""

    def __init__(self, fake=(), themet=()):
        self.fake = Process(
            [BIN_DIR / "met-fixture-server", "--port", "0", "--fixtures", ROOT / "Fixtures", *fake])
        data = tempfile.mkdtemp(prefix="data-", dir=WORK)
        try:
            self.themet = Process(
                [BIN_DIR / "themet", "serve", "--port", "0", "--upstream", self.fake.url, "--data-dir", data,
                 "--log-level", "warning", *themet])
        except Exception:
            self.fake.stop()
            raise
        self.url = self.themet.url

    def get(self, path, headers=None):
        """GET `path` from themet without following redirects: (status, headers, body bytes)."""
        return fetch(self.url + path, headers)

    def stats(self):
        return json.loads(fetch(self.fake.url + "/__stats")[2])

    def stop(self):
        self.themet.stop()
        self.fake.stop()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def fetch(url, headers=None):
    """(status, headers, body) of a GET, redirects and errors included, within 60 s."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def wait_until(condition, timeout=20, interval=0.05, message="the condition never held"):
    """Polls `condition` until it returns something true (which is returned), for at most `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message)
        time.sleep(interval)
