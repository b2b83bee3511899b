"""Tool definitions, one module per area."""
