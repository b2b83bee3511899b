"""Process accounting for the stress suites: Chromium descendants of this process, RSS, fds.

Everything is read from /proc (Linux only), never from a third-party library.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable


def _stat_ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def chromium_descendants(root: int | None = None) -> dict[int, str]:
    """`{pid: kind}` for every Chromium process descending from `root` (default: us).

    `kind` is the `--type=` value (`renderer`, `gpu-process`, `zygote`, ...), `browser` for the
    main process, and `utility:<service>` for utility processes (e.g.
    `utility:network.mojom.NetworkService`)."""
    root = root or os.getpid()
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parents[int(entry)] = _stat_ppid(int(entry))
    found: dict[int, str] = {}
    for pid in parents:
        ancestor = parents.get(pid, 0)
        while ancestor > 1 and ancestor != root:
            ancestor = parents.get(ancestor, 0)
        if ancestor != root:
            continue
        cmd = _cmdline(pid)
        if b"chrom" not in cmd.lower():
            continue
        kind = "browser"
        service = ""
        # Chromium rewrites its argv into one space-joined string for helper processes.
        for arg in re.split(rb"[\0 ]", cmd):
            if arg.startswith(b"--type="):
                kind = arg[len(b"--type=") :].decode(errors="replace")
            elif arg.startswith(b"--utility-sub-type="):
                service = arg[len(b"--utility-sub-type=") :].decode(errors="replace")
        found[pid] = f"{kind}:{service}" if kind == "utility" and service else kind
    return found


def renderer_count(root: int | None = None) -> int:
    return sum(1 for kind in chromium_descendants(root).values() if kind == "renderer")


def rss_kib(pid: int | str = "self") -> int:
    """VmRSS of one process in KiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


# Chromium services that Chromium starts on its own timers, independent of any page or context:
# `OnDeviceModelService` (the on-device AI model host) appears about 3 minutes after launch in an
# otherwise idle browser and then stays. Soak checks report these but do not count them as growth.
BACKGROUND_SERVICES = frozenset({"utility:on_device_model.mojom.OnDeviceModelService"})


def chromium_rss_kib(root: int | None = None, *, include_background: bool = True) -> int:
    """Summed VmRSS of Chromium descendants (shared pages are counted once per process, which
    overstates the absolute figure but is stable enough for a growth comparison)."""
    return sum(
        rss_kib(pid)
        for pid, kind in chromium_descendants(root).items()
        if include_background or kind not in BACKGROUND_SERVICES
    )


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def wait_until(predicate: Callable[[], bool], within: float, interval: float = 0.1) -> bool:
    """Poll `predicate` without blocking the event loop; True when it held within `within` s."""
    deadline = time.monotonic() + within
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(interval)
