"""memory-layer: memory for AI coding agents that learns what works."""

__version__ = "0.1.0"
