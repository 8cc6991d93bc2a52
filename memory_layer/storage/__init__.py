"""Storage: the SQLite file, its migrations, and one module per group of tables, the only
code that runs SQL on them (``records``: memory rows and their FTS index, read by
``memory_lists`` for pages and counts, by ``fts`` for recall's keyword search and by
``embeddings`` for its vector index, with the change log that index follows;
``operations``: the operations log; ``sessions``, ``usage``, ``llm_calls``;
``conflicts``, ``proposals``: the review inbox; ``tasks``, ``credits``: outcome
learning). Imports nothing above it."""
