"""The team's outcome score for a shared memory, from every member's evidence.

The design's rule holds per member: +0.2 for a success, -0.3 for a failure. Each
member's net is capped at MEMBER_CAP either way, below the local ``outcomes.floor``
distance, so one member can neither sink nor float a shared memory alone. "Proven"
needs successes from at least PROVEN_PEOPLE different members.
"""

from __future__ import annotations

SUCCESS = 0.2
FAILURE = -0.3
MEMBER_CAP = 0.4
SCORE_CAP = 1.0
PROVEN_PEOPLE = 2


def team_score(per_member: list[tuple[int, int, int]]) -> tuple[float, bool]:
    """(score, proven) from [(user id, successes, failures), ...]."""
    total = 0.0
    succeeded = 0
    for _user, worked, failed in per_member:
        net = SUCCESS * worked + FAILURE * failed
        total += max(-MEMBER_CAP, min(MEMBER_CAP, net))
        succeeded += 1 if worked > failed else 0
    score = round(max(-SCORE_CAP, min(SCORE_CAP, total)), 4)
    return score, score > 0 and succeeded >= PROVEN_PEOPLE
