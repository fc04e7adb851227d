"""Three third-party Met API clients from PyPI (met-api, themetpy and mets) pointed at themet's
Met-compatible mirror (http://127.0.0.1:PORT/public/collection/v1) in front of the fake Met
(met-fixture-server with the bundled Fixtures): each runs its search, object and department
calls (mets has no department call) without an error, and gets what the fake Met itself answers.

The mirror's promise is that a Met client needs only its base URL changed, and each client
speaks its own dialect of the Met's API: met-api sends `isHighlight=True`, repeated `medium=`
and `geoLocation=`, repeated `departmentIds=` and `YYYY-MM-DD` dates; themetpy sends `|` as
`%7C` and `q` last; mets sends an empty `q=` (with `hasImages=true`). The tests check that the
clients do send those (the URLs they sent are recorded), and that the mirror answers each as
the Met would: several `medium`/`geoLocation` joined with `|`, the union of several
`departmentIds`, `True` passed on as written (the Met ignores it), an empty `q` passed on.

The clients run in a venv of their own (met-api needs pydantic<2, iiif-prezi3 pydantic>=2),
through met_clients.py, in THEMET_CLIENTS_PYTHON (default .build/python-clients-venv/bin/python,
which make test-python installs from requirements-clients.txt)."""

import json
import os
import subprocess
import unittest
import urllib.parse
from pathlib import Path

from servers import ROOT, Servers, fetch

CLIENTS_PYTHON = Path(os.environ.get("THEMET_CLIENTS_PYTHON")
                      or ROOT / ".build" / "python-clients-venv" / "bin" / "python")
HELPER = Path(__file__).with_name("met_clients.py")
UNPACED = ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64"]
MIRROR = "/public/collection/v1"
WHEAT_FIELD = 436535
CYPRESSES = 437980
HIGHLIGHTS = [336228, 436535, 437056]  # every fixture record with isHighlight true


def call(client, name, *args, **kwargs):
    return {"client": client, "call": name, "args": list(args), "kwargs": kwargs}


class MetClientTests(unittest.TestCase):
    """One fake Met and one themet for the class: the clients only read."""

    @classmethod
    def setUpClass(cls):
        if not CLIENTS_PYTHON.exists():
            raise RuntimeError(f"{CLIENTS_PYTHON} is missing: make test-python makes that venv "
                               "from Tests/Python/requirements-clients.txt (or set THEMET_CLIENTS_PYTHON)")
        cls.servers = Servers(themet=UNPACED)

    @classmethod
    def tearDownClass(cls):
        cls.servers.stop()

    def run_clients(self, *calls):
        """Runs `calls` in the clients' Python against the mirror, within 60 s: for each, what
        it returned (`value`) or raised (`error`), and the URLs it sent (`sent`)."""
        program = json.dumps({"base": self.servers.url + MIRROR, "calls": list(calls)})
        done = subprocess.run([str(CLIENTS_PYTHON), str(HELPER)], input=program.encode(), capture_output=True,
                              timeout=60, check=False)
        self.assertEqual(done.returncode, 0, done.stderr.decode(errors="replace")[-2000:])
        results = json.loads(done.stdout)
        self.assertEqual(len(results), len(calls))
        return results

    def fake(self, path_and_query):
        """What the fake Met itself answers (JSON) on its path under /public/collection/v1."""
        status, _, body = fetch(self.servers.fake.url + MIRROR + path_and_query)
        return status, json.loads(body)

    def sent(self, result):
        """The one request a call sent: its path under the mirror and its query items, in order,
        as they were on the wire (undecoded)."""
        [url] = result["sent"]
        self.assertTrue(url.startswith(self.servers.url + MIRROR), url)
        parts = urllib.parse.urlsplit(url)
        items = [tuple(item.split("=", 1)) if "=" in item else (item, None)
                 for item in parts.query.split("&") if item]
        return parts.path[len(MIRROR):], items

    def assertSucceeded(self, result):
        self.assertIsNone(result["error"], result)
        return result["value"]

    def check_record(self, got, object_id):
        """The fields of a record a client returned are those of the fake's record."""
        status, record = self.fake(f"/objects/{object_id}")
        self.assertEqual(status, 200)
        for name in ("objectID", "title", "artistDisplayName", "primaryImage", "objectDate", "medium",
                     "department", "isPublicDomain"):
            self.assertEqual(got[name], record[name], name)

    # met-api

    def test_met_api_search_object_and_departments(self):
        """met-api's plain calls: a search, an object, the departments, and an object the Met
        does not have, which met-api turns into a ValueError on the 404."""
        search, record, departments, missing = self.run_clients(
            call("met_api", "search", "cypress"),
            call("met_api", "get_object", WHEAT_FIELD),
            call("met_api", "get_departments"),
            call("met_api", "get_object", 999999999))
        self.assertEqual(self.sent(search), ("/search", [("q", "cypress")]))
        self.assertEqual(self.assertSucceeded(search), self.fake("/search?q=cypress")[1])
        self.assertIn(WHEAT_FIELD, search["value"]["objectIDs"])
        self.assertEqual(self.assertSucceeded(record)["title"], "Wheat Field with Cypresses")
        self.check_record(record["value"], WHEAT_FIELD)
        self.assertEqual(self.sent(departments), ("/departments", []))
        expected = self.fake("/departments")[1]["departments"]
        # met-api's model reads departmentId as Union[str, int], and pydantic 1 makes it a str.
        self.assertEqual(self.assertSucceeded(departments)["departments"],
                         [{"departmentId": str(d["departmentId"]), "displayName": d["displayName"]}
                          for d in expected])
        self.assertEqual(missing["error"]["type"], "ValueError", missing)
        self.assertEqual(self.sent(missing), ("/objects/999999999", []))

    def test_met_api_repeated_filters_and_capitalised_flags(self):
        """met-api sends lists as repeated parameters and Python's `True`: the mirror joins
        several `medium` and `geoLocation` with `|`, passes `isHighlight=True` on as written
        (the Met ignores it, so non-highlights come back), takes the union of several
        `departmentIds`, and passes `YYYY-MM-DD` dates on (the Met finds nothing for them)."""
        filtered, empty_highlights, listed, dated = self.run_clients(
            call("met_api", "search", "a", is_highlight=True, medium=["Ceramics", "Prints"],
                 geo_location=["China", "Egypt"], has_images=True),
            call("met_api", "search", "", is_highlight=True),
            call("met_api", "get_objects", department_ids=[1, 3]),
            call("met_api", "search", "cypress", date_begin={"date": "1850-01-01"}, date_end={"date": "1900-01-01"}))

        self.assertEqual(self.sent(filtered), ("/search", [
            ("q", "a"), ("isHighlight", "True"), ("medium", "Ceramics"), ("medium", "Prints"),
            ("hasImages", "true"), ("geoLocation", "China"), ("geoLocation", "Egypt")]))
        expected = self.fake("/search?q=a&isHighlight=True&medium=Ceramics%7CPrints&hasImages=true"
                             "&geoLocation=China%7CEgypt")[1]
        self.assertEqual(self.assertSucceeded(filtered), expected)
        # Both media and both places count (Leaf…: Prints, China; Cover: Ceramics, China), and
        # the leaf is no highlight: `True` was not read as true.
        self.assertEqual(sorted(filtered["value"]["objectIDs"]), [47533, 63372])

        # An empty q with `isHighlight=True`: the Met reads it as `q=` alone, no hits.
        self.assertEqual(self.sent(empty_highlights), ("/search", [("q", ""), ("isHighlight", "True")]))
        self.assertEqual(self.assertSucceeded(empty_highlights), {"total": 0, "objectIDs": None})
        self.assertEqual(empty_highlights["value"], self.fake("/search?q=&isHighlight=True")[1])

        self.assertEqual(self.sent(listed), ("/objects", [("departmentIds", "1"), ("departmentIds", "3")]))
        union = self.fake("/objects?departmentIds=1%7C3")[1]
        self.assertEqual(self.assertSucceeded(listed), union)
        # Both departments: the American Wing's coin and brooch, and the Near Eastern seal.
        self.assertEqual(sorted(union["objectIDs"]), [1, 1027, 321412])

        self.assertIn(("dateBegin", "1850-01-01"), self.sent(dated)[1])
        self.assertEqual(self.assertSucceeded(dated),
                         self.fake("/search?q=cypress&dateBegin=1850-01-01&dateEnd=1900-01-01")[1])

    # themetpy

    def test_themetpy_search_object_and_departments(self):
        """themetpy's plain calls: the search's IDs, the record (its eight checked fields, and
        raw, byte for byte the fake's JSON), the departments, and ValueError for a 404."""
        search, record, raw, departments, missing = self.run_clients(
            call("themetpy", "search", "cypress"),
            call("themetpy", "get_object", WHEAT_FIELD),
            call("themetpy", "get_object", WHEAT_FIELD, raw=True),
            call("themetpy", "get_departments"),
            call("themetpy", "get_object", 999999999))
        self.assertEqual(self.sent(search), ("/search", [("q", "cypress")]))
        self.assertEqual(self.assertSucceeded(search), self.fake("/search?q=cypress")[1]["objectIDs"])
        self.assertEqual(search["value"], [WHEAT_FIELD, CYPRESSES])
        self.assertEqual(self.assertSucceeded(record)["title"], "Wheat Field with Cypresses")
        self.assertEqual(self.assertSucceeded(raw), self.fake(f"/objects/{WHEAT_FIELD}")[1])
        self.assertEqual(self.assertSucceeded(departments), self.fake("/departments")[1]["departments"])
        self.assertEqual(missing["error"], {"type": "ValueError", "message": "Object ID 999999999 does not exist."})

    def test_themetpy_percent_encoded_pipes_and_q_last(self):
        """themetpy joins terms with `|` itself, which requests sends as `%7C`, puts `q` last
        and lower-cases flags: the mirror decodes the query, so `medium=Prints%7CPaintings`
        means both, an empty `q` with `isHighlight=true` finds the highlights (as at the Met),
        and `departmentIds=1%7C3` lists both departments."""
        filtered, highlights, listed = self.run_clients(
            call("themetpy", "search", "a", isHighlight=True, medium="Prints|Paintings", hasImages=True),
            call("themetpy", "search", "", isHighlight=True),
            call("themetpy", "get_all_object_ids", departmentIds=[1, 3]))

        self.assertEqual(self.sent(filtered), ("/search", [
            ("isHighlight", "true"), ("medium", "Prints%7CPaintings"), ("hasImages", "true"), ("q", "a")]))
        expected = self.fake("/search?isHighlight=true&medium=Prints%7CPaintings&hasImages=true&q=a")[1]
        self.assertEqual(self.assertSucceeded(filtered), expected["objectIDs"])
        self.assertEqual(sorted(filtered["value"]), HIGHLIGHTS)  # a print and two paintings

        self.assertEqual(self.sent(highlights), ("/search", [("isHighlight", "true"), ("q", "")]))
        self.assertEqual(sorted(self.assertSucceeded(highlights)), HIGHLIGHTS)
        self.assertEqual(highlights["value"], self.fake("/search?isHighlight=true&q=")[1]["objectIDs"])

        self.assertEqual(self.sent(listed), ("/objects", [("departmentIds", "1%7C3")]))
        self.assertEqual(self.assertSucceeded(listed), self.fake("/objects?departmentIds=1%7C3")[1]["objectIDs"])

    # mets

    def test_mets_searches_and_retrieves(self):
        """mets' three search modes and its retrieval (it has no department call). Its default
        mode sends an empty `q=` with `classification=` (no Met parameter, dropped) and
        `hasImages=true`: the Met answers that with no hits and `objectIDs: null`, which mets
        returns as None and its retrieval takes as nothing to fetch. Its title and tag modes
        find the cypresses; retrieval sorts by objectBeginDate and skips a 404."""
        everywhere, nothing, titles, tags, records = self.run_clients(
            call("mets", "search", "Paintings", img=True, mode=0),
            call("mets", "retrieve", None, max_num=5, delay=0),
            call("mets", "search", "cypress", img=True, mode=1),
            call("mets", "search", "cypress", img=False, mode=2),
            call("mets", "retrieve", [CYPRESSES, 999999999, WHEAT_FIELD], max_num=5, delay=0))

        self.assertEqual(self.sent(everywhere), ("/search", [
            ("q", ""), ("classification", "Paintings"), ("hasImages", "true")]))
        self.assertEqual(self.fake("/search?q=&hasImages=true")[1], {"total": 0, "objectIDs": None})
        self.assertIsNone(self.assertSucceeded(everywhere))
        self.assertEqual(self.assertSucceeded(nothing), [])

        self.assertEqual(self.sent(titles), ("/search", [("title", "true"), ("q", "cypress"), ("hasImages", "true")]))
        self.assertEqual(self.assertSucceeded(titles),
                         self.fake("/search?title=true&q=cypress&hasImages=true")[1]["objectIDs"])
        self.assertEqual(sorted(titles["value"]), [WHEAT_FIELD, CYPRESSES])
        self.assertEqual(self.sent(tags), ("/search", [("tags", "true"), ("q", "cypress")]))
        self.assertEqual(self.assertSucceeded(tags), self.fake("/search?tags=true&q=cypress")[1]["objectIDs"])

        got = self.assertSucceeded(records)
        self.assertEqual([path for path, _ in map(self.sent_one, records["sent"])],
                         [f"/objects/{CYPRESSES}", "/objects/999999999", f"/objects/{WHEAT_FIELD}"])
        self.assertEqual(sorted(record["objectID"] for record in got), [WHEAT_FIELD, CYPRESSES])
        for record in got:
            self.assertEqual(record, self.fake(f"/objects/{record['objectID']}")[1])
        self.assertEqual([record["objectBeginDate"] for record in got],
                         sorted(record["objectBeginDate"] for record in got))

    def sent_one(self, url):
        return self.sent({"sent": [url]})


if __name__ == "__main__":
    unittest.main()
