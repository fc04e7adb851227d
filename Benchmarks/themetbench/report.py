"""Tables, and the report they make: aligned text for the terminal, Markdown for BENCHMARKS.md."""

import datetime
import os
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .http_client import get_json
from .nginx import nginx_version
from .workload import LOOPS, MiB, REPO


@dataclass
class Table:
    """A titled table that prints as aligned text or as Markdown."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Aligned columns for the terminal."""
        widths = [max(len(row[i]) for row in [self.columns, *self.rows]) for i in range(len(self.columns))]
        lines = [self.title, "  ".join(name.ljust(width) for name, width in zip(self.columns, widths)),
                 "  ".join("-" * width for width in widths)]
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in self.rows]
        return "\n".join(lines + [f"({note})" for note in self.notes])

    def markdown(self) -> str:
        """A Markdown section."""
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines + [""] + [f"_{note}._" for note in self.notes])


def against_target(ratio: float, bound: float, at_least: bool) -> str:
    """A ratio beside its target: `0.42× (target ≥ 0.5×: missed)`; targets are reported, never enforced."""
    met = ratio >= bound if at_least else ratio <= bound
    return f"{ratio:.2f}× (target {'≥' if at_least else '≤'} {bound:g}×: {'met' if met else 'missed'})"


def mib(size: float) -> str:
    """Bytes as MiB with one decimal."""
    return f"{size / MiB:.1f}"


def machine_info(themet_port: int) -> list[tuple[str, str]]:
    """What the numbers were measured on: cores, CPU, kernel, versions, date."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.splitlines()
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("cores (nproc)", str(os.cpu_count())),
        ("CPU", cpu),
        ("kernel", "Linux " + ".".join(platform.release().split(".")[:2])),
        ("themet", f"{get_json(themet_port, '/health').get('version', '?')} (git {commit})"),
        ("nginx", nginx_version()[0]),
        ("wrk", wrk[0].split(" Copyright")[0] if wrk else "unknown"),
    ]


def report_text(info: list[tuple[str, str]], tables: list[Table]) -> str:
    """The whole report for the terminal."""
    width = max(len(name) for name, _ in info)
    header = "\n".join(f"{name.ljust(width)}  {value}" for name, value in info)
    return "\n\n".join([header, *(table.text() for table in tables)])


def report_markdown(info: list[tuple[str, str]], tables: list[Table], command: str) -> str:
    """The whole report as Markdown, for BENCHMARKS.md."""
    machine = "\n".join(f"- {name}: {value}" for name, value in info)
    sections = "\n\n".join(table.markdown() for table in tables)
    return (f"## themet vs nginx proxy_cache\n\nMeasured with `{command}` on loopback, "
            f"{LOOPS} themet event loops vs {LOOPS} nginx workers.\n\n{machine}\n\n{sections}\n")
