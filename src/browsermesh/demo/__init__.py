"""BrowserMesh demo layer."""
