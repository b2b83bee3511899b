"""``python -m browsermesh`` under cProfile with a CPU clock, switched on and off by signals.

Used by ``benchmarks.profile_mesh``: ``python -m benchmarks.cprofile_server OUT.prof <browsermesh
arguments>``. SIGUSR1 starts profiling the main thread (the event loop, where every tool call
runs), SIGUSR2 stops it and writes OUT.prof. The clock is ``time.thread_time``: CPU time of the
thread, so time spent waiting for a CPU on a busy machine is not charged to whatever Python code
happened to be running (the bias of sampling profilers under CPU contention).
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
import time
from types import FrameType


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["browsermesh", *sys.argv[2:]]
    profiler = cProfile.Profile(time.thread_time)

    def start(_sig: int, _frame: FrameType | None) -> None:
        profiler.enable()

    def stop(_sig: int, _frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    runpy.run_module("browsermesh", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
