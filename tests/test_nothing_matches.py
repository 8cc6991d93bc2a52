"""Nonsense finds nothing, through every door an agent or a person asks from.

The store holds real outside material: the 314 memories taken from the agent
instructions of 20 public repositories (benchmarks/data/instructions/, SOURCES.md names
each file and commit); the questions are asked inside apache/airflow's scope. The verifier
(retrieval/answerable.py) decides; each test also asks a real question, so a door that
always answers nothing fails as surely as one that answers everything.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_layer.config import load_config
from memory_layer.retrieval.answerable import Evidence, unknown_share
from memory_layer.retrieval.search import Scope, rank_with_evidence, recall
from tests.test_hooks_support import Claude, make_project, write_config

ROOT = Path(__file__).resolve().parent.parent
MEMORIES = ROOT / "benchmarks" / "data" / "instructions" / "memories.jsonl"
PROJECT = "github.com/apache/airflow"
NONSENSE = (
    "zzzqqq nonexistent frobnicator",
    "flibbertigibbet snorkel wumpus",
    "What's a good recipe for banana bread?",
)
QUESTION = "Should I use caplog in tests?"
ANSWER = "Do not use caplog in tests"
KEYWORD_ONLY = "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
NO_ENGINE = "engine:\n  enabled: false\n"




def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=900,
    )


def seed(user_home: Path, tmp_path: Path, config: str) -> None:
    write_config(user_home, config)
    done = cli("import", str(MEMORIES))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("config", [KEYWORD_ONLY, NO_ENGINE], ids=["keyword-only", "hybrid"])
def test_cli_recall_says_no_matching_memories(user_home: Path, tmp_path: Path, config: str) -> None:
    seed(user_home, tmp_path, config)
    done = cli("recall", NONSENSE[0], "--project", PROJECT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "No matching memories." in done.stderr
    for query in NONSENSE:
        as_json = cli("recall", query, "--project", PROJECT, "--json")
        assert as_json.returncode == 0, as_json.stderr
        assert json.loads(as_json.stdout) == []
    found = json.loads(cli("recall", QUESTION, "--project", PROJECT, "--json").stdout)
    assert found and ANSWER in found[0]["text"]
    assert 0.0 < found[0]["explain"]["answer"] <= 1.0
    explained = cli("recall", QUESTION, "--project", PROJECT, "--explain").stdout
    assert "Store answers the query: " in explained and ANSWER in explained


def test_mcp_search_returns_no_results(user_home: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    seed(user_home, tmp_path, KEYWORD_ONLY)
    workdir = make_project(tmp_path / "airflow", "git@github.com:apache/airflow.git")

    async def session() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "memory_layer", "mcp"],
            env={**os.environ, "MEMORY_LAYER_HOME": str(user_home)},
            cwd=str(workdir),
        )
        out: dict[str, Any] = {}
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    for query in (*NONSENSE, QUESTION):
                        result = await s.call_tool("search", {"query": query})
                        assert not result.is_error, result.content
                        out[query] = json.loads(result.content[0].text)
        return out

    answers = asyncio.run(session())
    for query in NONSENSE:
        assert answers[query]["project"] == PROJECT
        assert answers[query]["results"] == []
    assert ANSWER in answers[QUESTION]["results"][0]["text"]


def test_prompt_hook_injects_nothing(user_home: Path, tmp_path: Path) -> None:
    seed(user_home, tmp_path, KEYWORD_ONLY)
    claude = Claude(user_home, make_project(tmp_path / "airflow", "git@github.com:apache/airflow.git"))
    for prompt in NONSENSE:
        assert claude.context("UserPromptSubmit", prompt=prompt) == ""
    assert ANSWER in claude.context("UserPromptSubmit", prompt=QUESTION)


def test_the_decision_is_the_evidence_not_the_score(db, cfg) -> None:
    """An on-topic question the store cannot answer (one of the distractors) still gets
    a well-scored first result from the blend; the verifier reads only the evidence."""
    from memory_layer.transfer import import_records, read_lines

    with MEMORIES.open("rb") as stream:
        import_records(db, read_lines(stream, int(cfg["remember"]["max_chars"])))
    scope = Scope.for_project(PROJECT)
    unanswerable = "How do I pass data between tasks with XCom in Airflow?"
    ranked, evidence = rank_with_evidence(db, unanswerable, scope=scope, config=cfg)
    assert ranked and ranked[0].score > 0.4  # the blend alone would answer
    assert evidence.probability() < cfg["retrieval"]["min_answer"]

    def ask(query: str, **kw: float) -> list[str]:
        return [item.memory.text for item in recall(db, query, scope=scope, config=cfg, **kw)]

    assert ask(unanswerable) == []
    assert ANSWER in ask(QUESTION)[0]
    # 0 turns the decision off: recall always ranks something again.
    assert ask(unanswerable, min_answer=0.0)


def test_evidence_features_move_the_probability_the_right_way() -> None:
    base = dict(hybrid=True, store_size=300, cosine=0.45, cosine_z=3.0, cosine_gap=0.15, coverage=0.6,
                top_coverage=0.6, unknown=0.0, agree=1.0, terms=1.8)
    strong = Evidence(**base).probability()
    for name, weaker in (("cosine", 0.1), ("cosine_z", 0.5), ("coverage", 0.0)):
        assert Evidence(**{**base, name: weaker}).probability() < strong, name
    assert 0.0 < strong < 1.0
    # Evidence that needs no model, and a store too small for IDF to mean anything.
    assert Evidence(**{**base, "coverage": 1.0}).probability() == 1.0
    assert Evidence(**{**base, "cosine": 0.8}).probability() == 1.0
    tiny = {**base, "store_size": 5, "coverage": 0.0, "top_coverage": 0.0}
    assert Evidence(**tiny).probability() == 1.0  # cosine 0.45 >= SOME_COSINE
    assert Evidence(**{**tiny, "cosine": 0.05}).probability() == 0.0
    # Chinese (no training data): plain evidence, whatever the store's size.
    chinese = {**base, "coverage": 0.0, "top_coverage": 0.0, "learned": False}
    assert Evidence(**{**chinese, "cosine": 0.25}).probability() == 1.0
    assert Evidence(**{**chinese, "cosine": 0.05}).probability() == 0.0


def test_unknown_share_weights_terms_by_idf() -> None:
    assert unknown_share([]) == 1.0
    assert unknown_share([(1.0, 0.1), (3.0, 0.0)]) == pytest.approx(0.75)


def test_config_has_both_operating_points() -> None:
    config = load_config()
    assert 0 < config["retrieval"]["min_answer"] < config["hooks"]["min_answer"] < 1
