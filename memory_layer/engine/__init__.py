"""The warm engine: one background process per user that keeps the embedding model,
the vector index and the database open, so hooks answer in milliseconds.

``client`` (standard library only) is what hooks import; ``lifecycle`` starts,
finds and stops the engine; ``server`` is the engine itself
(``python -m memory_layer.engine``).
"""
