"""Storage: the SQLite file, its migrations, memory rows and the operations log."""
