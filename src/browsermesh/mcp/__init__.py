"""The MCP layer: what clients see (reference §3, §16.1, §21, §23, §31).

Module map:

- ``server``: the MCP server factory: publication (profiles, compaction, dialect) and dispatch.
- ``registry``: tool specifications, argument validation and the one result envelope.
- ``tools``: the tool definitions, one module per area (its own module map).
- ``schemas``: JSON Schema building blocks for published tool schemas.
- ``validation``: schema failures as ``INVALID_ARGUMENT`` with field and rule.
- ``lean``: lean structured results, the one place a success is trimmed.
- ``compaction``: schema compaction of the outgoing ``tools/list``.
- ``prompts``: the static prompt templates.
- ``resources``: the session resources, what they list and read, and when they change.
- ``completions``: ``completion/complete`` for prompt arguments and resource templates.
- ``instructions``: the server ``instructions``.
- ``feed``: what one call sends while it runs: progress and its own log lines.
- ``clients``: the clients that asked to hear from the server between calls, and the sender.
"""
