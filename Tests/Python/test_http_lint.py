"""themet's answers as HTTP linters see them: httplint (PyPI) reads each answer's head and body
off the wire, and REDbot (PyPI, which uses httplint's checks) fetches each URL itself and then
again with `Accept-Encoding: gzip` and with `If-None-Match`, to see how the server answers
those. Both run against themet in front of the fake Met (met-fixture-server) with the bundled
Fixtures, on loopback.

The answers: an object, a search (one page, and a first page of two with `Link: rel="next"`),
the widget timeline, a deep link (302), the department list, an object the Met does not have
(a cached 404) and a malformed ID (400); each asked as GET, GET with gzip, HEAD, and where it
has an ETag, again with it in `If-None-Match`; a CORS preflight too. Everything is asked twice:
once as it comes from the Met, and again a second later, from the cache, with `Age` > 0 (the
server's `Date` is when it fetched from the Met, and `Age` counts from it).

Any note at WARN or BAD fails, except those in ALLOWED, each of which says why it is no fault."""

import concurrent.futures
import email.utils
import json
import re
import socket
import subprocess
import sys
import time
import unittest
from dataclasses import dataclass, field

from httplint import HttpRequestLinter, HttpResponseLinter
from thor.http.common import Delimiters, HttpMessageHandler, States, no_body_status

from servers import Servers

UNPACED = ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64"]
OBJECT = "/objects/436535"
SEARCH = "/search?q=cypress"
# Two hits at one a page: the first page has a next one, so it carries `Link`.
PAGED_SEARCH = "/search?q=cypress&limit=1"
TIMELINE = "/widget/timeline"
DEEP_LINK = "/open/436535"
DEPARTMENTS = "/departments"
NOT_FOUND = "/objects/999999999"
BAD_ID = "/objects/abc"
# In the order asked: the object first, so that its first answer is a miss (a search fetches
# the records it lists), and the searches before the timeline, which shows their results.
STATUSES = {OBJECT: 200, SEARCH: 200, PAGED_SEARCH: 200, TIMELINE: 200, DEEP_LINK: 302, DEPARTMENTS: 200,
            NOT_FOUND: 404, BAD_ID: 400}
# Answers kept in the cache, so that the second round reads them from it.
CACHED = [OBJECT, SEARCH, PAGED_SEARCH, DEPARTMENTS, NOT_FOUND]
# Bodies of 1 KiB or more, which are kept gzipped too.
GZIPPED = [OBJECT, SEARCH, PAGED_SEARCH, DEPARTMENTS]
PROBLEM_LEVELS = ("WARN", "BAD")

# Notes at WARN or BAD that are no fault of the server: (tool, note, path) -> why.
ALLOWED = {
    # The test asks for /objects/abc to get a 400; httplint and REDbot warn about any 400
    # ("The server didn't understand the request"), which is what it is meant to say here.
    ("httplint", "STATUS_BAD_REQUEST", BAD_ID): "a 400 asked for on purpose",
    ("redbot", "STATUS_BAD_REQUEST", BAD_ID): "a 400 asked for on purpose",
}


@dataclass
class Exchange:
    """One request on a connection of its own, its answer as read off the wire, and what
    httplint said about it."""

    method: str
    path: str
    request_headers: list
    round: int
    started: float = 0.0
    raw_head: str = ""
    status: int = 0
    headers: list = field(default_factory=list)
    body: bytes = b""
    complete: bool = False
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def header(self, name):
        """The value of the field `name` (the first line of it), or None."""
        return next((value for key, value in self.headers if key.lower() == name.lower()), None)

    def label(self):
        extra = "".join(f" [{name}: {value}]" for name, value in self.request_headers)
        return f"round {self.round}: {self.method} {self.path}{extra}"


class _ResponseReader(HttpMessageHandler):
    """thor's HTTP/1.1 message parser (the one httplint's command line uses), feeding one
    response into an httplint HttpResponseLinter tied to the request it answers."""

    default_state = States.WAITING

    def __init__(self, exchange, request_linter):
        self.exchange = exchange
        self.request_linter = request_linter
        self.linter = None
        HttpMessageHandler.__init__(self)

    def input_start(self, top_line, hdr_tuples, conn_tokens, transfer_codes, content_length):
        version, status, *phrase = top_line.split(None, 2)
        self.linter = HttpResponseLinter(start_time=self.exchange.started, _related=self.request_linter)
        self.linter.is_head_response = self.exchange.method == "HEAD"
        self.linter.process_response_topline(version.split(b"/", 1)[1], status, phrase[0] if phrase else b"")
        self.linter.process_headers(hdr_tuples)
        self.exchange.status = int(status)
        self.exchange.headers = [(name.decode("latin-1"), value.decode("latin-1").strip(" \t"))
                                 for name, value in hdr_tuples]
        final = not status.startswith(b"1")
        return final and status not in no_body_status and self.exchange.method != "HEAD", final

    def input_body(self, chunk):
        self.exchange.body += chunk
        self.linter.feed_content(chunk)

    def input_end(self, trailers):
        self.linter.finish_content(True, trailers)
        self.exchange.complete = True

    def input_error(self, err, close=True):
        self.exchange.errors.append(f"{err.desc}: {err.detail}")

    def input_extra_data(self, data):
        self.exchange.errors.append(f"bytes after the response: {data[:60]!r}")

    def output(self, data):
        pass

    def output_done(self):
        pass


def exchange(url, method, path, headers=(), round_=1):
    """Sends one request (`Connection: close`) to `url`, reads the answer to the end within
    10 s, and lints it with httplint as an answer to that request, received now."""
    host, port = url.split("//", 1)[1].split(":")
    fields = [("Host", f"{host}:{port}"), ("User-Agent", "themet-http-lint-test"), *headers, ("Connection", "close")]
    result = Exchange(method, path, list(headers), round_)
    request_linter = HttpRequestLinter()
    request_linter.process_request_topline(method.encode(), path.encode(), b"1.1")
    request_linter.process_headers([(name.encode(), value.encode()) for name, value in fields])
    request_linter.finish_content(True)
    raw = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in fields) + "\r\n"
    result.started = time.time()
    data = b""
    deadline = time.monotonic() + 10
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(raw.encode())
        while time.monotonic() < deadline and len(data) < 4 << 20:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    result.raw_head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    reader = _ResponseReader(result, request_linter)
    reader.handle_input(data)
    if reader.linter is None:
        result.errors.append(f"no response: {data[:200]!r}")
        return result
    if reader._input_delimit == Delimiters.CLOSE and reader._input_state == States.HEADERS_DONE:
        reader.input_end([])
    if not result.complete:
        result.errors.append("the response ended before its end")
    result.notes = [(note.__class__.__name__, note.level.name, str(note.summary)) for note in reader.linter.notes]
    return result


def redbot(url):
    """REDbot's command line on `url` (a literal IP: REDbot resolves names itself, without
    /etc/hosts), its HAR output parsed. REDbot exits 0 even when it could not fetch, so the
    caller checks the entries."""
    done = subprocess.run([sys.executable, "-m", "redbot.cli", "-o", "har", url],
                          capture_output=True, timeout=60, check=False)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"REDbot printed no HAR for {url}: {done.stdout[:300]!r} {done.stderr[-600:]!r}")


class HttpLintTests(unittest.TestCase):
    """All the exchanges are made once, in two rounds a second apart; the tests read them."""

    @classmethod
    def setUpClass(cls):
        cls.servers = Servers(themet=UNPACED)
        try:
            cls.exchanges = []
            cls.ask_everything(1)
            # The second round a second after the first one's last answer, so that every
            # cached answer is at least a second old (Age counts whole seconds).
            time.sleep(max(0.0, 1.05 - (time.time() - cls.exchanges[-1].started)))
            cls.ask_everything(2)
        except Exception:
            cls.servers.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    @classmethod
    def ask_everything(cls, round_):
        def ask(method, path, headers=()):
            cls.exchanges.append(exchange(cls.servers.url, method, path, headers, round_))
            return cls.exchanges[-1]

        for path in STATUSES:
            plain = ask("GET", path)
            gzipped = ask("GET", path, [("Accept-Encoding", "gzip")])
            ask("HEAD", path)
            for first, headers in ((plain, []), (gzipped, [("Accept-Encoding", "gzip")])):
                if first.header("ETag"):
                    ask("GET", path, headers + [("If-None-Match", first.header("ETag"))])
        ask("OPTIONS", OBJECT, [("Origin", "http://app.example"), ("Access-Control-Request-Method", "GET"),
                                ("Access-Control-Request-Headers", "if-none-match")])

    def find(self, round_, method, path, **headers):
        """The exchange of that round, method and path whose request had exactly `headers`
        (names with `_` for `-`)."""
        wanted = sorted((name.replace("_", "-").lower(), value) for name, value in headers.items())
        for candidate in self.exchanges:
            if (candidate.round, candidate.method, candidate.path) == (round_, method, path) and \
                    sorted((name.lower(), value) for name, value in candidate.request_headers) == wanted:
                return candidate
        self.fail(f"no exchange {round_} {method} {path} {headers}")

    # httplint

    def test_httplint_finds_nothing_wrong_with_any_answer(self):
        """Every answer, from the Met or from the cache, identity or gzip, GET, HEAD, 304 or
        preflight, reads cleanly off the wire and draws no note at WARN or BAD (but those in
        ALLOWED)."""
        self.assertGreater(len(self.exchanges), 50)
        problems = []
        for seen in self.exchanges:
            self.assertEqual(seen.errors, [], f"{seen.label()}:\n{seen.raw_head}")
            for note, level, summary in seen.notes:
                if level in PROBLEM_LEVELS and ("httplint", note, seen.path) not in ALLOWED:
                    problems.append(f"{seen.label()}: [{level}] {note}: {summary}\n{seen.raw_head}")
        self.assertEqual(problems, [], "\n\n".join(problems))

    def test_the_allowed_notes_are_the_ones_expected(self):
        """The allow-list is not stale: each httplint entry is a note httplint does give."""
        given = {("httplint", note, seen.path) for seen in self.exchanges for note, level, _ in seen.notes
                 if level in PROBLEM_LEVELS}
        for key in ALLOWED:
            if key[0] == "httplint":
                self.assertIn(key, given, f"{key} is allowed but never seen: drop it from ALLOWED")

    def test_the_answers_are_the_ones_the_lint_was_meant_to_see(self):
        """So that a clean lint means something: the statuses, the misses then the hits, gzip,
        304s, HEAD without a body, the next page's Link, and the fields the server now sends
        (Date, ETag, max-age without public, Vary: Accept-Encoding)."""
        for round_ in (1, 2):
            for path, status in STATUSES.items():
                with self.subTest(round=round_, path=path):
                    plain = self.find(round_, "GET", path)
                    self.assertEqual(plain.status, status, plain.raw_head)
                    self.assertTrue(plain.header("Date"))
                    head = self.find(round_, "HEAD", path)
                    self.assertEqual(head.status, status)
                    self.assertEqual(head.body, b"")
                    self.assertEqual(head.header("ETag"), plain.header("ETag"))
                    cache_control = plain.header("Cache-Control") or ""
                    self.assertNotIn("public", cache_control)
                    gzipped = self.find(round_, "GET", path, Accept_Encoding="gzip")
                    if path in GZIPPED:
                        self.assertEqual(gzipped.header("Content-Encoding"), "gzip")
                        self.assertEqual(gzipped.header("ETag"), plain.header("ETag")[:-1] + '-gzip"')
                        for answer in (plain, gzipped):
                            self.assertIn("Accept-Encoding", answer.header("Vary") or "")
                    else:
                        self.assertIsNone(gzipped.header("Content-Encoding"))
                    if path in CACHED:
                        self.assertRegex(cache_control, r"^max-age=\d+")
                        self.assertTrue(plain.header("ETag"))
                    if status == 200 and plain.header("ETag"):
                        revalidated = self.find(round_, "GET", path, If_None_Match=plain.header("ETag"))
                        self.assertEqual(revalidated.status, 304, revalidated.raw_head)
                        self.assertEqual(revalidated.header("ETag"), plain.header("ETag"))
                        self.assertTrue(revalidated.header("Date"))
                        self.assertEqual(re.sub(r"\d+", "N", revalidated.header("Cache-Control")),
                                         re.sub(r"\d+", "N", plain.header("Cache-Control")))
        first = self.find(1, "GET", OBJECT)
        self.assertIn("fwd=uri-miss", first.header("Cache-Status"))
        self.assertIn("; hit;", self.find(1, "GET", OBJECT, Accept_Encoding="gzip").header("Cache-Status"))
        self.assertEqual(self.find(1, "GET", PAGED_SEARCH).header("Link"),
                         '</search?q=cypress&offset=1&limit=1>; rel="next"')
        self.assertIsNone(self.find(1, "GET", SEARCH).header("Link"))
        self.assertEqual(self.find(1, "GET", DEEP_LINK).header("Location"), OBJECT)
        self.assertEqual(self.find(1, "GET", BAD_ID).header("Cache-Control"), "no-store")
        # The cached 404 has an ETag, and If-None-Match with it still gets the 404: RFC 9110
        # §13.2.1 has a server ignore preconditions when the answer would not be a 2xx.
        not_found = self.find(1, "GET", NOT_FOUND)
        self.assertTrue(not_found.header("ETag"))
        again = self.find(1, "GET", NOT_FOUND, If_None_Match=not_found.header("ETag"))
        self.assertEqual(again.status, 404)
        self.assertEqual(again.header("ETag"), not_found.header("ETag"))
        # Each problem document names its own request, so two answers under one ETag differ in
        # their bytes: the ETag may only be weak (a strong one promises the same bytes, and
        # REDbot's INM_DUP_ETAG_STRONG is BAD).
        first_problem, second_problem = json.loads(not_found.body), json.loads(again.body)
        if not_found.body != again.body:
            self.assertTrue(not_found.header("ETag").startswith("W/"), not_found.raw_head)
        self.assertEqual(first_problem.pop("requestId"), not_found.header("X-Request-Id"))
        self.assertEqual(second_problem.pop("requestId"), again.header("X-Request-Id"))
        self.assertEqual(first_problem, second_problem)
        # Every answer names its request.
        ids = [seen.header("X-Request-Id") for seen in self.exchanges]
        self.assertTrue(all(ids), [seen.label() for seen in self.exchanges if not seen.header("X-Request-Id")])
        self.assertEqual(len(set(ids)), len(ids), "request IDs repeat")
        preflight = next(seen for seen in self.exchanges if seen.method == "OPTIONS")
        self.assertEqual(preflight.status, 204)
        self.assertIn(("CORS_PREFLIGHT_RESPONSE", "INFO"), [(note, level) for note, level, _ in preflight.notes])

    def test_cached_answers_carry_their_age_from_the_fetch(self):
        """A second later the cached answers are hits with `Age` of a second or more, and
        `Date` (when the Met was asked) plus `Age` is now, which httplint holds as a correct
        clock and an answer already cached for that long; `max-age` stays the lifetime, so
        the freshness a cache downstream sees (`max-age` − `Age`) shrinks, and is still there."""
        for path in CACHED:
            with self.subTest(path=path):
                first, second = self.find(1, "GET", path), self.find(2, "GET", path)
                self.assertIn("hit", second.header("Cache-Status"))
                age = int(second.header("Age"))
                self.assertGreaterEqual(age, 1, second.raw_head)
                date = email.utils.parsedate_to_datetime(second.header("Date")).timestamp()
                self.assertLessEqual(abs(date + age - second.started), 2.0, second.raw_head)
                # The same Date as the first answer: the time of the fetch, not of the answer.
                self.assertEqual(second.header("Date"), first.header("Date"))
                notes = [note for note, _, _ in second.notes]
                self.assertIn("CURRENT_AGE", notes)
                self.assertIn("DATE_CORRECT", notes)
                # max-age is the lifetime from the fetch, the same on both; Age is what a cache
                # downstream takes off it (RFC 9111 §4.2), so the freshness it sees shrinks.
                max_age = int(re.match(r"max-age=(\d+)", second.header("Cache-Control")).group(1))
                self.assertEqual(max_age, int(re.match(r"max-age=(\d+)", first.header("Cache-Control")).group(1)))
                self.assertLess(max_age - age, max_age - int(first.header("Age")))
                self.assertIn("FRESHNESS_FRESH", notes)

    # REDbot

    def test_redbot_finds_nothing_wrong_and_sees_gzip_and_revalidation(self):
        """REDbot on each URL (from the cache by now): a HAR with one entry of the expected
        status, no note at WARN or BAD but those in ALLOWED, and for each answer with an ETag
        and a 200 a 304 on If-None-Match (INM_304); for the large ones, gzip (CONNEG_GZIP_GOOD)."""
        problems = []
        # Four REDbots at a time: each is a process of its own, mostly waiting.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            hars = dict(zip(STATUSES, pool.map(lambda path: redbot(self.servers.url + path), STATUSES)))
        for path, status in STATUSES.items():
            with self.subTest(path=path):
                har = hars[path]
                entries = har["log"]["entries"]
                self.assertEqual(len(entries), 1, f"REDbot could not fetch {path}: {json.dumps(har)[:500]}")
                [entry] = entries
                self.assertEqual(entry["response"]["status"], status)
                messages = entry["_red_messages"]
                ids = [message["note_id"] for message in messages]
                for message in messages:
                    key = ("redbot", message["note_id"], path)
                    if message["level"] in PROBLEM_LEVELS and key not in ALLOWED:
                        problems.append(f"{path}: [{message['level']}] {message['note_id']}: {message['summary']}")
                if status == 200:
                    self.assertIn("INM_304", ids)
                if path in GZIPPED:
                    self.assertIn("CONNEG_GZIP_GOOD", ids)
                if path in CACHED:
                    self.assertIn("CURRENT_AGE", ids)
                for key in ALLOWED:
                    if key[0] == "redbot" and key[2] == path:
                        self.assertIn(key[1], ids, f"{key} is allowed but never seen: drop it from ALLOWED")
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
