"""What every step shares: the repository, the loopback address, the objects and paths the
workloads ask for, and how many event loops (themet) and workers (nginx) serve them."""

from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # this file is <repository>/Benchmarks/themetbench/workload.py
HOST = "127.0.0.1"
MiB = 1024 * 1024
# The fakes always serve this many synthetic ids (records are computed per request, nothing is
# stored), so the hot and miss ids below exist in both modes; --objects only sizes the memory step.
SYNTHETIC_IDS = 100_000
SPREAD_IDS = 1000
HOT_ID = 4242
MISS_LATENCY_MS = 50
LOOPS = 2  # themet's event loops and nginx's worker processes
SEARCH_PATH = "/search?q=study&limit=20"
WIDGET_PATH = "/widget/timeline"
FILL_CONNECTIONS = 64
# A real record (Fixtures/) beside the synthetic ones, for its pictures: the fake makes a web-large
# copy of about 600 px and a 3,613 x 4,000 px original from their paths.
PICTURE_ID = 436535
PICTURE_SMALL = "/images/CRDImages/ep/web-large/DT1567.jpg"
PICTURE_ORIGINAL = "/images/CRDImages/ep/original/DT1567.jpg"
# The same original's bytes as a plain file nginx serves from its prefix directory (no cache
# header before them), for a row that compares with nginx's cheapest way to send a file.
PLAIN_ORIGINAL = "/plain/CRDImages/ep/original/DT1567.jpg"
# A deep-zoom tile of that original at full resolution, cached by the warm-up.
TILE_PATH = f"/iiif/{PICTURE_ID}/0/1024,1024,512,512/512,512/0/default.jpg"
PICTURE_CONNECTIONS = 64


def object_paths(ids: Iterable[int]) -> list[str]:
    """/objects/<id> for each id."""
    return [f"/objects/{object_id}" for object_id in ids]
