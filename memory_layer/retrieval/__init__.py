"""Retrieval: candidates (FTS5 + vectors), fusion, the five-signal blend, boosts, explain."""
