"""The team server's store: PostgreSQL 16+ with pgvector.

Only the team server (``memory-layer team serve`` and ``team server init``) connects
here; clients talk HTTP to it. Every statement the server runs lives in this package,
one module per group of tables, as the local store's SQL lives in ``storage``.
"""
