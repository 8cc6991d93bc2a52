"""Privacy filters applied to every piece of text before it is stored.

Two independent steps:

* ``strip_private`` removes spans the user explicitly marked ``<private>``.
* ``redact`` replaces things that look like credentials with
  ``[REDACTED:<kind>]`` so a leaked token never reaches the database, the
  dashboard or another agent's context.

``clean`` runs both and is the only function capture paths should call.

The redaction rules are deliberately anchored on *shapes* (a known token
prefix, a PEM header, a ``user:pass@`` URL) or on *secret-looking names with a
literal value*.  Ordinary code such as ``token = request.headers.get(...)``
has no literal value and is left alone; hex digests and UUIDs match no rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_layer.lazyre import LazyPattern

__all__ = ["clean", "redact", "strip_private"]

_PRIVATE_TAG = LazyPattern(r"<(/?)private\b[^>]*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` spans, including nested and unterminated ones.

    A scanner with a depth counter is used instead of one non-greedy regex so
    that ``<private>a<private>b</private>c</private>`` drops ``c`` too, and an
    opening tag that is never closed hides everything after it (failing
    closed: a user who forgot the closing tag still meant "private").
    """
    if "<" not in text:
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for match in _PRIVATE_TAG.finditer(text):
        if depth == 0:
            out.append(text[pos : match.start()])
        if match.group(1):  # closing tag; a stray one at depth 0 is just dropped
            depth = max(depth - 1, 0)
        else:
            depth += 1
        pos = match.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


# --- redaction rules -------------------------------------------------------

_Replacer = Callable[[re.Match[str]], str]

# Names whose literal values are secrets.  Names are split into words
# (snake_case, kebab-case, camelCase) and only the *last* word(s) count, so
# ``client_secret``, ``apiKey`` and ``accessToken`` are secrets while
# ``password_field``, ``token_type``, ``bypass`` and ``max_tokens`` are not.
_SECRET_LAST_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pwd",
        "secret",
        "token",
        "apikey",
        "credential",
        "credentials",
    }
)
_SECRET_LAST_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("auth", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("session", "key"),
        ("client", "secret"),
        ("account", "key"),
        ("storage", "key"),
    }
)
# For UPPER_CASE env names any word counts (``GITHUB_TOKEN_PROD``), and a
# ``KEY`` word too: in a .env file ``STRIPE_KEY`` is a secret.
_SECRET_ENV_WORDS = _SECRET_LAST_WORDS | {"key", "private"}


def _name_words(name: str) -> list[str]:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w for w in re.split(r"[_\-.]+", name.lower()) if w]


def _is_secret_name(name: str) -> bool:
    words = _name_words(name)
    return bool(words) and (
        words[-1] in _SECRET_LAST_WORDS or tuple(words[-2:]) in _SECRET_LAST_PAIRS
    )


def _is_secret_env_name(name: str) -> bool:
    return any(w in _SECRET_ENV_WORDS for w in _name_words(name))


# Values that are references to a secret, not the secret itself.
_REFERENCE_VALUE = LazyPattern(
    r"^(?:\$\{?[A-Za-z_]|\{\{|<[^>]*>$|%\(|\*{3,}$|x{3,}$|\[REDACTED|"
    r"ENC\[|!vault|(?:none|null|true|false|undefined)$)",
    re.IGNORECASE,
)
# Type annotations and expressions that follow ``name:`` in code, not YAML values.
_CODE_LIKE_VALUE = LazyPattern(
    r"^(?:str|bytes|int|bool|float|string|number|boolean|any|None|Optional\b|"
    r"SecretStr|Secret\b|typing\.|list\[|dict\[)|[()=;,{]|\s\|\s|->",
)


def _is_reference(value: str) -> bool:
    return not value or bool(_REFERENCE_VALUE.match(value.strip()))


def _replace_group(m: re.Match[str], group: str, kind: str) -> str:
    """Return the whole match with only ``group`` replaced by the marker."""
    value = m.group(group)
    if _is_reference(value):
        return m.group(0)
    start, end = m.span(group)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + f"[REDACTED:{kind}]" + whole[end - base :]


def _sub_group(group: str, kind: str) -> _Replacer:
    return lambda m: _replace_group(m, group, kind)


def _whole(kind: str) -> _Replacer:
    return lambda m: f"[REDACTED:{kind}]"


def _token(kind: str) -> _Replacer:
    """Like ``_whole`` but only at a word start (``disk-…`` is not ``sk-…``)."""

    def repl(m: re.Match[str]) -> str:
        start = m.start()
        if start and (m.string[start - 1].isalnum() or m.string[start - 1] == "_"):
            return m.group(0)
        return f"[REDACTED:{kind}]"

    return repl


# URL query parameters (and OAuth ``#access_token=`` fragments) carry keys under short
# names that are no secret in code: ``?key=``, ``&sig=``, ``&auth=``. In a URL they are.
_URL_SECRET_NAMES = frozenset({"key", "sig", "signature", "auth", "hmac"})


def _is_secret_param(name: str) -> bool:
    if _is_secret_name(name) or name.lower() in _URL_SECRET_NAMES:
        return True
    words = _name_words(name)  # X-Amz-Signature, X-Goog-Signature
    return bool(words) and words[-1] in ("signature", "sig")


# Every secret parameter name holds one of these: a cheap test that spares ordinary
# parameters (?page=2&limit=50, many per log line) the name-splitting below.
_SECRETISH = LazyPattern(r"key|sig|tok|secret|pass|pwd|auth|cred|hmac", re.IGNORECASE)


_URL_PARAM = LazyPattern(r"[?&#;](?P<name>[A-Za-z][\w.\-]{0,60})=(?P<val>[^&#\s\"'<>\\`]+)")


def _url_param_repl(m: re.Match[str]) -> str:
    name = m.group("name")
    if not _SECRETISH.search(name) or not _is_secret_param(name):
        return m.group(0)
    return _replace_group(m, "val", "url_param")


def _env_repl(m: re.Match[str]) -> str:
    if not _is_secret_env_name(m.group("name")):
        return m.group(0)
    group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
    return _replace_group(m, group, "env")


def _literal_repl(kind: str) -> _Replacer:
    def repl(m: re.Match[str]) -> str:
        if not _is_secret_name(m.group("name")):
            return m.group(0)
        return _replace_group(m, "val", kind)

    return repl


def _yaml_repl(m: re.Match[str]) -> str:
    value = m.group("val").strip()
    if (
        not _is_secret_name(m.group("name"))
        or value[:1] in ("|", ">", "&", "*", "#", '"', "'")
        or _CODE_LIKE_VALUE.search(value)
    ):
        return m.group(0)
    return _replace_group(m, "val", "yaml")


# Each rule: (pattern, replacement, needs).  ``needs`` are literal substrings of which a
# text must hold at least one for the pattern to match at all (empty: always run).
# Most texts hold none of the token prefixes, so the rule is skipped without a scan,
# and its pattern is never compiled in a process that never sees one (a hook process
# pays for every pattern it compiles, on every tool call).  A need must be implied by
# the pattern: case-insensitive patterns only need characters that case cannot change.
_ANY_ASSIGNMENT = (":", "=")
_RULES: list[tuple[LazyPattern, _Replacer, tuple[str, ...]]] = [
    # PEM private keys, also inside JSON strings with literal "\n" escapes
    # (GCP service-account files).  An unterminated block is cut to its end.
    (
        LazyPattern(
            r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----"
            r"(?:.*?-----END \1-----|[A-Za-z0-9+/=\s\\]*)",
            re.DOTALL,
        ),
        _whole("private_key"),
        ("-----BEGIN ",),
    ),
    # Credentials in URLs: keep scheme, user and host.
    (
        LazyPattern(r"://[^:/\s@\"']+:(?P<val>[^@\s/\"']+)(?=@)"),
        _sub_group("val", "url_password"),
        ("://",),
    ),
    # Authorization headers.
    (
        LazyPattern(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token|bot)\s+"
            r"(?P<val>[A-Za-z0-9._~+/\-]{8,}=*)"
        ),
        _sub_group("val", "authorization"),
        _ANY_ASSIGNMENT,
    ),
    # Prefixed tokens.  The patterns start with their literal prefix (no
    # leading \b, which would make the regex engine try every position) and
    # the word boundary is checked by _token instead: ~50x faster on big text.
    (LazyPattern(r"sk-ant-[A-Za-z0-9_\-]{20,}"), _token("anthropic_key"), ("sk-ant-",)),
    (
        LazyPattern(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        _token("openai_key"),
        ("sk-",),
    ),
    (LazyPattern(r"sk_(?:live|test)_[A-Za-z0-9]{16,}\b"), _token("stripe_key"), ("sk_",)),
    (LazyPattern(r"rk_(?:live|test)_[A-Za-z0-9]{16,}\b"), _token("stripe_key"), ("rk_",)),
    (LazyPattern(r"whsec_[A-Za-z0-9]{24,}\b"), _token("stripe_key"), ("whsec_",)),
    (
        LazyPattern(r"gh[pousr]_[A-Za-z0-9]{36,255}\b"),
        _token("github_token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    (
        LazyPattern(r"github_pat_[A-Za-z0-9_]{22,255}\b"),
        _token("github_token"),
        ("github_pat_",),
    ),
    (LazyPattern(r"glpat-[A-Za-z0-9_\-]{20,}"), _token("gitlab_token"), ("glpat-",)),
    (
        LazyPattern(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"
        ),
        _whole("slack_webhook"),
        ("https://hooks.slack.com/",),
    ),
    (LazyPattern(r"xox[abposer]-[A-Za-z0-9\-]{10,}"), _token("slack_token"), ("xox",)),
    (LazyPattern(r"xapp-\d-[A-Za-z0-9\-]{10,}"), _token("slack_token"), ("xapp-",)),
    (
        LazyPattern(r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}\b"),
        _token("aws_access_key"),
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    # AWS secret keys have no prefix: only recognised next to their name.
    (
        LazyPattern(
            r"(?i:aws_?secret(?:_access)?_?key)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<val>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        _sub_group("val", "aws_secret_key"),
        _ANY_ASSIGNMENT,
    ),
    (
        LazyPattern(r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
        _token("gcp_api_key"),
        ("AIza",),
    ),
    # Azure storage / service bus connection strings and SAS signatures.
    (
        LazyPattern(
            r"(?:AccountKey|SharedAccessKey|SharedAccessSignature)="
            r"(?P<val>[^;\"'\s]{16,})"
        ),
        _sub_group("val", "azure_key"),
        ("AccountKey=", "SharedAccessKey=", "SharedAccessSignature="),
    ),
    (
        LazyPattern(r"[?&]sig=(?P<val>[A-Za-z0-9%+/=]{20,})"),
        _sub_group("val", "azure_sas"),
        ("sig=",),
    ),
    (
        LazyPattern(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}"),
        _token("jwt"),
        ("eyJ",),
    ),
    # A bare bearer token outside an Authorization header (curl examples, logs).
    (
        LazyPattern(r"Bearer\s+(?P<val>[A-Za-z0-9._~+/\-]{20,}=*)"),
        _sub_group("val", "authorization"),
        ("Bearer",),
    ),
    # Secret-named URL query parameters: ``?api-key=…``, ``&token=…``, ``#access_token=…``.
    # Before the .env rule, which would otherwise take ``?API_KEY=…`` as an assignment.
    (_URL_PARAM, _url_param_repl, ("=",)),
    # .env / shell assignments: UPPER_CASE name, no spaces around "=".
    (
        LazyPattern(
            r"(?<![\w$.\-/])(?:export\s+)?(?P<name>[A-Z][A-Z0-9_]*)="
            r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'#;&|]+))"
        ),
        _env_repl,
        ("=",),
    ),
    # JSON / dict / keyword literals: "password": "…", password="…".
    (
        LazyPattern(
            r"(?<![\w\-])(?P<q1>[\"']?)(?P<name>[A-Za-z_][\w\-]*)(?P=q1)\s*[:=]\s*"
            r"(?P<q>[\"'])(?P<val>[^\"'\n]{1,500})(?P=q)"
        ),
        lambda m: _literal_repl("json" if m.group("q1") else "assignment")(m),
        _ANY_ASSIGNMENT,
    ),
    # YAML / .ini style: "password: hunter2" on its own line.  Only a single
    # token counts as a value, so prose such as "Token: see the dashboard" stays.
    (
        LazyPattern(
            r"^(?P<indent>[ \t]*(?:-[ \t]+)?)(?P<name>[A-Za-z_][\w\-]*)[ \t]*[:=][ \t]*"
            r"(?P<val>[^\s#]+)[ \t]*$",
            re.MULTILINE,
        ),
        _yaml_repl,
        _ANY_ASSIGNMENT,
    ),
]


def redact(text: str) -> str:
    """Replace credentials in ``text`` with ``[REDACTED:<kind>]``.

    Idempotent: redacting already-redacted text changes nothing.
    """
    for pattern, repl, needs in _RULES:
        if needs and not any(need in text for need in needs):
            continue
        text = pattern.sub(repl, text)
    return text


def clean(text: str) -> str:
    """Strip ``<private>`` spans, then redact secrets.  Call before storing anything."""
    return redact(strip_private(text))
