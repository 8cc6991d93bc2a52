"""Storage: the SQLite file, its migrations, and one module per group of tables (memory
rows and the operations log, sessions, usage, LLM calls). Imports nothing above it."""
