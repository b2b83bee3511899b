"""BrowserMesh model layer."""
