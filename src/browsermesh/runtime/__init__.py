"""The runtime layer: sessions, queues, deadlines, principals (reference §13, §15; see
docs/architecture.md, "The runtime's shape").

``Runtime`` is a facade whose operations are the services' bound methods; services share one
``RuntimeCore`` and never call each other (except forks → lifecycle).

Module map:

- ``runtime``: the ``Runtime`` facade, composed of the services below.
- ``core``: the registry of sessions and pages, queue execution, engine events, inspection.
- ``session``: session and page records, and the one place their views are built.
- ``queue``: the per-session FIFO queue: acceptance order is execution order.
- ``calls``: a page operation's address: principal, session, page, budget.
- ``checks``: argument checks the runtime repeats after the schema.
- ``lifecycle``: create, list, get, close, saved states, pages, shutdown.
- ``fork``: forks and batches (``fromSessionId``, ``count``).
- ``actions``: page operations that act (navigation, element actions, waits, action-and-wait).
- ``forms``: ``browser_fill_form``: fields in order, stopping at the first failure.
- ``reads``: page operations that read (observe, evaluate, snapshot, find, screenshot).
- ``transfers``: uploads, the session's artifacts, PDFs.
- ``files``: a session's files: uploads from the call, downloads kept as artifacts.
- ``network``: ``browser_session_update``: a live session's network policy.
- ``recording``: what a session records for a test export.
- ``export``: ``browser_test_export`` and ``browser_recording``.
- ``info``: ``browser_runtime_info``, a registry read that never waits or launches.
- ``reaper``: the idle reaper (HTTP).
- ``watchers``: telling a layer above that a session changed, without importing it.
- ``live``: the live view's runtime side.
- ``fleet``: this replica's sessions in the fleet's session directory (issue 37, §37).
"""
