"""The one version constant: serverInfo, runtime_info, package metadata and --version use it."""

__version__ = "0.4.0"
