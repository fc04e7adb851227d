"""The IIIF Image API served by themet, checked by the IIIF community's own validator
(iiif-validator from PyPI: https://github.com/IIIF/image-validator) at level 2 of version 3.0.

The validator needs its test picture: 1,000 × 1,000 pixels of 10 × 10 squares whose colours it
knows (`ValidationInfo.colorInfo`). A stand-in upstream made here serves that picture, drawn from
the validator's own table, as object 1's primary image on the image host's paths, and the record
that names it; themet fetches both over HTTP with its curl client and derives every answer."""

import http.server
import io
import json
import subprocess
import sys
import threading
import unittest
from pathlib import Path

from PIL import Image, ImageDraw
from iiif_validator.validator import TestSuite, ValidationInfo

from servers import BIN_DIR, WORK, Process, fetch

PICTURE_PATH = "/CRDImages/ts/original/iiif-validator.png"
RECORD = json.dumps({
    "objectID": 1, "isPublicDomain": True, "title": "The IIIF validator's test picture",
    "primaryImage": "https://images.metmuseum.org" + PICTURE_PATH, "primaryImageSmall": "",
    "additionalImages": [],
}).encode()
# Tests of the validator that this server does not pass, for reasons of the validator's:
# - size_noup asks `!2000,3000` of the 1,000 px picture without `^` and expects a 400, where the
#   specification (§4.2) says `!w,h` gives the largest size "not larger than the extracted region,
#   w or h": 1,000 × 1,000, which this server answers (its other cases, 400s, are checked below);
# - size_up asks `^1204,1204` and expects it, where this service's info.json says `maxWidth`
#   1,000: nothing larger than the picture is made;
# - format_webp calls `urllib.urlopen`, which Python 3 has not.
SKIPPED = {"size_noup", "size_up", "format_webp"}
# Level-3 tests of features this server offers: mirroring and the Link header.
EXTRA = {"rot_mirror", "rot_mirror_180", "linkheader_canonical", "linkheader_profile"}


def test_picture():
    picture = Image.new("RGB", (1000, 1000))
    draw = ImageDraw.Draw(picture)
    for x, column in enumerate(ValidationInfo().colorInfo):
        for y, colour in enumerate(column):
            draw.rectangle([x * 100, y * 100, x * 100 + 99, y * 100 + 99], fill=colour)
    data = io.BytesIO()
    picture.save(data, "PNG")
    return data.getvalue()


class Upstream:
    """The Met's API and image host in one: object 1's record and the validator's picture."""

    def __init__(self):
        bodies = {"/public/collection/v1/objects/1": (RECORD, "application/json"),
                  PICTURE_PATH: (test_picture(), "image/png")}
        self.paths = []
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                upstream.paths.append(self.path)
                body, content_type = bodies.get(self.path, (b"Not Found", "text/html"))
                self.send_response(200 if self.path in bodies else 404)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class IIIFImageValidatorTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = Upstream()
        data = Path(WORK) / "iiif-image-data"
        try:
            cls.themet = Process(
                [BIN_DIR / "themet", "serve", "--port", "0", "--upstream", cls.upstream.url, "--image-upstream",
                 cls.upstream.url, "--data-dir", data, "--log-level", "warning", "--upstream-rate", "1000",
                 "--upstream-burst", "1000", "--image-rate", "1000", "--image-burst", "1000"])
        except Exception:
            cls.upstream.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.themet.stop()
        cls.upstream.stop()

    def test_the_validator_passes_level_2_of_version_3(self):
        tests = TestSuite(ValidationInfo()).list_tests("3.0")
        names = sorted(name for name, test in tests.items() if test["level"] <= 2 and name not in SKIPPED)
        names += sorted(EXTRA)
        self.assertGreaterEqual(len(names), 34)
        command = [sys.executable, Path(sys.executable).parent / "iiif-validate.py", "--server",
                   self.themet.url.removeprefix("http://"), "--prefix", "iiif/1", "--identifier", "0",
                   "--version", "3.0"]
        for name in names:
            command += ["--test", name]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        report = run.stdout + run.stderr
        self.assertEqual(run.returncode, 0, report)
        self.assertIn(f"Done ({len(names)} tests, 0 failures)", report)
        # Every answer came from one fetch of the picture.
        self.assertEqual(self.upstream.paths.count(PICTURE_PATH), 1, self.upstream.paths)

    def test_sizes_larger_than_the_region_need_a_caret_and_confined_sizes_stop_at_it(self):
        for size in ("1500,1500", ",1500", "1500,", "pct:200"):
            with self.subTest(size=size):
                status, headers, body = fetch(f"{self.themet.url}/iiif/1/0/full/{size}/0/default.jpg")
                self.assertEqual(status, 400, body[:300])
                self.assertEqual(json.loads(body)["code"], "invalid_iiif_request")
        status, headers, body = fetch(f"{self.themet.url}/iiif/1/0/full/!2000,3000/0/default.png")
        self.assertEqual(status, 200)
        self.assertEqual(Image.open(io.BytesIO(body)).size, (1000, 1000))
        status, headers, body = fetch(f"{self.themet.url}/iiif/1/0/0,0,100,100/^!300,200/0/default.png")
        self.assertEqual(Image.open(io.BytesIO(body)).size, (200, 200))


if __name__ == "__main__":
    unittest.main()
