"""Capture: turn prompts, transcripts and tool events into candidate memories.

Everything here is pure: functions take plain values and return frozen
dataclasses.  Storing candidates (dedupe against the store, reinforcement,
review) is the caller's job, so this package never imports the store.

* ``privacy``: ``clean`` (strip ``<private>`` spans, redact secrets)
* ``transcript``: incremental, defensive JSONL reading
* ``extract``: rule-based extractors over user/assistant prose
* ``signals``: troubleshooting and command candidates from tool events
"""

from memory_layer.capture.candidate import CATEGORIES, Candidate
from memory_layer.capture.privacy import clean, redact, strip_private

__all__ = ["CATEGORIES", "Candidate", "clean", "redact", "strip_private"]
