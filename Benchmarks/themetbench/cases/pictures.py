"""Pictures made: a IIIF derivative next to Debian's vipsthumbnail on the same file, and deep zoom's
first tile (the picture's pyramid made with it) and the tiles after it."""

import shutil
import statistics
import subprocess
import time

from ..http_client import http_get
from ..processes import Supervisor
from ..report import Table
from ..workload import PICTURE_ID, PICTURE_ORIGINAL, PICTURE_SMALL

SERVICE = f"/iiif/{PICTURE_ID}/0"
VIPSTHUMBNAIL = shutil.which("vipsthumbnail")


def timed_get(port: int, path: str, problems: list[str]) -> float:
    """One GET on a new connection, in milliseconds; anything but a 200 is a problem."""
    started = time.monotonic()
    status, _, body = http_get(port, path, timeout=60)
    elapsed = (time.monotonic() - started) * 1000
    if status != 200:
        problems.append(f"themet: GET {path} answered {status}: {body[:200]!r}")
    return elapsed


def row(name: str, times: list[float], target: str) -> list[str]:
    return [name, str(len(times)), f"{statistics.median(times):.1f}", f"{min(times):.1f}", f"{max(times):.1f}",
            target]


def benchmark_pictures(supervisor: Supervisor, port: int, sizes: dict[str, int], runs: int,
                       problems: list[str]) -> Table:
    """`runs` (at least 3) of each: a new derivative of the cached original (a new size each time,
    so each is made, not served), vipsthumbnail on the same bytes, the first tile of a picture
    whose pyramid is not made yet, new tiles after it, and a tile made before."""
    runs = max(3, runs)
    directory = supervisor.path("pictures")
    original = directory / "original.jpg"
    status, _, body = http_get(port, PICTURE_ORIGINAL, timeout=60)
    if status != 200:
        problems.append(f"themet: GET {PICTURE_ORIGINAL} answered {status}")
    original.write_bytes(body)

    made = [timed_get(port, f"{SERVICE}/full/!{800 + run},{800 + run}/0/default.jpg", problems)
            for run in range(runs)]
    thumbnails = []
    for run in range(runs):
        started = time.monotonic()
        subprocess.run([VIPSTHUMBNAIL, str(original), "--size", f"{800 + run}x{800 + run}", "-o",
                        str(directory / f"thumbnail-{run}.jpg")], check=True, capture_output=True)
        thumbnails.append((time.monotonic() - started) * 1000)

    # Deep zoom on the picture's additional image 1, whose pyramid nothing has made yet: its
    # original first (so the time is the pyramid and the tile, not the image host), then tiles.
    second = f"/iiif/{PICTURE_ID}/1"
    timed_get(port, f"{second}/info.json", problems)
    first_tile = [timed_get(port, f"{second}/0,0,512,512/512,512/0/default.jpg", problems)]
    new_tiles = [timed_get(port, f"{second}/{512 * (column + 1)},512,512,512/512,512/0/default.jpg", problems)
                 for column in range(runs)]
    cached_tiles = [timed_get(port, f"{second}/0,0,512,512/512,512/0/default.jpg", problems) for _ in range(runs)]
    ratio = statistics.median(made) / statistics.median(thumbnails)

    table = Table(f"Pictures made: the {len(body):,}-byte original of object {PICTURE_ID} cached, each time on a "
                  "new connection (curl-like), milliseconds",
                  ["what", "runs", "median ms", "min ms", "max ms", "target"])
    table.rows += [
        row("IIIF full/!800,800 (a new size each run)", made, f"<= 1.2 x vipsthumbnail: {ratio:.2f} x"),
        row("vipsthumbnail --size 800x800 (a process)", thumbnails, ""),
        row("first tile of a 4,000 px original (pyramid)", first_tile, "<= 1500"),
        row("a new tile after it (from the pyramid)", new_tiles, ""),
        row("a tile made before", cached_tiles, "image-hit speed"),
    ]
    table.notes.append(f"pictures served in the hit table: {PICTURE_SMALL} {sizes.get(PICTURE_SMALL, 0):,} bytes, "
                       f"{PICTURE_ORIGINAL} {sizes.get(PICTURE_ORIGINAL, 0):,} bytes")
    table.notes.append("vipsthumbnail's time includes starting its process; themet's includes "
                       "the HTTP request")
    return table
