"""Optional LLM extraction: a session's transcript prose → `claude -p` → candidate memories.

Off by default (``hooks.llm.enabled``). Users of other memory plugins report runaway
token bills from per-tool-call LLM compression, so this one is bounded by design:

* it runs once per ended session, in the engine only (never in a hook process, never
  per tool call), over the transcript text not sent before (its own offset);
* only prose is sent (user prompts and assistant text, no tool output), cleaned by
  ``capture.privacy.clean`` and cut to ``hooks.llm.max_input_chars``;
* at most ``hooks.llm.max_calls_per_day`` calls per UTC day; sessions with less than
  ``hooks.llm.min_input_chars`` of new prose are not sent at all;
* every call is a row in ``llm_calls`` (size, cost the CLI reported, memories found),
  shown by ``memory-layer engine status``.

The child ``claude`` runs with ``MEMORY_LAYER_HOOKS=off`` so our own hooks stay out
of that session (no recursion, no capture of the extraction itself).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from memory_layer.api import Candidate, Entry, LlmCall, clean
from memory_layer.api import llm_calls_since as calls_since
from memory_layer.api import record_llm_call as record_call
from memory_layer.hooks.log import log
from memory_layer.models import CATEGORIES, iso, utcnow

# Set in the environment of the `claude` we start: every hook in it does nothing.
DISABLE_ENV = "MEMORY_LAYER_HOOKS"
MAX_CONFIDENCE = 0.7  # an LLM's proposal never outranks what the user said outright
PROMPT = """You read part of a coding session between a developer and an AI agent.
List the durable facts worth remembering for future sessions in this project:
explicit instructions and preferences, decisions with their reason, root causes of
bugs and their fixes, gotchas, and commands that build, test or lint the project.
Leave out anything temporary, speculative, disproved, personal or secret.
Answer with only a JSON array (empty if nothing qualifies) of objects with the keys
"text" (one self-contained sentence, keeping the why), "category" (one of: {categories})
and "confidence" (0 to 1).

Session:
{transcript}"""


def calls_today(conn: sqlite3.Connection, now: datetime | None = None) -> tuple[int, float]:
    """(calls, reported cost in USD) since midnight UTC."""
    day = (now or utcnow()).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return calls_since(conn, iso(day))


def session_prose(entries: Iterable[Entry], limit: int) -> str:
    """User prompts and assistant text, cleaned, newest kept when over ``limit``."""
    lines: list[str] = []
    for entry in entries:
        if entry.is_meta or entry.is_sidechain or entry.role not in ("user", "assistant"):
            continue
        for text in entry.texts:
            text = clean(text).strip()
            if text and not text.startswith(("<command-", "<local-command-", "Caveat: ")):
                lines.append(f"{entry.role}: {text}")
    prose = "\n".join(lines)
    return prose[-limit:] if len(prose) > limit else prose


def _json_array(text: str) -> list[Any]:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def parse_reply(stdout: str) -> tuple[list[Candidate], float | None]:
    """Candidates and the reported cost from `claude -p --output-format json` output."""
    try:
        data = json.loads(stdout)
    except ValueError:
        data = {"result": stdout}
    if not isinstance(data, dict):
        data = {"result": json.dumps(data)}
    cost = data.get("total_cost_usd", data.get("cost_usd"))
    cost = float(cost) if isinstance(cost, (int, float)) else None
    result = data.get("result")
    found: list[Candidate] = []
    for item in _json_array(result if isinstance(result, str) else ""):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        text = clean(item["text"]).strip()
        if not text:
            continue
        category = str(item.get("category", "general")).strip().lower()
        if category not in CATEGORIES:
            category = "general"
        try:
            confidence = float(item.get("confidence", 0.5))
        except (TypeError, ValueError):
            confidence = 0.5
        confidence = max(0.0, min(MAX_CONFIDENCE, confidence))
        found.append(Candidate(text[:1000], category, confidence, "llm", source="llm"))
    return found, cost


def extract(
    conn: sqlite3.Connection,
    entries: list[Entry],
    *,
    session_id: str,
    config: dict[str, Any],
    cwd: str = "",
) -> list[Candidate]:
    """One capped, logged `claude -p` call over the entries' prose; [] when not allowed."""
    settings = config["hooks"]["llm"]
    if not settings["enabled"]:
        return []
    prose = session_prose(entries, int(settings["max_input_chars"]))
    if len(prose) < int(settings["min_input_chars"]):
        return []
    calls, cost = calls_today(conn)
    if calls >= int(settings["max_calls_per_day"]):
        log(
            f"LLM extraction skipped for session {session_id}: {calls} calls today "
            f"(hooks.llm.max_calls_per_day), ${cost:.4f} reported"
        )
        return []
    prompt = PROMPT.format(categories=", ".join(CATEGORIES), transcript=prose)
    env = {**os.environ, DISABLE_ENV: "off"}
    command = [
        str(settings["command"]),
        "-p",
        prompt,
        "--output-format",
        "json",
        "--model",
        str(settings["model"]),
        "--max-turns",  # one answer: no tool use, no agent loop to pay for
        "1",
    ]
    found: list[Candidate] = []
    reported: float | None = None
    error = None
    output = ""
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=float(settings["timeout_s"]),
            env=env,
            cwd=cwd or None,
        )
        output = done.stdout
        if done.returncode != 0:
            error = f"exit {done.returncode}: {done.stderr.strip()[:300]}"
        found, reported = parse_reply(done.stdout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        error = f"{type(exc).__name__}: {exc}"
    record_call(
        conn,
        LlmCall(
            at=iso(utcnow()),
            session_id=session_id,
            model=str(settings["model"]),
            input_chars=len(prompt),
            output_chars=len(output),
            cost_usd=reported,
            memories=len(found),
            error=error,
        ),
    )
    if error:
        log(f"LLM extraction failed for session {session_id}: {error}")
    return found
