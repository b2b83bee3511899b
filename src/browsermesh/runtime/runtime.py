"""The multi-session runtime: registry, per-session queues, deadlines, limits, lifecycle.

Business rules live here; browser details live behind the `Engine` port. `Runtime` is the one
object the MCP layer talks to: a thin facade that builds the `RuntimeCore` (core: registry,
queue execution, events) and the services that receive it, one module each, and hands out
their operations under today's names:

- `lifecycle.SessionLifecycle`: sessions, states, pages, shutdown;
- `fork.SessionForks`: forks and batches of sessions (through the lifecycle's checked path);
- `actions.PageActions`: what changes a page; `reads.PageReads`: what reads one;
- `transfers.FileTransfers`: uploads, downloads, artifacts, PDFs;
- `network.SessionNetwork`: a live session's network policy;
- `export.TestExports`: the test export and the recording switch;
- `recording.Recorder`: the recording helpers the page services share;
- `handover.Handover`: a person's hold from the live view, and the agent's request for help;
- `traces.SessionTraces`, `videos.SessionVideos`: what a session did, for a person (issue 35);
- `fleet.FleetMember`: this replica's sessions in the fleet's directory (issue 37; only with
  `--fleet-redis`).

The live view (`live.LiveView`) is built by the HTTP transport on the facade and reads the core.
"""

from __future__ import annotations

from typing import Any, Self

from browsermesh.config import Config
from browsermesh.engine.protocol import Engine
from browsermesh.log import EventLog
from browsermesh.model.clock import Clock
from browsermesh.persistence.states import LOCAL_PRINCIPAL as LOCAL_PRINCIPAL  # mcp imports it
from browsermesh.runtime.actions import PageActions
from browsermesh.runtime.checks import MAX_URL_CHARS as MAX_URL_CHARS
from browsermesh.runtime.checks import validate_http_url as validate_http_url
from browsermesh.runtime.checks import validate_timeout as validate_timeout
from browsermesh.runtime.core import RuntimeCore
from browsermesh.runtime.export import TestExports
from browsermesh.runtime.fleet import FleetMember
from browsermesh.runtime.fork import SessionForks
from browsermesh.runtime.handover import Handover
from browsermesh.runtime.lifecycle import SessionLifecycle
from browsermesh.runtime.network import SessionNetwork
from browsermesh.runtime.page_tools import PageTools
from browsermesh.runtime.reads import PageReads
from browsermesh.runtime.recording import Recorder
from browsermesh.runtime.traces import SessionTraces
from browsermesh.runtime.transfers import FileTransfers
from browsermesh.runtime.videos import SessionVideos

__all__ = ["LOCAL_PRINCIPAL", "MAX_URL_CHARS", "Runtime", "validate_http_url", "validate_timeout"]


class Runtime:
    """Owns every session. One instance per server process (or per test).

    Each operation is the service's own bound method (one definition, no forwarding
    signatures to keep in step); the attributes are the core's."""

    def __init__(
        self,
        config: Config,
        engine: Engine[Any, Any],
        log: EventLog | None = None,
        *,
        states: Any = None,
        clock: Clock | None = None,
    ) -> None:
        core = RuntimeCore(config, engine, log, states=states, clock=clock)
        self.core = core
        recorder = Recorder(config, engine)
        self.sessions = SessionLifecycle(core, recorder)
        self.forks = SessionForks(core, self.sessions)
        self.handover = Handover(core, recorder)
        self.actions = PageActions(core, recorder, self.handover)
        self.reads = PageReads(core)
        self.page_tools = PageTools(core)
        self.transfers = FileTransfers(core, recorder)
        self.network = SessionNetwork(core)
        self.exports = TestExports(core)
        self.traces = SessionTraces(core)
        self.videos = SessionVideos(core)
        if config.fleet_redis is not None:
            core.fleet = FleetMember(core, config.fleet_redis)
            core.watchers.append(core.fleet)

        # The core's parts callers read (and, for `watchers`, extend).
        self.config = core.config
        self.engine = core.engine
        self.log = core.log
        self.states = core.states
        self.clock = core.clock
        self.tasks = core.tasks
        self.fleet = core.fleet
        self.watchers = core.watchers
        self.files = core.files
        self.owner_of = core.owner_of
        self.info = core.info
        self.start = core.start
        self.run_page_op = core.run_page_op
        self.run_session_op = core.run_session_op
        self.counts = core.counts
        self.sessions_snapshot = core.sessions_snapshot

        # Sessions, saved states, pages, shutdown.
        self.create_session = self.sessions.create_session
        self.create_sessions = self.forks.create_sessions
        self.list_sessions = self.sessions.list_sessions
        self.get_session = self.sessions.get_session
        self.session_pages = self.sessions.session_pages
        self.page_urls = self.sessions.page_urls
        self.close_session = self.sessions.close_session
        self.shutdown = self.sessions.shutdown
        self.update_session = self.network.update_session
        self.save_state = self.sessions.save_state
        self.list_states = self.sessions.list_states
        self.remove_state = self.sessions.remove_state
        self.create_page = self.sessions.create_page
        self.list_pages = self.sessions.list_pages
        self.close_page = self.sessions.close_page
        self.hurry_shutdown = self.sessions.hurry_shutdown

        # What changes a page.
        self.navigate = self.actions.navigate
        self.history = self.actions.history
        self.get_url = self.actions.get_url
        self.get_title = self.actions.get_title
        self.element_action = self.actions.element_action
        self.fill_form = self.actions.fill_form
        self.scroll = self.actions.scroll
        self.drag = self.actions.drag
        self.mouse = self.actions.mouse
        self.visible_text = self.actions.visible_text
        self.wait = self.actions.wait
        self.action_and_wait = self.actions.action_and_wait

        # What reads a page; files in and out.
        self.observe = self.reads.observe
        self.evaluate = self.reads.evaluate
        self.snapshot = self.reads.snapshot
        self.find = self.reads.find
        self.screenshot = self.reads.screenshot
        self.list_page_tools = self.page_tools.list_tools
        self.call_page_tool = self.page_tools.call_tool
        self.file_upload = self.transfers.file_upload
        self.downloads = self.transfers.downloads
        self.artifact_read = self.transfers.artifact_read
        self.pdf = self.transfers.pdf

        # A person in the loop (issue 34).
        self.request_help = self.handover.request_help
        self.wait_handback = self.handover.wait_handback

        # The test export and the recording switch.
        self.test_export = self.exports.test_export
        self.set_recording = self.exports.set_recording

        # What the session did, for a person (issue 35).
        self.trace = self.traces.trace
        self.video = self.videos.video

    @property
    def transport(self) -> str:
        """The transport serving this runtime (`stdio` or `http`), as runtime_info shows it."""
        return self.core.transport

    @transport.setter
    def transport(self, value: str) -> None:
        self.core.transport = value

    @property
    def shutting_down(self) -> bool:
        """Whether the shutdown began."""
        return self.core.shutting_down

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Leaving `async with runtime:` shuts it down and awaits every task it started."""
        try:
            await self.shutdown()
        finally:
            await self.tasks.aclose()
