"""CORS as a browser enforces it: themet started with a list of origins in `--cors-origin`, and
pages from four small local web servers (http.server on 127.0.0.1, ports chosen by the OS) in a
headless Chromium (Debian's, through Selenium). Each page fetches an object (a simple request)
and a search page with `If-None-Match` (not a CORS-safelisted request header, so the browser
sends a preflight first) from themet, and writes what it could read into the DOM.

The listed origins are `http://127.0.0.1:A` and `http://localhost:B` (different hosts, so
different origins and sites), and `http://127.0.0.1:D`, of A's site, for the browser's shared
HTTP cache; `http://127.0.0.1:C` is not on the list, and the browser must refuse it both answers
(fetch rejects with a TypeError). From the listed ones the page must read the body and the
fields themet exposes (ETag, Age, Cache-Status, Link, X-Request-Id), and nothing else beyond the
CORS-safelisted ones. themet's access log (JSON lines) says which requests reached it, the
preflights included, which the page cannot see."""

import datetime
import http.server
import json
import threading
import time
import unittest

from servers import Servers, browser, fetch, wait_until

UNPACED = ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64"]
# The response fields a page may always read (Fetch: CORS-safelisted response-header names).
SAFELISTED = {"cache-control", "content-language", "content-length", "content-type", "expires", "last-modified",
              "pragma"}
PAGE = b"""<!doctype html>
<html lang="en"><meta charset="utf-8"><title>CORS probe</title>
<pre id="result"></pre>
<script>
const api = new URLSearchParams(location.search).get("api");
const fields = ["ETag", "Age", "Cache-Status", "Link", "X-Request-Id", "Content-Type", "Date", "Vary",
                "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"];
async function ask(path, init) {
  try {
    const response = await fetch(api + path, init);
    const headers = {};
    for (const name of fields) headers[name] = response.headers.get(name);
    const body = await response.json();
    return {ok: true, status: response.status, headers, names: [...response.headers.keys()],
            body: {objectID: body.objectID, title: body.title, total: body.total,
                   ids: (body.objects || []).map((o) => o.objectID)}};
  } catch (error) {
    return {ok: false, error: error.name, message: String(error.message)};
  }
}
(async () => {
  const result = {origin: location.origin};
  result.object = await ask("/objects/436535");
  result.search = await ask("/search?q=cypress&limit=1", {headers: {"If-None-Match": '"x"'}});
  const out = document.getElementById("result");
  out.textContent = JSON.stringify(result);
  out.dataset.done = "true";
})();
</script>
</html>
"""


class PageServer:
    """A local web server on 127.0.0.1 (port from the OS) that answers PAGE to every GET, in a
    thread of this process; `origin` is how the browser is sent to it."""

    def __init__(self, host):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = PAGE if self.path == "/" or self.path.startswith("/?") else b""
                self.send_response(200 if body else 204)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://{host}:{self.server.server_address[1]}"
        # A short poll, so that `stop` (which waits for the loop to notice) is quick.
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class CorsBrowserTests(unittest.TestCase):
    """Four page servers and one themet (with its access log on) for the class; a browser of
    its own for each test, so that no test finds another's answers in the browser's HTTP cache
    or its preflight cache."""

    @classmethod
    def setUpClass(cls):
        cls.pages = []
        cls.servers = None
        try:
            cls.first, cls.second, cls.neighbour, cls.stranger = (
                PageServer("127.0.0.1"), PageServer("localhost"), PageServer("127.0.0.1"), PageServer("127.0.0.1"))
            cls.pages = [cls.first, cls.second, cls.neighbour, cls.stranger]
            listed = ",".join(page.origin for page in (cls.first, cls.second, cls.neighbour))
            cls.servers = Servers(themet=UNPACED + ["--cors-origin", listed, "--log-level", "info",
                                                    "--log-format", "json"])
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.servers:
            cls.servers.stop()
        for page in cls.pages:
            page.stop()

    def setUp(self):
        self.driver = browser()
        self.addCleanup(self.driver.quit)
        # The access log's times are when each request was read, in UTC to the millisecond.
        self.started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def probe(self, page):
        """Opens the probe page from `page`'s origin and waits (20 s at most) for what its
        fetches from themet could read; also returns the console's SEVERE entries."""
        self.driver.get("about:blank")
        self.driver.get_log("browser")  # what an earlier page left
        self.driver.get(f"{page.origin}/?api={self.servers.url}")
        text = wait_until(lambda: self.driver.execute_script(
            "const r = document.getElementById('result'); return r && r.dataset.done && r.textContent"),
            message=f"the page from {page.origin} never finished")
        result = json.loads(text)
        self.assertEqual(result["origin"], page.origin)
        errors = [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]
        return result, errors

    def access_log(self):
        """The access lines themet has logged for requests read since the test began, in the
        order they were read (the loops hand their lines over in batches, so the file's order
        is not the requests')."""
        entries = []
        for line in self.servers.themet.standard_error().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line, still being written
            if entry.get("type") == "access" and entry["time"] >= self.started:
                entries.append(entry)
        return sorted(entries, key=lambda entry: entry["time"])

    def logged_since_setup(self, count, message):
        """(method, target, status) of the requests themet logged since the test began, once
        there are `count` (5 s at most: lines are handed over within 200 ms)."""
        def since():
            return [(entry["method"], entry["target"], str(entry["status"])) for entry in self.access_log()]
        try:
            return wait_until(lambda: len(since()) >= count and since(), timeout=5)
        except AssertionError:
            raise AssertionError(f"{message}: {since()}") from None

    def assertReadable(self, answer):
        """A listed origin's answer: a 200 whose body and exposed fields the page can read."""
        self.assertTrue(answer["ok"], answer)
        self.assertEqual(answer["status"], 200)
        headers = answer["headers"]
        self.assertRegex(headers["ETag"] or "", r'^"[0-9a-f]+-[0-9a-f]+(-gzip)?"$')
        self.assertRegex(headers["Age"] or "", r"^\d+$")
        self.assertRegex(headers["Cache-Status"] or "", r"^TheMet; ")
        self.assertEqual(headers["Content-Type"], "application/json; charset=utf-8")
        # Fields neither exposed nor safelisted stay hidden from the page (the CORS fields
        # themselves too): what it reads, it reads through CORS.
        for name in ("Date", "Vary", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"):
            self.assertIsNone(headers[name], name)
        self.assertRegex(headers["X-Request-Id"] or "", r"^[0-9a-f]{16}$")
        exposed = {"etag", "age", "cache-status", "retry-after", "link", "x-request-id"}
        self.assertLessEqual(set(answer["names"]), SAFELISTED | exposed, answer["names"])

    def test_both_listed_origins_read_the_answers_and_the_exposed_fields(self):
        """From `http://127.0.0.1:A` and `http://localhost:B`: the object and, after a
        preflight, the search page, with ETag, Age, Cache-Status and the next page's Link."""
        read_answers = []
        for page in (self.first, self.second):
            with self.subTest(origin=page.origin):
                result, errors = self.probe(page)
                read_answers += [result["object"], result["search"]]
                self.assertEqual(errors, [], "the browser's console has errors")
                self.assertReadable(result["object"])
                self.assertEqual(result["object"]["body"]["title"], "Wheat Field with Cypresses")
                self.assertReadable(result["search"])
                self.assertEqual(result["search"]["body"]["total"], 2)
                self.assertEqual(result["search"]["body"]["ids"], [436535])
                self.assertEqual(result["search"]["headers"]["Link"],
                                 '</search?q=cypress&offset=1&limit=1>; rel="next"')
        # Each origin's search came after a preflight of its own, which themet answered.
        logged = self.logged_since_setup(6, "not every request reached themet")
        self.assertEqual(sorted(logged), sorted(2 * [("GET", "/objects/436535", "200"),
                                                     ("OPTIONS", "/search?q=cypress&limit=1", "204"),
                                                     ("GET", "/search?q=cypress&limit=1", "200")]))
        # The request IDs the pages read are those themet logged for their GETs.
        read = {result["headers"]["X-Request-Id"] for result in read_answers}
        logged_ids = {entry["requestId"] for entry in self.access_log() if entry["method"] == "GET"}
        self.assertEqual(read, logged_ids)
        # What made the browser accept them: each origin's own name echoed, varying by Origin.
        for page in (self.first, self.second):
            _, headers, _ = fetch(self.servers.url + "/objects/436535", {"Origin": page.origin})
            self.assertEqual(headers["Access-Control-Allow-Origin"], page.origin)
            self.assertIn("Origin", headers["Vary"])

    def test_an_origin_not_on_the_list_is_refused(self):
        """From `http://127.0.0.1:C`: both fetches reject with a TypeError (the browser's
        network error), and the console says the CORS policy blocked them; themet answered the
        object and the preflight but gave that origin no permission, so the search itself was
        never sent."""
        result, errors = self.probe(self.stranger)
        for name in ("object", "search"):
            with self.subTest(name):
                self.assertFalse(result[name]["ok"], result[name])
                self.assertEqual(result[name]["error"], "TypeError")
        blocked = [error for error in errors if "blocked by CORS policy" in error]
        self.assertEqual(len(blocked), 2, errors)
        for error in blocked:
            self.assertIn(f"from origin '{self.stranger.origin}'", error)
        self.logged_since_setup(2, "themet did not answer the stranger's requests")
        time.sleep(0.5)  # a search sent after the refused preflight would be logged by now
        self.assertEqual(sorted(self.logged_since_setup(2, "")),
                         [("GET", "/objects/436535", "200"), ("OPTIONS", "/search?q=cypress&limit=1", "204")])
        _, headers, _ = fetch(self.servers.url + "/objects/436535", {"Origin": self.stranger.origin})
        self.assertIsNone(headers["Access-Control-Allow-Origin"])

    def test_origins_of_one_site_share_the_browsers_cache_but_not_their_permission(self):
        """127.0.0.1:A, 127.0.0.1:D (both listed) and 127.0.0.1:C (not) are one site, so they
        share the browser's HTTP cache. A's answer is stored varying by Origin, so D's fetch of
        the same URL revalidates it with its ETag and reads it with the 304's headers merged in:
        themet's 304 must carry D's own permission, or the page is refused. C's fetch
        revalidates it too, and its 304 carries no permission, so C is still refused."""
        result, errors = self.probe(self.first)
        self.assertEqual(errors, [], "the browser's console has errors")
        self.assertReadable(result["object"])
        result, errors = self.probe(self.neighbour)
        self.assertEqual(errors, [], "the browser's console has errors")
        self.assertReadable(result["object"])
        self.assertEqual(result["object"]["body"]["title"], "Wheat Field with Cypresses")
        refused, errors = self.probe(self.stranger)
        self.assertFalse(refused["object"]["ok"])
        self.assertEqual(refused["object"]["error"], "TypeError")
        self.assertTrue(any(f"from origin '{self.stranger.origin}'" in error for error in errors), errors)
        logged = self.logged_since_setup(8, "not every request reached themet")
        self.assertEqual([entry for entry in logged if entry[1] == "/objects/436535"],
                         [("GET", "/objects/436535", "200"), ("GET", "/objects/436535", "304"),
                          ("GET", "/objects/436535", "304")])


if __name__ == "__main__":
    unittest.main()
