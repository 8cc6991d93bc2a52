"""Incremental transcript reading: offsets, partial lines, malformed lines, big files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_layer.capture import transcript
from memory_layer.capture.transcript import iter_entries, parse_line, read_new_entries

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def user_line(text: str, uuid: str = "u1") -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": uuid,
            "parentUuid": None,
            "sessionId": "s1",
            "timestamp": "2026-11-20T10:00:00.000Z",
            "cwd": "/p",
            "isSidechain": False,
            "message": {"role": "user", "content": text},
        }
    )


def assistant_line(blocks: list[dict], uuid: str = "a1") -> str:
    return json.dumps(
        {
            "type": "assistant",
            "uuid": uuid,
            "timestamp": "2026-11-20T10:00:01.000Z",
            "message": {"role": "assistant", "content": blocks},
        }
    )


def write(path: Path, *lines: str, end: str = "\n") -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + end)


def test_reads_string_and_list_content(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(
        path,
        user_line("fix the tests"),
        assistant_line(
            [
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Running them."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            ]
        ),
    )
    entries, offset = read_new_entries(path, 0)
    assert offset == path.stat().st_size
    user, assistant = entries
    assert (user.type, user.role, user.texts, user.uuid) == (
        "user",
        "user",
        ("fix the tests",),
        "u1",
    )
    assert user.session_id == "s1" and user.cwd == "/p"
    assert assistant.texts == ("Running them.",)  # thinking is not text
    assert assistant.tool_uses[0].name == "Bash"
    assert assistant.tool_uses[0].input == {"command": "ls"}


def test_tool_results_with_error_flag_and_tool_output(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    ok = {
        "type": "user",
        "uuid": "r1",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "42 passed"}],
                }
            ],
        },
        "toolUseResult": {"stdout": "42 passed", "stderr": "", "interrupted": False},
    }
    failed = {
        "type": "user",
        "uuid": "r2",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "Exit code 1\nboom",
                    "is_error": True,
                }
            ],
        },
        "toolUseResult": "Error: Exit code 1\nboom",
    }
    write(path, json.dumps(ok), json.dumps(failed))
    (first, second), _ = read_new_entries(path)
    assert first.tool_results[0].text == "42 passed"
    assert first.tool_results[0].is_error is False
    assert first.tool_output is not None and first.tool_output.stdout == "42 passed"
    assert second.tool_results[0].is_error is True
    assert second.tool_output is not None and second.tool_output.error.startswith("Error: Exit")


def test_incremental_reads_across_appends(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, user_line("one", "u1"))
    entries, offset = read_new_entries(path, 0)
    assert [e.uuid for e in entries] == ["u1"]

    entries, offset2 = read_new_entries(path, offset)
    assert entries == [] and offset2 == offset  # nothing new

    write(path, user_line("two", "u2"), user_line("three", "u3"))
    entries, offset3 = read_new_entries(path, offset2)
    assert [e.text for e in entries] == ["two", "three"]
    assert offset3 == path.stat().st_size


def test_partial_last_line_is_left_for_next_time(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    full = user_line("complete", "u1")
    half = user_line("being written", "u2")
    write(path, full)
    with path.open("a", encoding="utf-8") as f:
        f.write(half[:30])  # the writer has not finished this line
    entries, offset = read_new_entries(path, 0)
    assert [e.uuid for e in entries] == ["u1"]
    assert offset == len(full) + 1

    with path.open("a", encoding="utf-8") as f:
        f.write(half[30:] + "\n")
    entries, offset = read_new_entries(path, offset)
    assert [e.uuid for e in entries] == ["u2"]
    assert offset == path.stat().st_size


def test_malformed_lines_are_skipped_but_consumed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(
        path,
        "not json",
        '{"type": "user", "message": ',
        "[1, 2, 3]",
        "",
        '{"type": "user", "message": "not a dict"}',
        '{"type": "file-history-snapshot", "snapshot": {}}',
        '{"type": "assistant", "message": {"role": "assistant", "content": [42, {"type": "x"}]}}',
        user_line("survivor", "u9"),
    )
    entries, offset = read_new_entries(path, 0)
    assert [e.uuid for e in entries if e.texts] == ["u9"]
    assert offset == path.stat().st_size


def test_summary_and_system_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(
        path,
        json.dumps({"type": "summary", "summary": "Fix login", "leafUuid": "x"}),
        json.dumps({"type": "system", "subtype": "compact_boundary", "content": "compacted"}),
    )
    summary, system = read_new_entries(path)[0]
    assert (summary.type, summary.text) == ("summary", "Fix login")
    assert (system.type, system.text) == ("system", "compacted")


def test_missing_file_returns_the_same_offset(tmp_path: Path) -> None:
    assert read_new_entries(tmp_path / "nope.jsonl", 123) == ([], 123)


def test_offset_beyond_end_restarts_from_the_beginning(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, user_line("new file", "u1"))
    entries, offset = read_new_entries(path, 10_000)
    assert [e.uuid for e in entries] == ["u1"]
    assert offset == path.stat().st_size


def test_offset_inside_a_line_realigns_to_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, user_line("first", "u1"), user_line("second", "u2"))
    entries, _ = read_new_entries(path, 5)
    assert [e.uuid for e in entries] == ["u2"]


def test_max_bytes_reads_a_backlog_in_steps(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, *(user_line(f"message {i}", f"u{i}") for i in range(500)))
    seen: list[str] = []
    offset = 0
    steps = 0
    while True:
        entries, new_offset = read_new_entries(path, offset, max_bytes=4096)
        if new_offset == offset:
            break
        seen.extend(e.uuid for e in entries)
        offset = new_offset
        steps += 1
    assert seen == [f"u{i}" for i in range(500)]
    assert steps > 5


def test_streams_lines_longer_than_a_chunk(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    long_text = "x" * (transcript.CHUNK_SIZE * 3 + 17)
    write(path, user_line(long_text, "big"), user_line("after", "u2"))
    entries, _ = read_new_entries(path, 0)
    assert [len(e.text) for e in entries] == [len(long_text), 5]


def test_oversized_line_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcript, "CHUNK_SIZE", 1024)
    monkeypatch.setattr(transcript, "MAX_LINE_BYTES", 4096)
    path = tmp_path / "t.jsonl"
    write(path, user_line("y" * 20_000, "huge"), user_line("after", "u2"))
    entries, offset = read_new_entries(path, 0)
    assert [e.uuid for e in entries] == ["u2"]
    assert offset == path.stat().st_size


def test_iter_entries_yields_offsets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, user_line("a", "u1"), user_line("b", "u2"))
    offsets = [end for _entry, end in iter_entries(path)]
    assert offsets == [len(user_line("a", "u1")) + 1, path.stat().st_size]


def test_parse_line_flags() -> None:
    line = json.loads(user_line("hi"))
    line.update(isMeta=True, isSidechain=True)
    entry = parse_line(json.dumps(line))
    assert entry is not None and entry.is_meta and entry.is_sidechain


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_fixture_transcripts_parse(name: str) -> None:
    path = FIXTURES / name
    entries, offset = read_new_entries(path, 0)
    assert entries, "every fixture has conversational lines"
    assert {e.type for e in entries} <= {"user", "assistant", "system", "summary"}
    uses = {u.id for e in entries for u in e.tool_uses}
    results = {r.tool_use_id for e in entries for r in e.tool_results}
    assert results <= uses
    raw = path.read_bytes()
    # Only a partially written last line may be left unread.
    assert offset == len(raw) or b"\n" not in raw[offset:]
