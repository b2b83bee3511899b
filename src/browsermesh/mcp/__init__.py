"""BrowserMesh mcp layer."""
