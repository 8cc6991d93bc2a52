"""JSONL import and export. Export round-trips through import.

Import validates every line before writing anything, then writes all of them in
one transaction: a bad line is reported with its number and nothing is imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memory_layer.errors import ImportFailed, InvalidInput
from memory_layer.memories import (
    MAX_KEY_CHARS,
    MAX_PROJECT_CHARS,
    MAX_SCENE_CHARS,
    MAX_SOURCE_CHARS,
    MAX_SUBJECT_CHARS,
    check_confidence,
    check_length,
    check_text,
    clean_tags,
    new_id,
)
from memory_layer.models import check_category, check_status, iso, parse_time, utcnow
from memory_layer.requests import Place
from memory_layer.storage.conn import Conn
from memory_layer.storage.memory_lists import Filters, list_memories
from memory_layer.storage.records import (
    at_place,
    insert_memory,
    stored_text,
    text_stored,
    thread_end,
    transaction,
)
from memory_layer.storage.textindex import normalise_for_hash

# Fields export writes beyond the import minimum, so a round trip loses nothing.
_COUNTS = ("success_count", "failure_count", "use_count")
_TIMES = ("created_at", "updated_at", "last_used_at", "proven_at", "approved_at", "review_by")
# Trust fields (migration m030). Kept on import so a record withheld from agents (edited
# since verification, overdue) is still withheld after a round trip, instead of being
# stamped afresh as a trusted write; scene and structured-fact keys are kept too.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
# Each with its bound (memories.MAX_*_CHARS; a checksum is 64 hex digits or "unverified").
_TRUST_TEXT = {
    "approved_by": MAX_SOURCE_CHARS,
    "checksum": 64,
    "scene": MAX_SCENE_CHARS,
    "subject": MAX_SUBJECT_CHARS,
    "fact_key": MAX_KEY_CHARS,
}


@dataclass(frozen=True)
class ImportReport:
    imported: int
    skipped: int


def _field_error(number: int, message: str) -> ImportFailed:
    return ImportFailed(f"Line {number}: {message} Nothing was imported.")


def parse_line(number: int, raw_line: bytes, max_chars: int) -> dict[str, Any] | None:
    """One JSONL line as validated column values, or None for a blank line."""
    try:
        line = raw_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _field_error(number, f"not valid UTF-8 (byte {exc.start}).") from None
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _field_error(number, f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
    if not isinstance(data, dict):
        raise _field_error(number, 'expected a JSON object such as {"text": "..."}.')
    if "text" not in data:
        raise _field_error(number, 'missing "text".')
    try:
        from memory_layer.capture.privacy import clean

        values: dict[str, Any] = {"text": clean(check_text(data["text"], max_chars))}
        values["category"] = check_category(str(data.get("category") or "general"))
        project = data.get("project")
        if project is not None and not isinstance(project, str):
            raise InvalidInput('"project" must be a string or null.')
        values["project"] = check_length("project id", project, MAX_PROJECT_CHARS) or None
        values["tags"] = clean_tags(data.get("tags"))
        values["source"] = check_length(
            "source", str(data.get("source") or "import"), MAX_SOURCE_CHARS
        )
        values["confidence"] = check_confidence(data.get("confidence", 0.8))
        if data.get("id") is not None:
            if not isinstance(data["id"], str) or not data["id"].strip():
                raise InvalidInput('"id" must be a non-empty string.')
            if not _SAFE_ID.fullmatch(data["id"].strip()):
                # Ids name files (the Markdown mirror writes ID.md): no paths.
                raise InvalidInput(
                    '"id" may hold only letters, digits, "_", "-", "." and ":" and must '
                    "start with a letter or digit."
                )
            values["id"] = data["id"].strip()
        for key in _TIMES:
            if data.get(key):
                try:
                    values[key] = iso(parse_time(str(data[key])))
                except ValueError:
                    raise InvalidInput(f'"{key}" is not an ISO 8601 time.') from None
        for key in _TRUST_TEXT:
            if data.get(key) is not None:
                if not isinstance(data[key], str):
                    raise InvalidInput(f'"{key}" must be a string or null.')
                values[key] = check_length(f'"{key}"', data[key], _TRUST_TEXT[key])
        place = Place.parse(data.get("thread"), data.get("position"))
        if place is not None:
            values["thread"] = place.thread
            values["position"] = place.position  # None: after the thread's last memory
        for key in _COUNTS:
            if key in data:
                if not isinstance(data[key], int) or data[key] < 0:
                    raise InvalidInput(f'"{key}" must be a non-negative integer.')
                values[key] = data[key]
        if "outcome_score" in data:
            score = data["outcome_score"]
            if not isinstance(score, (int, float)) or not -1.0 <= score <= 1.0:
                raise InvalidInput('"outcome_score" must be a number from -1 to 1.')
            values["outcome_score"] = float(score)
        if "status" in data:
            if not isinstance(data["status"], str) or not data["status"]:
                raise InvalidInput('"status" must be a non-empty string.')
            values["status"] = check_status(data["status"])
    except InvalidInput as exc:
        raise _field_error(number, str(exc)) from None
    return values


def read_lines(stream: Iterable[bytes], max_chars: int) -> list[tuple[int, dict[str, Any]]]:
    parsed: list[tuple[int, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    for number, raw_line in enumerate(stream, 1):
        if number == 1 and raw_line.startswith(b"\xef\xbb\xbf"):
            raw_line = raw_line[3:]  # a UTF-8 byte-order mark, as Windows editors write it
        values = parse_line(number, raw_line, max_chars)
        if values is None:
            continue
        if "id" in values:
            if values["id"] in seen:
                raise _field_error(
                    number, f'id "{values["id"]}" repeats line {seen[values["id"]]}.'
                )
            seen[values["id"]] = number
        parsed.append((number, values))
    return parsed


def import_records(
    db: Conn,
    records: list[tuple[int, dict[str, Any]]],
    *,
    embedder: Any = None,
    progress: Callable[[Iterable[Any]], Iterator[Any]] = iter,
    write_progress: Callable[[Iterable[Any]], Iterator[Any]] = iter,
    actor: str = "import",
) -> ImportReport:
    """Write validated records in one transaction, skipping ones already stored."""
    now = iso(utcnow())
    todo: list[dict[str, Any]] = []
    skipped = 0
    # (project, thread) -> the last position taken, this import included
    ends: dict[tuple[str, str], int] = {}
    taken: dict[tuple[str, str, int], int] = {}  # places this import fills -> line
    for number, values in records:
        if "thread" in values and _placed(db, number, values, ends, taken):
            skipped += 1
            continue
        if "id" in values:
            text = stored_text(db, values["id"])
            if text is not None:
                if normalise_for_hash(text) == normalise_for_hash(values["text"]):
                    skipped += 1
                    continue
                raise _field_error(number, f'id "{values["id"]}" already exists with other text.')
        # A turn is distinct from any other by its place, whatever its words.
        elif "thread" not in values and text_stored(db, values["text"], values["project"]):
            skipped += 1
            continue
        todo.append(values)
    if embedder is not None and todo:
        from memory_layer.embed import to_blob

        batch = 256
        for start in progress(range(0, len(todo), batch)):
            chunk = todo[start : start + batch]
            for values, vector in zip(
                chunk, embedder.embed([v["text"] for v in chunk]), strict=True
            ):
                values["embedding"] = to_blob(vector)
                values["embedding_model"] = embedder.model_id
    with transaction(db):
        for values in write_progress(todo):
            values.setdefault("id", new_id())
            values.setdefault("created_at", now)
            values.setdefault("updated_at", now)
            insert_memory(db, values, actor=actor, context={"via": "import"})
    return ImportReport(imported=len(todo), skipped=skipped)


def _placed(
    db: Conn,
    number: int,
    values: dict[str, Any],
    ends: dict[tuple[str, str], int],
    taken: dict[tuple[str, str, int], int],
) -> bool:
    """Give a turn without a position the next one of its thread (in its project);
    True when its place already holds this text (the same log imported again: skipped).
    Another text there, or a place an earlier line of this import took, is refused,
    naming the line."""
    project, thread = values["project"], values["thread"]
    log = (project or "", thread)
    if log not in ends:
        end = thread_end(db, project, thread)
        ends[log] = -1 if end is None else end
    if values["position"] is None:
        values["position"] = ends[log] + 1
    position = values["position"]
    place = (*log, position)
    if place in taken:
        raise _field_error(
            number, f'position {position} of thread "{thread}" is taken by line {taken[place]}.'
        )
    taken[place] = number
    ends[log] = max(ends[log], position)
    there = at_place(db, project, thread, position)
    if there is None:
        return False
    if normalise_for_hash(there.text) == normalise_for_hash(values["text"]):
        return True
    raise _field_error(
        number,
        f'position {position} of thread "{thread}" already holds memory '
        f"{there.id} ({there.status}) with other text.",
    )


def export_records(db: Conn) -> Iterator[dict[str, Any]]:
    """Every memory, oldest first, with every field import understands."""
    offset = 0
    while True:
        page = list_memories(db, Filters(), sort="oldest", limit=1000, offset=offset)
        if not page:
            return
        for memory in page:
            data = memory.to_dict()
            data.pop("scope", None)
            yield data
        offset += len(page)
