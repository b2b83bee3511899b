"""Tool definitions, one module per area (reference §4); each module's ``specs()`` lists its tools.

Module map:

- ``sessions``: runtime info, sessions and pages.
- ``network``: ``browser_session_update``.
- ``navigation``: navigation and page reads (URL, title).
- ``snapshot``: ``browser_snapshot``.
- ``find``: ``browser_find``.
- ``interaction``: element actions, scrolling, drag and drop, visible text.
- ``forms``: ``browser_fill_form``.
- ``capture``: ``browser_screenshot``.
- ``waits``: ``browser_wait`` and ``browser_action_and_wait``.
- ``observe``: ``browser_observe`` (profile ``observability``).
- ``state``: saved states (profile ``persistence``).
- ``files``: uploads, downloads, artifacts, PDFs (profile ``files``).
- ``evaluate``: ``browser_evaluate`` (profile ``eval``).
- ``testing``: ``browser_test_export`` and ``browser_recording`` (profile ``testing``).
- ``review``: ``browser_trace`` and ``browser_video`` (profile ``testing``).
- ``vision``: ``browser_mouse`` at viewport coordinates (profile ``vision``).
- ``webmcp``: ``browser_page_tools`` and ``browser_page_tool_call``, the page's own WebMCP
  tools (profile ``webmcp``).
"""
