"""Deterministic test doubles that enter through the real seams."""

from __future__ import annotations

import hashlib
import re

import numpy as np

SYNONYMS = {
    # A few synonym groups so paraphrase tests have something semantic to find.
    "database": "db", "postgres": "db", "postgresql": "db", "db": "db",
    "tests": "test", "testing": "test", "pytest": "test", "test": "test",
    "refused": "refuse", "refuse": "refuse", "connection": "connect", "connect": "connect",
}


class FakeEmbedder:
    """Hashes words (and synonym groups) into a 256-d unit vector."""

    model_id = "fake-hash-256"
    dim = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                key = SYNONYMS.get(word, word)
                bucket = int(hashlib.md5(key.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out
