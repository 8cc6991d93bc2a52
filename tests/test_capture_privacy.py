"""Secrets never reach the store; ordinary code is left alone."""

from __future__ import annotations

import pytest

from memory_layer.capture import privacy
from memory_layer.capture.privacy import clean, redact, strip_private

# Built from parts so that secret scanners do not flag this test file.
GH = "ghp_" + "a1B2c3D4e5" * 4
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\n"
    "bLz8Ku9sYz+0Qk7pW1Q=\n-----END RSA PRIVATE KEY-----"
)


SECRETS =     [
    ("key id AKIAIOSFODNN7EXAMPLE in the log", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_key",
    ),
    (
        "maps key=AIzaSyD-1234567890abcdefghijklmnopqrstu ok",
        "AIzaSyD-1234567890abcdefghijklmnopqrstu",
        "gcp_api_key",
    ),
    (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "private_key",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey="
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==",
        "azure_key",
    ),
    (
        "https://shop.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=abcdEFGH1234ijklMNOP5678qrst%3D",
        "abcdEFGH1234ijklMNOP5678qrst",
        "azure_sas",
    ),
    (f"token {GH} leaked", GH, "github_token"),
    ("gho_" + "Z9" * 18, "gho_" + "Z9" * 18, "github_token"),
    ("ghs_" + "x1" * 18, "ghs_" + "x1" * 18, "github_token"),
    (
        "github_pat_11ABCDEFG0_" + "abcdefghij" * 6,
        "github_pat_11ABCDEFG0_" + "abcdefghij" * 6,
        "github_token",
    ),
    ("glpat-" + "xY3" * 7, "glpat-" + "xY3" * 7, "gitlab_token"),
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKlMnOpQrStUvWx",
        "slack_token",
    ),
    ("xapp-1-A0123456789-1234567890123-abcdef0123", "A0123456789", "slack_token"),
    (
        "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
        "slack_webhook",
    ),
    ("stripe sk_live_" + "4eC39HqLyjWDarjt", "4eC39HqLyjWDarjt", "stripe_key"),
    ("rk_test_" + "51HqLyjWDarjtT1zdp", "51HqLyjWDarjtT1zdp", "stripe_key"),
    ("OPENAI sk-proj-" + "abc123DEF456" * 3, "abc123DEF456", "openai_key"),
    ("sk-" + "Ab1" * 16, "Ab1Ab1Ab1", "openai_key"),
    ("ANTHROPIC sk-ant-api03-" + "Qw9" * 10, "Qw9Qw9Qw9", "anthropic_key"),
    (f"cookie session={JWT}", JWT, "jwt"),
    (f"key:\n{PEM}\nend", "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM", "private_key"),
    (
        "curl -H 'Authorization: Bearer abcdef1234567890abcdef' https://api.example.com",
        "abcdef1234567890abcdef",
        "authorization",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "authorization"),
    ("DB_PASSWORD=hunter2", "hunter2", "env"),
    ("export GITHUB_TOKEN=abc123def456", "abc123def456", "env"),
    ('API_KEY="abc def ghi"', "abc def ghi", "env"),
    ("  CLIENT_SECRET='s3cr3t-value'", "s3cr3t-value", "env"),
    ("AZURE_STORAGE_KEY=c29tZWtleQ==", "c29tZWtleQ==", "env"),
    ('{"password": "hunter2", "user": "bob"}', "hunter2", "json"),
    ("db:\n  password: hunter2\n  user: bob", "hunter2", "yaml"),
    ('conn = connect(password="hunter2")', "hunter2", "assignment"),
    ("const config = { apiKey: 'AbC123xyz789' };", "AbC123xyz789", "assignment"),
    ('accessToken = "tok_live_abcdef123"', "tok_live_abcdef123", "assignment"),
    # Key-looking URL query parameters (issue 12: an ?api-key= reached session_events).
    (
        "curl -s 'https://api.nytimes.com/svc/search/v2/articlesearch.json?q=election"
        "&api-key=Qx7f2LmZ0aB9cD3e'",
        "Qx7f2LmZ0aB9cD3e",
        "url_param",
    ),
    ("GET /v1/geocode?apikey=9f8e7d6c5b4a&lang=en", "9f8e7d6c5b4a", "url_param"),
    ("https://maps.example.com/api/js?key=k3yV4lu3abc&callback=init", "k3yV4lu3abc", "url_param"),
    ("wss://stream.example.com/ws?token=t0k3n-abc-123", "t0k3n-abc-123", "url_param"),
    ("https://app.example.com/cb#access_token=ya29.a0AfH6&expires_in=3599", "ya29.a0AfH6", "url_param"),
    ("https://h.example.com/in?sig=abc123&exp=1", "abc123", "url_param"),
    (
        "https://b.s3.amazonaws.com/f.zip?X-Amz-Date=20260101&X-Amz-Signature=9a8b7c6d5e4f",
        "9a8b7c6d5e4f",
        "url_param",
    ),
    ("https://hooks.example.com/x?secret=whs-991&id=4", "whs-991", "url_param"),
    ("https://legacy.example.com/login?user=bob&password=hunter22", "hunter22", "url_param"),
    ("https://ci.example.com/api?private_token=glx-123456", "glx-123456", "url_param"),
    ("https://x.example.com/feed?API_KEY=abcd1234efgh", "abcd1234efgh", "url_param"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS)
def test_redacts_each_secret_kind(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out


def test_url_password_keeps_user_and_host() -> None:
    out = redact("DATABASE_URL is postgres://app:s3cr3t@db.internal:5432/app")
    assert out == "DATABASE_URL is postgres://app:[REDACTED:url_password]@db.internal:5432/app"


def test_env_assignment_keeps_the_name() -> None:
    assert redact("DB_PASSWORD=hunter2") == "DB_PASSWORD=[REDACTED:env]"
    assert redact("export SECRET_KEY=abc") == "export SECRET_KEY=[REDACTED:env]"


ORDINARY =     [
    "password_field = form.cleaned_data['password']",
    "token = request.headers.get('X-Token')",
    "def check(password: str) -> bool:",
    "    token: Optional[str] = None",
    "password = getpass.getpass()",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "PATH=/usr/local/bin:$PATH",
    "DEBUG=1 LOG_LEVEL=info",
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    "postgres://user:${PGPASSWORD}@localhost/db",
    "password: ${DB_PASSWORD}",
    "sort_key: name",
    "max_tokens = 1024",
    "MAX_TOKENS=1024",
    "bypass: yes",
    'token_type: "bearer"',
    "TOKENIZERS_PARALLELISM=false",
    "Token: see the dashboard for yours",
    "use sk-learn? no, scikit-learn",
    "The password reset flow sends an email.",
    "https://example.com/search?q=token&page=2&sort_key=name",
    "https://example.com/items?keyword=api-key&monkey=1",
    "curl 'https://api.example.com/v1?api-key=${NYT_API_KEY}'",
    "open https://docs.example.com/auth#signature-verification",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_leaves_ordinary_text_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_is_idempotent() -> None:
    text = f"DB_PASSWORD=hunter2 {GH} postgres://a:b@h/d\npassword: x1y2z3"
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <private>secret</private> b", "a  b"),
        ("a <PRIVATE>x</Private> b", "a  b"),
        ("one\n<private>\nline 1\nline 2\n</private>\ntwo", "one\n\ntwo"),
        ("keep <private>hide to the end\nand more", "keep "),
        ("a<private>b<private>c</private>d</private>e", "ae"),
        ("stray </private> closing tag", "stray  closing tag"),
        ('x <private reason="hr">y</private> z', "x  z"),
        ("no tags here", "no tags here"),
    ],
)
def test_strip_private(text: str, expected: str) -> None:
    assert strip_private(text) == expected


def test_clean_strips_private_then_redacts() -> None:
    out = clean("use <private>my key AKIAIOSFODNN7EXAMPLE</private> DB_PASSWORD=hunter2")
    assert "AKIA" not in out
    assert "hunter2" not in out
    assert out.startswith("use  DB_PASSWORD=[REDACTED:env]")


def _redact_with_every_rule(text: str) -> str:
    for pattern, repl, _needs in privacy._RULES:
        text = pattern.sub(repl, text)
    return text


def test_a_rule_skipped_for_want_of_its_literal_could_not_have_matched() -> None:
    """Rules are skipped when the text holds none of their ``needs``: every match of
    every rule on the secrets and the ordinary texts holds one, and redaction with the
    skipping equals redaction with every rule applied."""
    texts = [t for t, _, _ in SECRETS] + ORDINARY
    texts += [f"{a} and {b}" for a, b in zip(texts, texts[1:], strict=False)]
    matched = 0
    for pattern, _repl, needs in privacy._RULES:
        for text in texts:
            for m in pattern.finditer(text):
                matched += 1
                assert not needs or any(n in m.group(0) for n in needs), (pattern, m.group(0))
    assert matched > len(SECRETS)
    for text in texts:
        assert redact(text) == _redact_with_every_rule(text)


def test_rules_are_compiled_only_when_a_text_needs_them() -> None:
    import subprocess
    import sys

    script = (
        "from memory_layer.capture import privacy\n"
        "privacy.redact('pytest -q passed in 3.2s')\n"
        "print(sum('_compiled' in vars(p) for p, _, _ in privacy._RULES))\n"
        "privacy.redact('export OPENAI=sk-' + 'a' * 30)\n"
        "print(sum('_compiled' in vars(p) for p, _, _ in privacy._RULES))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "0"  # nothing to redact: no pattern compiled
    assert 0 < int(out[1]) < len(privacy._RULES)
