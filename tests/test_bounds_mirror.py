"""Issue 14 point 7: the Markdown mirror never follows a link out of its folder, and a
file it cannot take (a dangling link, a folder, an oversized or non-UTF-8 file) is
skipped with a note instead of aborting the sync. Through `memory-layer mirror`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git

KEYWORD_ONLY = "embedding:\n  enabled: false\n"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )


def mirror(folder: Path, *extra: str) -> dict:
    result = cli("mirror", str(folder), "--json", *extra)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def inbox_texts() -> list[str]:
    result = cli("review", "--json")
    assert result.returncode == 0, result.stderr
    return [item.get("text", "") for item in json.loads(result.stdout)]


def test_a_record_file_replaced_by_a_link_is_not_imported_nor_written_through(
    user_home: Path, tmp_path: Path
) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY)
    outside = tmp_path / "bashrc"
    outside.write_text("export SECRET_TOKEN=hunter2-do-not-import\n")
    done = cli("remember", "Deploy with fly deploy --strategy rolling", "--json")
    memory_id = json.loads(done.stdout)["id"]
    folder = tmp_path / "mirror"
    mirror(folder, "--commit")
    record = folder / f"{memory_id}.md"
    record.unlink()
    record.symlink_to(outside)
    (folder / "new-note.md").symlink_to(outside)
    (folder / "dangling.md").symlink_to(tmp_path / "does-not-exist")

    report = mirror(folder, "--commit")

    skipped = {item["file"]: item for item in report["skipped"]}
    assert set(skipped) == {f"{memory_id}.md", "new-note.md", "dangling.md"}
    assert "symbolic link" in skipped["dangling.md"]["why"]
    assert "replaced by the record's own file" in skipped[f"{memory_id}.md"]["why"]
    assert report["new"] == [] and report["edited"] == []
    # The target outside the folder is untouched, and nothing of it was stored.
    assert outside.read_text() == "export SECRET_TOKEN=hunter2-do-not-import\n"
    assert not any("hunter2" in text for text in inbox_texts())
    assert not record.is_symlink() and "fly deploy" in record.read_text()
    # The skipped links stay where they were and never enter the mirror's history.
    assert (folder / "new-note.md").is_symlink() and (folder / "dangling.md").is_symlink()
    tree = git.Repo(folder).head.commit.tree
    assert "new-note.md" not in tree and "dangling.md" not in tree
    assert "hunter2" not in tree[f"{memory_id}.md"].data_stream.read().decode()


def test_unreadable_or_oversized_files_are_skipped_and_the_rest_is_synced(
    user_home: Path, tmp_path: Path
) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY)
    folder = tmp_path / "mirror"
    mirror(folder)
    (folder / "latin1.md").write_bytes(b"caf\xe9 closes at 6pm, ring the bell twice\n")
    (folder / "huge.md").write_text("x" * (2 * 1024 * 1024))
    (folder / "long.md").write_text("word " * 4000)  # 20,000 characters: over max_chars
    (folder / "folder.md").mkdir()
    (folder / "good.md").write_text("Run make lint before pushing to the repository\n")

    report = mirror(folder)

    why = {item["file"]: item["why"] for item in report["skipped"]}
    assert why["latin1.md"] == "not UTF-8 text"
    assert why["huge.md"] == "larger than 1024 KiB"
    assert "the limit is 10000" in why["long.md"]
    assert why["folder.md"] == "a folder"
    assert len(report["new"]) == 1
    assert any("make lint" in text for text in inbox_texts())
    # Skipped files are left for the user to fix, never deleted.
    assert (folder / "latin1.md").exists() and (folder / "long.md").exists()
    text = cli("mirror", str(folder))
    assert "Skipped latin1.md: not UTF-8 text." in text.stderr


def test_a_hard_link_is_not_read(user_home: Path, tmp_path: Path) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY)
    folder = tmp_path / "mirror"
    mirror(folder)
    outside = tmp_path / "private.txt"
    outside.write_text("the vault password is in /etc/vault-pass\n")
    os.link(outside, folder / "linked.md")
    report = mirror(folder)
    assert report["new"] == []
    assert "hard-linked" in report["skipped"][0]["why"]
    assert outside.read_text() == "the vault password is in /etc/vault-pass\n"
