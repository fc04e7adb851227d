"""Runs calls of three third-party Met API clients from PyPI (met-api, themetpy and mets) against
a base URL, for test_met_clients. It runs in the clients' own venv (requirements-clients.txt:
met-api needs pydantic<2, which the other tests' venv cannot have next to iiif-prezi3).

Reads {"base": URL, "calls": [{"client", "call", "args", "kwargs"}, …]} as JSON on standard
input and prints one JSON list: for each call what it returned (pydantic models as dicts) or
raised (type and message), and the URLs it sent, as they went on the wire.

Each client is pointed at the base URL in this process only, the least invasive way it allows:
met-api reads three module constants at call time, mets two class attributes, and themetpy has
its URLs as literals inside its functions, so the `requests` name its modules use is replaced by
a stand-in that rewrites the Met's prefix and leaves everything else to requests. Installed
packages are never edited."""

import datetime
import json
import logging
import sys

import httpx
import requests
import requests.adapters

import met_api
import met_api.functional
import themetpy
from mets import MetroSearch

MET = "https://collectionapi.metmuseum.org/public/collection/v1"
SENT = []


def record_what_is_sent():
    """Notes the URL of every request the clients send, at the transport: requests'
    HTTPAdapter (met-api, themetpy) and httpx's HTTPTransport (mets)."""
    adapter_send = requests.adapters.HTTPAdapter.send

    def send(self, request, *arguments, **keywords):
        SENT.append(request.url)
        return adapter_send(self, request, *arguments, **keywords)

    requests.adapters.HTTPAdapter.send = send
    transport_handle = httpx.HTTPTransport.handle_request

    def handle_request(self, request):
        SENT.append(str(request.url))
        return transport_handle(self, request)

    httpx.HTTPTransport.handle_request = handle_request


class _RequestsAt:
    """Stands in for the `requests` module inside themetpy: `get` of a URL under the Met's
    prefix goes to `base` instead; every other name is requests' own (exceptions included)."""

    def __init__(self, base):
        self.base = base

    def get(self, url, *arguments, **keywords):
        if url.startswith(MET):
            url = self.base + url[len(MET):]
        return requests.get(url, *arguments, **keywords)

    def __getattr__(self, name):
        return getattr(requests, name)


def point_at(base):
    base = base.rstrip("/")
    met_api.functional.OBJECTS_URL = base + "/objects"
    met_api.functional.DEPARTMENTS_URL = base + "/departments"
    met_api.functional.SEARCH_URL = base + "/search"
    # themetpy's package attributes `search` and `objects` are the functions it re-exports, so
    # its modules are reached through sys.modules.
    for name in ("themetpy.search", "themetpy.objects", "themetpy.departments"):
        sys.modules[name].requests = _RequestsAt(base)
    MetroSearch.search_url = base + "/search"
    MetroSearch.obj_url = base + "/objects/"  # mets appends the ID to it


CALLS = {
    ("met_api", "search"): met_api.search,
    ("met_api", "get_object"): met_api.get_object,
    ("met_api", "get_objects"): met_api.get_objects,
    ("met_api", "get_departments"): met_api.get_departments,
    ("themetpy", "search"): themetpy.search,
    ("themetpy", "get_object"): themetpy.get_object,
    ("themetpy", "get_all_object_ids"): themetpy.get_all_object_ids,
    ("themetpy", "get_departments"): themetpy.get_departments,
    ("mets", "search"): MetroSearch.search,
    ("mets", "retrieve"): MetroSearch.retrieve,
}


def argument(value):
    """{"date": "YYYY-MM-DD"} stands for a datetime (met-api takes its dates as datetimes)."""
    if isinstance(value, dict) and set(value) == {"date"}:
        return datetime.datetime.strptime(value["date"], "%Y-%m-%d")
    return value


def plain(value):
    """What a call returned, as JSON: pydantic models (met-api) as their dicts."""
    if hasattr(value, "dict") and callable(value.dict):
        return plain(value.dict())
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def run(call):
    function = CALLS[(call["client"], call["call"])]
    arguments = [argument(value) for value in call.get("args", [])]
    keywords = {name: argument(value) for name, value in call.get("kwargs", {}).items()}
    SENT.clear()
    try:
        value, error = plain(function(*arguments, **keywords)), None
    except Exception as raised:  # what the client raises is part of the answer
        value, error = None, {"type": type(raised).__name__, "message": str(raised)[:500]}
    return {"value": value, "error": error, "sent": list(SENT)}


def main():
    program = json.load(sys.stdin)
    # themetpy and mets set up INFO logging on import; their warnings and errors still show.
    logging.getLogger().setLevel(logging.WARNING)
    record_what_is_sent()
    point_at(program["base"])
    json.dump([run(call) for call in program["calls"]], sys.stdout)


if __name__ == "__main__":
    main()
