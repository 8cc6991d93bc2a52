"""Capture: turn prompts, transcripts and tool events into candidate memories.

Everything here is pure: functions take plain values and return frozen
dataclasses.  Storing candidates (dedupe against the store, reinforcement,
review) is the caller's job, so this package never imports the store.

* ``privacy.clean``: strip ``<private>`` spans, redact secrets.  Every capture
  path calls it; the extractors and event constructors already do.
* ``transcript.read_new_entries(path, offset)``: incremental, defensive JSONL
  reading; returns entries and the offset to resume from.
* ``extract.extract(text, role)`` / ``extract_from_entries(entries)``:
  rule-based extractors over user/assistant prose.
* ``signals``: ``ToolEvent`` (persistable with ``to_dict``/``from_dict``),
  ``event_from_hook`` for PostToolUse/PostToolUseFailure payloads,
  ``events_from_entries`` for transcripts, and ``signal_candidates`` for
  fail-then-fix stories and the project's build/test/lint commands.

A hook that keeps ``offset`` and an event log per session would do::

    entries, offset = read_new_entries(transcript_path, offset)
    candidates = extract_from_entries(entries)
    seen = len(log)
    log += events_from_entries(entries)          # or event_from_hook(...) per call
    candidates += signal_candidates(log[-200:], cwd, new_from=seen - max(0, len(log) - 200))
"""

from memory_layer.capture.candidate import CATEGORIES, Candidate
from memory_layer.capture.privacy import clean, redact, strip_private

__all__ = ["CATEGORIES", "Candidate", "clean", "redact", "strip_private"]
