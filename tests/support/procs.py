"""Process accounting for the tests: Chromium descendants of this process, RSS, fds.

Everything is read from /proc (Linux only), never from a third-party library.
"""

from __future__ import annotations

import os
import re


def children(pid: int) -> list[int]:
    """The children of `pid` (every thread's: /proc/PID/task/TID/children)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(root: int) -> list[int]:
    """Every process below `root` (children, their children...)."""
    found: list[int] = []
    pending = children(root)
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.append(pid)
            pending.extend(children(pid))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def chromium_kind(cmdline: bytes) -> str | None:
    """What a process is to Chromium, by its argv: None (not Chromium), `browser` (the main
    process), `crashpad`, the `--type=` value (`renderer`, `gpu-process`, `zygote`...), or
    `utility:<service>` for utility processes (e.g. `utility:network.mojom.NetworkService`)."""
    # Chromium rewrites its argv into one space-joined string for helper processes, so the
    # program is the start of the first NUL-separated field either way.
    program = cmdline.split(b"\0", 1)[0].split(b" ", 1)[0].lower()
    if b"chrom" not in program and b"headless_shell" not in program:
        return None
    if b"crashpad" in program:
        return "crashpad"
    kind, service = "browser", ""
    for arg in re.split(rb"[\0 ]", cmdline):
        if arg.startswith(b"--type="):
            kind = arg[len(b"--type=") :].decode(errors="replace")
        elif arg.startswith(b"--utility-sub-type="):
            service = arg[len(b"--utility-sub-type=") :].decode(errors="replace")
    return f"{kind}:{service}" if kind == "utility" and service else kind


def chromium_descendants(root: int | None = None) -> dict[int, str]:
    """`{pid: kind}` (`chromium_kind`) for every Chromium process descending from `root`
    (default: us)."""
    found: dict[int, str] = {}
    for pid in descendants(root or os.getpid()):
        kind = chromium_kind(_cmdline(pid))
        if kind is not None:
            found[pid] = kind
    return found


def browser_main_pids(root: int | None = None) -> list[int]:
    """Chromium browser (not renderer/helper) processes descending from `root` (default: us)."""
    return sorted(pid for pid, kind in chromium_descendants(root).items() if kind == "browser")


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


def driver_rss_kib(root: int | None = None) -> int:
    """Summed VmRSS of Playwright's driver processes (its bundled `node`) below `root`
    (default: us)."""
    return sum(
        rss_kib(pid)
        for pid in descendants(root or os.getpid())
        if os.path.basename(_cmdline(pid).split(b"\0", 1)[0]) == b"node"
    )


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))
