"""The processes the Python tests start: the fake Met (met-fixture-server, both of the Met's hosts),
themet in front of it, and a headless Chromium driven by Selenium. All bind
127.0.0.1 port 0 and read their port back; every one is stopped by its owner's `stop`."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("THEMET_BIN_DIR", ROOT / ".build" / "debug"))
# Where each run keeps its files (data directories, browser profiles); the runner removes it.
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
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(timeout) or "url" not in found:
            errors = self.standard_error()
            self.stop()
            raise RuntimeError(f"{' '.join(self.arguments)} did not start: {errors}")
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
        self.reader.join(5)  # it reads to the end of the output, which has come
        self.process.stdout.close()
        self.errors.close()


class Servers:
    """The fake Met with `fake` arguments over the fixture directory `fixtures`, and themet
    against it (over real HTTP, through its libcurl client, for the records and the pictures)
    with `themet` arguments and a data directory of its own."""

    def __init__(self, fake=(), themet=(), fixtures=ROOT / "Fixtures"):
        self.fake = Process([BIN_DIR / "met-fixture-server", "--port", "0", "--fixtures", fixtures, *fake])
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


def browser(width=1280, height=1000):
    """A headless Chromium (Debian's, with its chromedriver) whose console log is kept, and which
    resolves no name but 127.0.0.1 and localhost: a page that reached for another site (the Met's
    image host, say) fails to load it, and says so in the console."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="chromium-", dir=WORK)
    for argument in (
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        f"--window-size={width},{height}", f"--user-data-dir={profile}", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ):
        options.add_argument(argument)
    options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def wait_until(condition, timeout=20, interval=0.05, message="the condition never held"):
    """Polls `condition` until it returns something true (which is returned), for at most `timeout` s.
    `message` is the failure's text, or a function that makes it when the wait fails."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message() if callable(message) else message)
        time.sleep(interval)
