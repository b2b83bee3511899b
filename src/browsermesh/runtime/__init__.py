"""BrowserMesh runtime layer."""
