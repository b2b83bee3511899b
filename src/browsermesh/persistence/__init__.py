"""BrowserMesh persistence layer."""
