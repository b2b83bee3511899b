"""The transports: stdio and Streamable HTTP, with access control and the live view
(reference §18, §30).

Module map:

- ``stdio``: the stdio transport, plus answers to malformed lines.
- ``http``: serving MCP over Streamable HTTP: bind, serve, stop on a signal.
- ``http_app``: the ASGI application of the HTTP transport.
- ``auth``: the access-control middleware every HTTP request meets first.
- ``access``: the Host/Origin allowlists and bearer tokens, as principals.
- ``mcp_limits``: how many MCP sessions one principal may hold open.
- ``slow_clients``: cutting off clients that send a request too slowly.
- ``drain``: ending in-flight HTTP requests cleanly when the server stops.
- ``jsonrpc``: answers for malformed JSON-RPC, shared by both transports.
- ``asgi``: two ASGI helpers (read a header, answer with JSON).
- ``view``: the live view's HTTP side: page, assets, event stream, links.
- ``view_auth``: who is looking at the live view: link codes and view-session cookies.
- ``view_static/``: the live view's page, script and style sheet (package data).
"""
