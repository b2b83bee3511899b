"""BrowserMesh transports layer."""
