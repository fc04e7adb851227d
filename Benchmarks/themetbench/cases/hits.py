"""Cache hits with wrk, themet and nginx interleaved round after round; medians in one table."""

import statistics
from collections.abc import Callable

from ..report import Table
from ..workload import (HOT_ID, LOOPS, PICTURE_CONNECTIONS, PICTURE_ORIGINAL, PICTURE_SMALL, PLAIN_ORIGINAL, REPO,
                        SEARCH_PATH, SPREAD_IDS, TILE_PATH, WIDGET_PATH)
from ..wrk import Case, WrkResult, run_wrk

PACED_PAUSE_MS = 4
PACED_CONNECTIONS = 256  # with 4 ms pauses, about 55,000 requests a second: below both servers' limits


def hit_cases(pictures: bool = True) -> list[Case]:
    """The hit workloads, in the order they run; the pictures' last (unless `pictures` is false: an
    A/B against an older build, which may not serve them)."""
    spread = ["-s", str(REPO / "Benchmarks/spread.lua")]
    paced = ["-s", str(REPO / "Benchmarks/paced.lua")]
    pause = str(PACED_PAUSE_MS)
    cases = [
        Case("hot object", f"/objects/{HOT_ID}"),
        Case(f"{SPREAD_IDS}-object spread", "/", spread, [str(SPREAD_IDS)]),
        Case("search page of 20", SEARCH_PATH, nginx=False),
        Case("widget timeline", WIDGET_PATH, nginx=False),
        # The same offered load for both servers (each connection pauses after every answer),
        # so the latencies compare at equal requests per second rather than at each one's limit.
        Case(f"hot, {pause} ms pauses", "/", paced, [str(HOT_ID), str(HOT_ID), pause],
             connections=[PACED_CONNECTIONS]),
        Case(f"spread, {pause} ms pauses", "/", paced, ["1", str(SPREAD_IDS), pause],
             connections=[PACED_CONNECTIONS]),
    ]
    if pictures:
        cases += [
            Case("picture, web-large", PICTURE_SMALL, connections=[PICTURE_CONNECTIONS]),
            Case("picture, original", PICTURE_ORIGINAL, connections=[PICTURE_CONNECTIONS]),
            # The same bytes from nginx as a plain file: no cache header before them in the file.
            Case("original, nginx plain file", PICTURE_ORIGINAL, nginx_path=PLAIN_ORIGINAL,
                 connections=[PICTURE_CONNECTIONS]),
            Case("IIIF tile, made before", TILE_PATH, nginx=False, connections=[PICTURE_CONNECTIONS]),
        ]
    return cases


def benchmark_hits(servers: dict[str, int], pids: dict[str, list[int]], connections: list[int], rounds: int,
                   duration: int, problems: list[str],
                   pictures: bool = True) -> dict[tuple[str, int, str], list[WrkResult]]:
    """Every case at every connection count, themet then nginx, round after round."""
    results: dict[tuple[str, int, str], list[WrkResult]] = {}
    for round_number in range(1, rounds + 1):
        for case in hit_cases(pictures):
            for conns in case.connections or connections:
                for server, port in servers.items():
                    if server == "nginx" and not case.nginx:
                        continue
                    result = run_wrk(port, case, conns, duration, pids[server], case.path_for(server))
                    results.setdefault((case.name, conns, server), []).append(result)
                    print(f"  round {round_number}: {case.name:<26} {conns:>3} conns {server:<6} "
                          f"{result.requests_per_second:>10,.0f} req/s  p50 {result.p50_ms:7.2f} ms  "
                          f"p99 {result.p99_ms:7.2f} ms  CPU {result.server_cpu_us:5.1f} us/req  "
                          f"wrk CPU {result.client_cpu_us:5.1f} us/req", flush=True)
                    if result.errors or not result.requests:
                        problem = (f"{server} {case.name} at {conns} conns: {result.non_2xx} non-2xx/3xx answers, "
                                   f"{result.socket_errors} socket errors, {result.requests} requests")
                        print(f"  !!! {problem}", flush=True)
                        problems.append(problem)
    return results


def paired_ratio(pairs: list[tuple[WrkResult, WrkResult]], figure: Callable[[WrkResult], float]) -> str:
    """The median over the rounds of one round's `figure` for themet over the same round's for the
    reference: steadier on a noisy machine than the ratio of the two medians."""
    ratios = [figure(ours) / figure(theirs) for ours, theirs in pairs if figure(theirs)]
    return f"{statistics.median(ratios):.2f}" if ratios else "n/a"


def hits_table(results: dict[tuple[str, int, str], list[WrkResult]], connections: list[int],
               rounds: int, duration: int, reference: str = "nginx", pictures: bool = True) -> Table:
    """Medians over the rounds, one row per case, connection count and server; the ratios compare
    themet with `reference` (nginx, or another build of themet)."""
    table = Table(f"Cache hits: wrk -t{LOOPS}, {duration} s per run, median of {rounds} round(s), "
                  f"themet and {reference} interleaved",
                  ["case", "conns", "server", "req/s", "p50 ms", "p99 ms", "CPU us/req", "wrk CPU us/req",
                   f"req/s ours/{reference}", f"p99 ours/{reference}", f"CPU ours/{reference}",
                   f"CPU+wrk ours/{reference}", "errors"])
    for case in hit_cases(pictures):
        for conns in case.connections or connections:
            medians = {}
            for server in ("themet", reference):
                runs = results.get((case.name, conns, server))
                if runs:
                    medians[server] = (statistics.median(r.requests_per_second for r in runs),
                                       statistics.median(r.p50_ms for r in runs),
                                       statistics.median(r.p99_ms for r in runs),
                                       statistics.median(r.server_cpu_us for r in runs),
                                       statistics.median(r.client_cpu_us for r in runs),
                                       sum(r.errors for r in runs))
            for server, (rps, p50, p99, cpu, client_cpu, errors) in medians.items():
                ratio = p99_ratio = cpu_ratio = machine_ratio = "n/a" if reference not in medians else ""
                if server == "themet" and reference in medians:
                    pairs = list(zip(results[(case.name, conns, "themet")], results[(case.name, conns, reference)]))
                    ratio = paired_ratio(pairs, lambda r: r.requests_per_second)
                    p99_ratio = paired_ratio(pairs, lambda r: r.p99_ms)
                    cpu_ratio = paired_ratio(pairs, lambda r: r.server_cpu_us)
                    machine_ratio = paired_ratio(pairs, lambda r: r.server_cpu_us + r.client_cpu_us)
                table.rows.append([case.name, str(conns), server, f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}",
                                   f"{cpu:.1f}", f"{client_cpu:.1f}", ratio, p99_ratio, cpu_ratio, machine_ratio,
                                   str(errors) if not errors else f"{errors} !!!"])
    table.notes.append("ratios: above 1 means themet serves more requests per second (req/s), or has the "
                       "slower tail (p99) or the costlier request (CPU); each is the median of the rounds' own "
                       "ratios (the two servers' runs of one round are seconds apart, so a slow spell of the "
                       "machine weighs on both)"
                       + ("; search, widget and IIIF are themet's own routes, nginx has no equivalent"
                          if reference == "nginx" else ""))
    if reference == "nginx":
        table.notes.append("targets for every object case against nginx (reported, not enforced): req/s ≥ 1.3×, "
                           "CPU ≤ 0.7×, p99 ≤ 1×")
    if pictures:
        table.notes.append("pictures: the same file from both servers, so the req/s ratio is the bytes-per-second "
                           "ratio; their sizes are in the pictures table. \"original, nginx plain file\": themet as "
                           "in the row above, nginx sending the same bytes as a static file instead of from its "
                           "cache file (where they follow a header of about a kilobyte)")
    table.notes.append("CPU us/req: the server's user + system CPU time during the run (every thread; "
                       "nginx's workers) divided by the requests wrk completed; kernel work for its sockets "
                       "included. wrk CPU us/req: wrk's own, the same way. On loopback the kernel charges the TCP "
                       "work of both ends (receiving, acknowledging, paced sending) to whichever process is "
                       "running, so for large bodies the split between server and wrk shifts with the server's "
                       "timing; CPU+wrk, the machine's cost of a request, is the figure that split cannot move")
    return table
