"""The parts of Benchmarks/run, which benchmarks themet next to nginx proxy_cache on loopback.

    workload.py     the objects, paths and sizes every step shares
    processes.py    the child processes and the temporary directory (Supervisor, Child)
    proc.py         CPU time, memory and process trees, read from /proc
    servers.py      starting the fake Met, themet and redis-server, and waiting until they answer
    nginx.py        nginx's configuration and start
    http_client.py  the small HTTP clients: one GET, or many over keep-alive connections
    wrk.py          running wrk and reading what it printed
    report.py       tables, and the report in text and Markdown
    cases/          one module per measurement, each returning its tables
"""


class BenchmarkError(Exception):
    """A failure that makes the run worthless: a server that did not start, a wrong answer."""
