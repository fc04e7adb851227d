"""Warm-up: the hot object and the spread set cached in both servers, themet's search page complete."""

import time
from pathlib import Path

from .. import BenchmarkError
from ..http_client import get_all_ok, get_json, http_get
from ..workload import (HOT_ID, PICTURE_ORIGINAL, PICTURE_SMALL, PLAIN_ORIGINAL, SEARCH_PATH, SPREAD_IDS, TILE_PATH,
                        WIDGET_PATH, object_paths)


def warm_objects(servers: dict[str, int]) -> None:
    """Requests the hot object and the whole spread set through each server, then checks hits."""
    paths = object_paths([HOT_ID, *range(1, SPREAD_IDS + 1)])
    for server, port in servers.items():
        get_all_ok(port, server, paths)
        for path in object_paths([HOT_ID, 1, SPREAD_IDS]):
            status, headers, _ = http_get(port, path)
            # themet says so in Cache-Status, nginx in the X-Cache its configuration adds.
            verdict = headers.get("cache-status") or headers.get("x-cache", "")
            hit = "; hit" in verdict or verdict == "HIT"
            if status != 200 or not hit:
                raise BenchmarkError(f"{server}: GET {path} after warm-up was not a cache hit "
                                     f"(status {status}, cache verdict {verdict!r})")
        print(f"  {server}: {len(paths)} objects warm, repeat requests are cache hits", flush=True)


def warm_pictures(servers: dict[str, int], plain: Path) -> dict[str, int]:
    """Requests both pictures through each server until a repeat is a cache hit, and themet's
    deep-zoom tile; puts the original's bytes under `plain` (nginx's /plain/ directory) and checks
    that nginx sends them back; returns each picture's size in bytes."""
    sizes = {}
    original = b""
    for server, port in servers.items():
        for path in (PICTURE_SMALL, PICTURE_ORIGINAL):
            http_get(port, path, timeout=60)
            status, headers, body = http_get(port, path)
            verdict = headers.get("cache-status") or headers.get("x-cache", "")
            if status != 200 or not ("; hit" in verdict or verdict == "HIT"):
                raise BenchmarkError(f"{server}: GET {path} after warm-up was not a cache hit "
                                     f"(status {status}, cache verdict {verdict!r})")
            sizes[path] = len(body)
            if path == PICTURE_ORIGINAL:
                original = body
    file = plain / PLAIN_ORIGINAL.removeprefix("/plain/")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(original)
    status, _, body = http_get(servers["nginx"], PLAIN_ORIGINAL)
    if status != 200 or body != original:
        raise BenchmarkError(f"nginx: GET {PLAIN_ORIGINAL} answered {status} with {len(body):,} bytes, "
                             f"not the original's {len(original):,}")
    themet = servers["themet"]
    for _ in range(2):
        status, _, body = http_get(themet, TILE_PATH, timeout=60)
        if status != 200:
            raise BenchmarkError(f"themet: GET {TILE_PATH} answered {status}: {body[:300]!r}")
    print(f"  pictures warm: {', '.join(f'{path} {size:,} bytes' for path, size in sizes.items())}", flush=True)
    return sizes


def warm_search(port: int, server: str = "themet") -> None:
    """Requests a themet's search page until nothing in it is pending (max 30 s), then the widget;
    `server` names it in what is printed (the baseline in an A/B)."""
    deadline = time.monotonic() + 30
    while True:
        page = get_json(port, SEARCH_PATH)
        if page.get("pending") == [] and page.get("objects"):
            break
        if time.monotonic() > deadline:
            raise BenchmarkError(f"{server}: {SEARCH_PATH} still had pending objects after 30 s: {page.get('pending')}")
        time.sleep(0.2)
    widget = get_json(port, WIDGET_PATH)
    if not widget.get("entries"):
        raise BenchmarkError(f"{server}: {WIDGET_PATH} has no entries after a search: {widget}")
    print(f"  {server}: {SEARCH_PATH} complete ({len(page['objects'])} objects), {WIDGET_PATH} filled", flush=True)
