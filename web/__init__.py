"""The dashboard: a small Flask app over the same library functions as the CLI.

Installed as ``memory_layer.web`` (see pyproject.toml). ``memory-layer serve`` runs it.
"""

from memory_layer.web.app import create_app

__all__ = ["create_app"]
