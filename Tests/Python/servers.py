"""The processes the Python tests start: the fake Met (met-fixture-server), themet in front of it,
an HTTPS stand-in for the Met's image host, and a headless Chromium driven by Selenium. All bind
127.0.0.1 port 0 and read their port back; every one is stopped by its owner's `stop`."""

import http.server
import json
import os
import re
import shutil
import ssl
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


class ImageHost:
    """An HTTPS stand-in for images.metmuseum.org (the browser maps the host here and accepts the
    self-signed certificate): every GET answers an SVG that names the file asked for, so pages
    show pictures offline and no image load fails. Counts the paths asked for."""

    def __init__(self):
        directory = Path(tempfile.mkdtemp(prefix="image-host-", dir=WORK))
        certificate, key = directory / "cert.pem", directory / "key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
             "/CN=images.metmuseum.org", "-keyout", key, "-out", certificate],
            check=True, capture_output=True)
        host = self
        self.paths = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                host.paths.append(self.path)
                name = self.path.rsplit("/", 1)[-1][:40]
                hue = sum(name.encode()) * 37 % 360
                body = (
                    '<svg xmlns="http://www.w3.org/2000/svg" width="480" height="600" viewBox="0 0 480 600">'
                    f'<rect width="480" height="600" fill="hsl({hue},45%,62%)"/>'
                    f'<circle cx="240" cy="250" r="120" fill="hsl({(hue + 150) % 360},50%,40%)"/>'
                    f'<text x="240" y="520" font-family="sans-serif" font-size="30" text-anchor="middle" '
                    f'fill="#fff">{name}</text></svg>').encode()
                self.send_response(200)
                self.send_header("Content-Type", "image/svg+xml")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "max-age=432000")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def browser(image_host=None, width=1280, height=1000):
    """A headless Chromium (Debian's, with its chromedriver) whose console log is kept, with the
    Met's image host mapped to `image_host` (when given)."""
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
    if image_host:
        options.add_argument(
            f"--host-resolver-rules=MAP images.metmuseum.org 127.0.0.1:{image_host.port}, EXCLUDE 127.0.0.1")
        options.add_argument("--ignore-certificate-errors")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


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
