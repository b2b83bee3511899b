"""The persistence layer: what the server keeps on disk (reference §11, §27).

Module map:

- ``states``: the per-principal saved-state repository and its quotas.
- ``state_format``: what a saved state is: its id, shape, origins and bytes.
- ``trust``: what in the data directory the server trusts, and the audit of it.
- ``artifacts``: the per-session artifact store (downloads and PDFs).
- ``artifact_record``: one artifact's record and client view, the quotas, its cleaned labels.
- ``confined``: reading a file under ``--upload-root`` without following links.
- ``fileio``: file primitives shared by the state repository and the artifact store.
- ``fleet_directory``: the fleet's session directory in Redis (issue 37, §37).
"""
