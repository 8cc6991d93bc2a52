"""Brute-force cosine search over embeddings held in one numpy matrix.

At 100k x 384 float32 (154 MB) a matrix product takes ~5 ms, faster than sqlite-vec
here and with nothing to install. The matrix is derived from the BLOBs in SQLite. A
warm process (the engine, the dashboard) keeps it and applies only the rows listed in
``memory_changes`` since its last look, so a write costs one row, not a reload.

One index holds the vectors of one model only: rows embedded by another model (before
a switch of ``embedding.model``, until ``memory-layer index`` re-embeds them) are left
out. Cosines come back on MiniLM's scale (embedders.calibrate), the scale every
threshold that reads them was measured on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_layer.storage import embeddings
from memory_layer.storage.conn import Conn, db_path

if TYPE_CHECKING:
    import numpy as np

# Rows changed since the last refresh beyond which a full reload is cheaper.
_INCREMENTAL_LIMIT = 5000


@dataclass(frozen=True)
class ScopeCosines:
    """Mean and standard deviation of one query's cosine over the ``count`` memories
    searched, on MiniLM's scale (the calibrated one every threshold is measured on)."""

    mean: float
    std: float
    count: int


NO_COSINES = ScopeCosines(0.0, 0.0, 0)
# A search wanting at least 1/WHOLE_PRODUCT_SHARE of the rows multiplies the whole matrix
# (a product costs less than copying that many rows out); a narrow scope copies its rows.
WHOLE_PRODUCT_SHARE = 4


class VectorIndex:
    """Vectors of one model, with each row's project (as an integer code) and whether it
    is active. Rows are never removed in place: a deleted or re-embedded row is masked."""

    def __init__(self, model_id: str, dim: int) -> None:
        import numpy as np

        self.model_id = model_id
        self.dim = dim
        self.size = 0
        self.last_change = 0
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.rowids = np.zeros(0, dtype=np.int64)
        self.codes = np.zeros(0, dtype=np.int32)
        self.active = np.zeros(0, dtype=bool)
        self.live = np.zeros(0, dtype=bool)  # False: deleted, or vector from another model
        self.position: dict[int, int] = {}
        self.project_codes: dict[str | None, int] = {}

    def _code(self, project: str | None) -> int:
        return self.project_codes.setdefault(project, len(self.project_codes))

    def _reserve(self, extra: int) -> None:
        import numpy as np

        needed = self.size + extra
        if needed <= len(self.rowids):
            return
        capacity = max(needed, int(len(self.rowids) * 1.5) + 64)

        def grow(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
            bigger = np.zeros(shape, dtype=array.dtype)
            bigger[: self.size] = array[: self.size]
            return bigger

        self.matrix = grow(self.matrix, (capacity, self.dim))
        self.rowids = grow(self.rowids, (capacity,))
        self.codes = grow(self.codes, (capacity,))
        self.active = grow(self.active, (capacity,))
        self.live = grow(self.live, (capacity,))

    def put(
        self, rowid: int, blob: bytes | None, model: str | None, project: str | None, active: bool
    ) -> None:
        """Insert, replace or mask one row."""
        import numpy as np

        usable = blob is not None and model == self.model_id and len(blob) == self.dim * 4
        pos = self.position.get(rowid)
        if pos is None:
            if not usable:
                return
            self._reserve(1)
            pos = self.size
            self.size += 1
            self.position[rowid] = pos
            self.rowids[pos] = rowid
        self.live[pos] = usable
        if usable:
            self.matrix[pos] = np.frombuffer(blob, dtype=np.float32)
        self.codes[pos] = self._code(project)
        self.active[pos] = active

    def remove(self, rowid: int) -> None:
        pos = self.position.get(rowid)
        if pos is not None:
            self.live[pos] = False

    def _mask(self, projects: list[str | None] | None, active_only: bool) -> np.ndarray:
        import numpy as np

        mask = self.live[: self.size].copy()
        if active_only:
            mask &= self.active[: self.size]
        if projects is not None:
            wanted = [self.project_codes[p] for p in projects if p in self.project_codes]
            mask &= np.isin(self.codes[: self.size], np.array(wanted, dtype=np.int32))
        return mask

    def search(
        self,
        query: np.ndarray,
        *,
        projects: list[str | None] | None,
        limit: int,
        active_only: bool = True,
    ) -> list[tuple[int, float]]:
        """Top ``limit`` (rowid, cosine) within the given projects (None = all)."""
        return self.search_scope(query, projects=projects, limit=limit, active_only=active_only)[0]

    def search_scope(
        self,
        query: np.ndarray,
        *,
        projects: list[str | None] | None,
        limit: int,
        active_only: bool = True,
    ) -> tuple[list[tuple[int, float]], ScopeCosines]:
        """``search``, plus the distribution of the query's cosine over every memory
        searched: how far the best one stands out is evidence that it is about the
        query (retrieval/answerable.py), which a raw cosine alone is not."""
        import numpy as np

        if self.size == 0:
            return [], NO_COSINES
        candidates = np.flatnonzero(self._mask(projects, active_only))
        if len(candidates) == 0:
            return [], NO_COSINES
        q = query.astype(np.float32)
        if len(candidates) * WHOLE_PRODUCT_SHARE >= self.size:
            # Most rows are wanted: one product over the whole matrix and a pick of the
            # scores, instead of copying the wanted rows first (the copy of 100k x 384
            # floats costs far more than the product itself).
            scores = (self.matrix[: self.size] @ q)[candidates]
        else:
            scores = self.matrix[candidates] @ q
        k = min(limit, len(candidates))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        from memory_layer.embedders import calibrate

        values = calibrate(self.model_id, scores[top])
        # The spread on the raw scale, mapped through the calibration's slope at the
        # mean: calibrating all 100k cosines would cost more than the product itself.
        mean = float(scores.mean())
        spread = float(scores.std())
        low, high = calibrate(self.model_id, np.array([mean, mean + spread], dtype=np.float32))
        stats = ScopeCosines(float(low), float(high - low), len(candidates))
        hits = [
            (int(self.rowids[candidates[i]]), float(value))
            for i, value in zip(top, values, strict=True)
        ]
        return hits, stats

    def cosine(self, query: np.ndarray, rowids: list[int]) -> dict[int, float]:
        import numpy as np

        from memory_layer.embedders import calibrate

        found = [
            (rowid, pos)
            for rowid in rowids
            if (pos := self.position.get(rowid)) is not None and self.live[pos]
        ]
        if not found:
            return {}
        positions = np.array([pos for _, pos in found], dtype=np.int64)
        values = calibrate(self.model_id, self.matrix[positions] @ query.astype(np.float32))
        return {rowid: float(value) for (rowid, _), value in zip(found, values, strict=True)}


_cache: dict[tuple[str, str], VectorIndex] = {}


def _full_load(db: Conn, model_id: str, dim: int) -> VectorIndex:
    index = VectorIndex(model_id, dim)
    # Read before the rows: a change landing between the two is applied again next time.
    index.last_change = embeddings.last_change(db)
    rows = embeddings.vector_rows(db, model_id)
    index._reserve(len(rows))
    for rowid, blob, model, project, active in rows:
        index.put(rowid, blob, model, project, bool(active))
    return index


def _stored_dim(db: Conn, model_id: str) -> int:
    return embeddings.stored_vector_bytes(db, model_id) // 4  # float32


def vector_index(db: Conn, model_id: str, dim: int | None = None) -> VectorIndex:
    """The cached index for this database and model, brought up to date. ``dim`` is the
    model's dimension when known; otherwise it is read from a stored vector."""
    key = (db_path(db), model_id)
    index = _cache.get(key)
    if index is None or (dim and index.dim != dim):
        index = _cache[key] = _full_load(db, model_id, dim or _stored_dim(db, model_id))
        return index
    oldest, changed = embeddings.changes_since(db, index.last_change, _INCREMENTAL_LIMIT + 1)
    if not changed:
        return index
    gap = oldest is not None and oldest > index.last_change + 1
    if gap or len(changed) > _INCREMENTAL_LIMIT or index.dim == 0:
        index = _cache[key] = _full_load(db, model_id, dim or _stored_dim(db, model_id))
        return index
    rowids = list(dict.fromkeys(r[0] for r in changed))
    found = embeddings.vector_rows_by_rowid(db, rowids)
    for rowid in rowids:
        row = found.get(rowid)
        if row is None:
            index.remove(rowid)
        else:
            index.put(rowid, row[1], row[2], row[3], bool(row[4]))
    index.last_change = max(r[1] for r in changed)
    return index


def clear_cache() -> None:
    _cache.clear()
