"""BrowserMesh engine layer."""
