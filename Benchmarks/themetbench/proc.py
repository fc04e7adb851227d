"""What /proc says about the processes this run started: CPU time, memory, and their children."""

import os
import re
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time so far of these processes (every thread), from /proc/PID/stat."""
    ticks = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        ticks += int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15
    return ticks / CLOCK_TICKS


def proc_kib(pid: int, field_name: str) -> int:
    """A kB field of /proc/PID/status (VmRSS) or /proc/PID/smaps_rollup (Pss); 0 if unreadable."""
    for source in ("status", "smaps_rollup"):
        try:
            match = re.search(rf"^{field_name}:\s+(\d+) kB", Path(f"/proc/{pid}/{source}").read_text(), re.MULTILINE)
        except OSError:
            continue
        if match:
            return int(match.group(1))
    return 0


def descendant_pids(pid: int) -> list[int]:
    """Every live process below `pid` (nginx's workers, cache manager and loader), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in parents.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found
