"""The processes this run starts, and the temporary directory their files go to."""

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .proc import descendant_pids

STOP_GRACE_SECONDS = 5


@dataclass
class Child:
    """One process this run started, with the files its output goes to."""

    name: str
    popen: subprocess.Popen
    stdout: Path
    stderr: Path
    extra_log: Path | None = None  # nginx's error.log
    data: Path | None = None  # themet's data directory; nginx's prefix

    @property
    def pid(self) -> int:
        return self.popen.pid

    def tail(self, lines: int = 20) -> str:
        """The last lines of its stderr (and error.log), to show why it failed."""
        parts = []
        for path in (self.stderr, self.extra_log):
            if path and path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {self.name} {path.name} (last {lines} lines) ---\n" + "\n".join(text))
        return "\n".join(parts) or f"--- {self.name}: no output ---"


class Supervisor:
    """Owns the temporary directory and every child process; `cleanup` stops them all by PID."""

    def __init__(self) -> None:
        shm = Path("/dev/shm")
        base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None  # nginx's cache in memory
        self.root = Path(tempfile.mkdtemp(prefix="themet-bench-", dir=base))
        self.children: list[Child] = []
        self.cleaned = False

    def path(self, name: str) -> Path:
        """A fresh directory under the run's temporary directory."""
        directory = self.root / name
        directory.mkdir(parents=True)
        return directory

    def start(self, name: str, argv: list[str], extra_log: Path | None = None, pass_fds: tuple[int, ...] = (),
              env: dict[str, str] | None = None) -> Child:
        """Starts `argv` with stdout and stderr going to files under the temporary directory; the
        descriptors in `pass_fds` stay open in it, and `env`, if given, is its whole environment."""
        logs = self.root / "logs"
        logs.mkdir(exist_ok=True)
        stem = logs / f"{len(self.children):02d}-{name}"
        stdout, stderr = stem.with_suffix(".out"), stem.with_suffix(".err")
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=self.root,
                                     pass_fds=pass_fds, env=env)
        child = Child(name, popen, stdout, stderr, extra_log)
        self.children.append(child)
        return child

    def stop(self, child: Child) -> None:
        """SIGTERM, up to 5 s to exit, then SIGKILL for it and any process it started."""
        if child.popen.poll() is not None:
            return
        descendants = descendant_pids(child.pid)
        child.popen.send_signal(signal.SIGTERM)
        try:
            child.popen.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            for pid in [child.pid, *descendants]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            child.popen.wait()

    def cleanup(self) -> None:
        """Stops every child and removes the temporary directory; safe to call more than once."""
        if self.cleaned:
            return
        self.cleaned = True
        for child in reversed(self.children):
            self.stop(child)
        shutil.rmtree(self.root, ignore_errors=True)
