"""Installed-package suite: build the wheel, install it into a fresh venv, drive it."""
