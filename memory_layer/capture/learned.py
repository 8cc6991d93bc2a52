"""The learned capture classifier: which prose sentences state a durable lesson.

The rule extractors (``extract``) fire on phrasings; real sessions state lessons as
the assistant's explanations, findings behind any lead-in and decisions inside long
replies, which no phrasing list covers (benchmarks/RESULTS.md "Capture on real
transcripts"). This module reads the same sentences through the embedding model the
engine already has loaded and scores each with a small logistic regression trained on
sentences of real public transcripts labelled against the lessons a person listed
(``benchmarks/capture_labels.py`` builds the labels, ``benchmarks/capture_train.py``
trains and writes ``memory_layer/models/capture-classifier/model.json``).

Two uses, with the thresholds the training script chose by leave-one-transcript-out
cross-validation:

* **keep**: a rule candidate whose own text scores below ``keep`` is dropped (a
  precision filter on the rules);
* **admit**: a sentence no rule took that scores at least ``admit`` becomes a candidate
  (extractor ``learned``), its category from the model's category head.

The model is tied to the vectors it was trained on (``embedding_model`` in the file):
with another model's vectors, or with no embedder (keyword-only mode, a hook process
without the warm engine), ``judge_for`` returns None and the rules alone decide. The
multilingual ensemble carries MiniLM as one of its parts, so it is judged with that
part's vectors. Deterministic, local, and run only where a transcript is read (Stop,
PreCompact, SessionEnd, backfill), never on a prompt or a tool event.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from memory_layer.capture.candidate import Candidate, Turn
from memory_layer.capture.guards import MAX_CHARS, MIN_CHARS, QUESTION, finish, strip_filler

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    import numpy as np

__all__ = ["Judge", "Model", "Sample", "features", "judge_for", "load_model", "use_model"]

MODEL_FILE = Path(__file__).resolve().parent.parent / "models" / "capture-classifier" / "model.json"
FORMAT = 1  # the layout of model.json this code reads
EXTRACTOR = "learned"
# At most this many sentences are embedded per transcript batch (the newest are kept):
# a Stop reads one turn, a backfill a whole file capped by hooks.transcript_max_bytes;
# 400 MiniLM sentences cost about a second on one core.
MAX_SENTENCES = 400
# Scores kept per process (the warm engine), keyed by a hash of the text and its kind:
# PreCompact and Stop re-read overlapping turns, and a rule candidate scored once need
# not be embedded again.
CACHE_SIZE = 4096
# An admitted sentence's confidence runs from this floor (at the admit threshold) to
# the ceiling (a certain score): above hooks.min_capture_confidence's default of 0.5,
# below an explicit user instruction's 0.9.
ADMIT_FLOOR = 0.55
ADMIT_CEILING = 0.85
MIN_WORDS = 4  # shorter sentences say too little to be a memory on their own
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORDS = re.compile(r"[\w`'-]+")


@dataclass(frozen=True)
class Model:
    """The classifier as shipped: a keep/admit head and a category head."""

    version: str
    embedding_model: str
    data_sha256: str
    weights: np.ndarray  # (features,)
    bias: float
    categories: tuple[str, ...]
    category_weights: np.ndarray  # (categories, features)
    category_bias: np.ndarray  # (categories,)
    keep: float
    admit: float

    def probability(self, x: np.ndarray) -> np.ndarray:
        import numpy as np

        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))

    def category(self, x: np.ndarray) -> list[str]:
        import numpy as np

        if not self.categories:
            return ["context"] * len(x)
        logits = x @ self.category_weights.T + self.category_bias
        return [self.categories[int(i)] for i in np.argmax(logits, axis=1)]


def cjk_share(text: str) -> float:
    return len(_CJK.findall(text)) / max(1, len(text))


@dataclass(frozen=True)
class Sample:
    """One text to judge and where it stands: who said it, whether it is a rule's
    candidate (else a bare sentence), its place among its message's sentences."""

    text: str
    role: str  # user | assistant | compact ("" : a memory from outside a transcript)
    candidate: bool = False
    index: int = 0
    count: int = 1


_REASON = re.compile(r"\b(?:because|since|so that|otherwise|which (?:is|was|means)|due to)\b", re.I)
_CONTRAST = re.compile(r"\b(?:not|instead|rather than|never|always|only|must|don'?t)\b", re.I)
_LABEL = re.compile(r"^[^:]{2,40}:\s|\s[—–-]\s|→")
_FIRST_PERSON = re.compile(r"\b(?:i|i'(?:ll|ve|m|d)|let me|let's|we'll|now i)\b", re.I)
_DIGIT = re.compile(r"\d")
# What the structure features are, in order (the model's file is tied to this list).
STRUCTURE = (
    "user", "assistant", "compact", "candidate", "cjk", "length", "code", "digit",
    "reason", "contrast", "label", "first_person", "first", "last", "sentences",
)


def structure(sample: Sample) -> list[float]:
    """Features a phrasing list cannot see but a reader does: who speaks, where in the
    message (a closing summary's sentences come last), how long, code named, a reason or
    a contrast given, a label in front, the speaker narrating their own next step."""
    import math

    text = sample.text
    return [
        float(sample.role == "user"),
        float(sample.role == "assistant"),
        float(sample.role == "compact"),
        float(sample.candidate),
        cjk_share(text),
        math.log1p(len(text)) / 6.0,
        float("`" in text),
        float(bool(_DIGIT.search(text))),
        float(bool(_REASON.search(text))),
        float(bool(_CONTRAST.search(text))),
        float(bool(_LABEL.search(text))),
        float(bool(_FIRST_PERSON.search(text))),
        float(sample.index == 0),
        float(sample.index == sample.count - 1),
        math.log1p(sample.count) / 5.0,
    ]


def features(vectors: np.ndarray, samples: Sequence[Sample]) -> np.ndarray:
    """The model's input: the MiniLM vector, then ``STRUCTURE``. The training script
    builds its rows with this very function."""
    import numpy as np

    if len(vectors) != len(samples):
        raise ValueError("features: one vector per sample")
    extra = np.array([structure(s) for s in samples], dtype=np.float32).reshape(
        len(samples), len(STRUCTURE)
    )
    return np.hstack([np.asarray(vectors, dtype=np.float32).reshape(len(samples), -1), extra])


_loaded: dict[Path, Model | None] = {}


def load_model(path: Path = MODEL_FILE) -> Model | None:
    """The shipped model (read once per process), or None when the file is absent or of
    another format: capture then runs on the rules alone."""
    if path not in _loaded:
        _loaded[path] = _read(path)
    return _loaded[path]


def use_model(model: Model | None, path: Path = MODEL_FILE) -> None:
    """Pin the model ``load_model`` returns (the training script's cross-validation folds,
    tests): kept for the process until pinned again."""
    _loaded[path] = model


def _read(path: Path) -> Model | None:
    import numpy as np

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT:
        return None
    head, cat = data["keep_head"], data["category_head"]
    return Model(
        version=str(data["version"]),
        embedding_model=str(data["embedding_model"]),
        data_sha256=str(data["data_sha256"]),
        weights=np.asarray(head["weights"], dtype=np.float32),
        bias=float(head["bias"]),
        categories=tuple(cat["labels"]),
        category_weights=np.asarray(cat["weights"], dtype=np.float32).reshape(
            len(cat["labels"]), -1
        ),
        category_bias=np.asarray(cat["bias"], dtype=np.float32),
        keep=float(data["thresholds"]["keep"]),
        admit=float(data["thresholds"]["admit"]),
    )


class Judge:
    """Scores sentences and candidates with one model and one embedding function."""

    def __init__(self, model: Model, embed: Callable[[list[str]], np.ndarray]) -> None:
        self.model = model
        self._embed = embed
        self._cache = _SCORES

    def judge(self, samples: Sequence[Sample]) -> list[tuple[float, str]]:
        """(probability it states a lesson, predicted category) for each sample."""
        version = self.model.version
        keys = [_key(sample, version) for sample in samples]
        found = {key: self._cache[key] for key in keys if key in self._cache}
        todo = sorted({i for i, key in enumerate(keys) if key not in found})
        if todo:
            vectors = self._embed([samples[i].text for i in todo])
            x = features(vectors, [samples[i] for i in todo])
            probabilities = self.model.probability(x)
            categories = self.model.category(x)
            for row, i in enumerate(todo):
                found[keys[i]] = (float(probabilities[row]), categories[row])
        # Stored after the batch is answered: evicting the oldest scores must not take
        # one this very batch still needs.
        for key, verdict in found.items():
            self._cache[key] = verdict
            self._cache.move_to_end(key)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return [found[key] for key in keys]

    def review(self, turns: list[Turn]) -> list[list[Candidate]]:
        """Per turn: its rule candidates that the model keeps, then the sentences it
        admits that no rule took. A threshold that can never bite (keep 0, admit above
        1) costs no embedding."""
        if self.model.keep > 0:
            kept = self._keep(turns)
        else:
            kept = [list(t.proposed) for t in turns]
        if self.model.admit > 1.0:
            return kept
        claimed = {c.evidence for t in turns for c in t.proposed}
        pending: list[tuple[int, Sample, str]] = []  # (turn, sample, evidence)
        for ti, turn in enumerate(turns):
            for si, raw in enumerate(turn.sentences):
                text = _admissible(raw)
                evidence = strip_filler(raw)
                if text and evidence not in claimed:
                    sample = Sample(text, turn.role, False, si, len(turn.sentences))
                    pending.append((ti, sample, evidence))
        pending = pending[-MAX_SENTENCES:]
        verdicts = self.judge([p[1] for p in pending])
        for (ti, sample, evidence), (p, category) in zip(pending, verdicts, strict=True):
            if p >= self.model.admit:
                confidence = _confidence(p, self.model.admit)
                kept[ti].append(
                    Candidate(sample.text, category, confidence, EXTRACTOR, evidence, turns[ti].uuid)
                )
        return kept

    def _keep(self, turns: list[Turn]) -> list[list[Candidate]]:
        flat = [(ti, c) for ti, t in enumerate(turns) for c in t.proposed]
        verdicts = self.judge([candidate_sample(turns[ti], c) for ti, c in flat])
        kept: list[list[Candidate]] = [[] for _ in turns]
        for (ti, cand), (p, _category) in zip(flat, verdicts, strict=True):
            if p >= self.model.keep:
                kept[ti].append(cand)
        return kept


def candidate_sample(turn: Turn, cand: Candidate) -> Sample:
    """A rule candidate as the model reads it: its text, at its sentence's place."""
    stripped = [strip_filler(raw) for raw in turn.sentences]
    index = stripped.index(cand.evidence) if cand.evidence in stripped else 0
    return Sample(cand.text, turn.role, True, index, max(1, len(turn.sentences)))


# One cache per process, across Judges (a judge is made per Stop); the model's version
# is part of the key.
_SCORES: OrderedDict[str, tuple[float, str]] = OrderedDict()


def _key(sample: Sample, version: str) -> str:
    s = sample
    raw = f"{version}\0{s.role}\0{int(s.candidate)}\0{s.index}\0{s.count}\0{s.text}"
    return hashlib.sha1(raw.encode()).hexdigest()


def _admissible(raw: str) -> str | None:
    """The candidate text a sentence would become, or None: questions, fragments and
    sentences out of a memory's bounds are never admitted (nor embedded)."""
    if QUESTION.search(raw):
        return None
    text = finish(strip_filler(raw))
    if not text or not MIN_CHARS <= len(text) <= MAX_CHARS:
        return None
    if len(_WORDS.findall(text)) < MIN_WORDS and cjk_share(text) < 0.3:
        return None
    return text


def _confidence(p: float, admit: float) -> float:
    share = (p - admit) / (1.0 - admit) if admit < 1.0 else 1.0
    return round(ADMIT_FLOOR + (ADMIT_CEILING - ADMIT_FLOOR) * min(1.0, max(0.0, share)), 3)


def minilm_part(embedder: Any, model_id: str) -> Callable[[list[str]], np.ndarray] | None:
    """An embedding function in the model's vector space from this embedder, or None."""
    if embedder is None:
        return None
    if getattr(embedder, "model_id", None) == model_id:
        return embedder.embed
    part = getattr(embedder, "part", None)  # the multilingual ensemble's own models
    if callable(part):
        inner = part(model_id)
        if inner is not None:
            return inner.embed
    return None


def judge_for(embedder: Any, model: Model | None = None) -> Judge | None:
    """A judge for this embedder, or None (no model shipped, no embedder, or vectors of
    another space): capture then runs on the rules alone."""
    model = model or load_model()
    if model is None:
        return None
    embed = minilm_part(embedder, model.embedding_model)
    return Judge(model, embed) if embed is not None else None
