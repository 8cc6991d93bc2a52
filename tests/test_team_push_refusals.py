"""A push sends the whole outbox: the refusal of an older queued item is reported as that
item's, never as the refusal of the share or edit just made (final review of issue 15)."""

from __future__ import annotations

from typing import Any

from memory_layer.api.team import _own, _push
from memory_layer.errors import InvalidInput
from memory_layer.storage import team_sync


class StaleFirst:
    """A team server that refuses the older queued change (stale) and takes the rest."""

    url = "https://team.example"

    def __init__(self) -> None:
        self.sent: list[str] = []

    def call(self, method: str, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.sent.append(body["client_key"])
        if body["client_key"] == "older":
            raise InvalidInput("That change was made against revision 1; the memory is at 2.")
        return {"id": "p-" + body["client_key"], "status": "pending"}


def test_an_older_items_refusal_is_not_the_new_items(db: Any) -> None:
    for key, memory in (("older", "tm-x"), ("newer", "tm-y")):
        team_sync.enqueue(db, key=key, kind="propose", memory_id=memory,
                          body={"client_key": key, "memory_id": memory, "text": "t"})
    server = StaleFirst()
    result = _own(_push(db, server), "newer")  # type: ignore[arg-type]
    assert server.sent == ["older", "newer"]
    assert result["refused"] == []  # the edit just made was accepted
    assert [(r["id"], r["memory_id"]) for r in result["others_refused"]] == [("older", "tm-x")]
    assert result["sent"] == 1 and team_sync.waiting_count(db) == 0
