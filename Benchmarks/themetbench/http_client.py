"""The small HTTP clients: one GET on its own connection, or many GETs over keep-alive connections."""

import asyncio
import http.client
import json
from dataclasses import dataclass

from . import BenchmarkError
from .workload import HOST


def http_get(port: int, path: str, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """One GET on its own connection: status, headers (lower-case names) and body."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        return response.status, {name.lower(): value for name, value in response.getheaders()}, body
    finally:
        connection.close()


def get_json(port: int, path: str) -> dict:
    """GET `path` and decode the JSON answer; anything but a 200 fails the run."""
    status, _, body = http_get(port, path)
    if status != 200:
        raise BenchmarkError(f"GET {path} on port {port} answered {status}: {body[:300]!r}")
    return json.loads(body)


@dataclass
class Answer:
    """One response read by `Connection`."""

    status: int
    body: bytes


class Connection:
    """One keep-alive HTTP/1.1 connection (asyncio), enough for GETs: Content-Length or chunked."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        """Connects, unless already connected."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)

    def send(self, path: str) -> None:
        """Queues one GET (the connection must be open)."""
        request = f"GET {path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nConnection: keep-alive\r\n\r\n"
        self.writer.write(request.encode())

    async def receive(self) -> Answer:
        """Reads one response; closes the connection when the server asked to."""
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        headers = {}
        for line in head[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self.read_chunks()
        else:
            body = await self.reader.read()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Answer(status, body)

    async def read_chunks(self) -> bytes:
        """A chunked body, trailers skipped."""
        chunks = []
        while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)
        while await self.reader.readuntil(b"\r\n") != b"\r\n":
            pass
        return b"".join(chunks)

    async def get(self, path: str) -> Answer:
        """GET `path`, on a new connection if the last answer closed the previous one."""
        await self.open()
        self.send(path)
        await self.writer.drain()
        return await self.receive()

    def close(self) -> None:
        """Closes the connection; the next `get` opens a new one."""
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def get_all(port: int, paths: list[str], connections: int) -> list[tuple[str, int, int]]:
    """GETs every path over `connections` keep-alive connections: (path, status, body length)."""
    queue = iter(paths)
    results: list[tuple[str, int, int]] = []

    async def worker() -> None:
        connection = Connection(port)
        try:
            for path in queue:
                answer = await connection.get(path)
                results.append((path, answer.status, len(answer.body)))
        finally:
            connection.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return results


def get_all_ok(port: int, server: str, paths: list[str], connections: int = 16) -> int:
    """`get_all`, failing the run unless every answer is 200; returns the bodies' total length."""
    results = asyncio.run(get_all(port, paths, connections))
    failed = [(path, status) for path, status, _ in results if status != 200]
    if failed:
        raise BenchmarkError(f"{server}: {len(failed)} of {len(paths)} answers were not 200, e.g. {failed[:5]}")
    return sum(length for _, _, length in results)
