"""Phrasings of real sessions the rules read (capture3, issue 12).

Every positive example is a sentence quoted from a real Claude Code transcript of the
``tune`` or ``train`` split of ``benchmarks/data/real_transcripts/gold.json`` (repository
named beside it, commit in SOURCES.md); each rule also has negatives it must refuse.
"""

from __future__ import annotations

import pytest

from memory_layer.capture.extract import extract


def kinds(text: str, role: str) -> list[tuple[str, str]]:
    return [(c.category, c.extractor) for c in extract(text, role)]


# --- the user's emphatic rules (yashpunmiya/Solsmile, the hackathon brief) ---------


@pytest.mark.parametrize(
    "said",
    [
        "Do NOT use SELFDESTRUCT anywhere (PolkaVM forbids it).",
        "Do NOT deploy MockSystem to testnet — it is local-only.",
        "Do NOT leave any console.log in production builds.",
        "DO run npx hardhat test and fix all failures before deploying.",
        "DO verify contract on Blockscout after deployment.",
    ],
)
def test_an_emphatic_do_or_do_not_is_a_users_rule(said: str) -> None:
    assert kinds(said, "user") == [("convention", "instruction.emphatic")]


def test_the_emphatic_rule_keeps_only_its_own_sentence() -> None:
    found = extract(
        "Do NOT invent any Polkadot feature. Every feature used must be confirmed in docs "
        "above.",
        "user",
    )
    assert [c.text for c in found] == ["Do NOT invent any Polkadot feature."]


@pytest.mark.parametrize(
    ("said", "role"),
    [
        ("Do not push yet.", "user"),  # lower case: a one-off request
        ("don't run the migrations, I'll do it myself", "user"),
        ("DO it now.", "user"),  # no rule verb, nothing to keep
        ("DO NOT worry about the tests.", "user"),
        ("DON'T touch the config until I say so?", "user"),
        ("Do NOT use SELFDESTRUCT anywhere (PolkaVM forbids it).", "assistant"),
    ],
)
def test_requests_questions_and_the_assistant_are_not_emphatic_rules(said: str, role: str) -> None:
    assert ("convention", "instruction.emphatic") not in kinds(said, role)


# --- findings the assistant states ------------------------------------------------


def test_an_important_finding_is_a_gotcha() -> None:
    # yashpunmiya/Solsmile, mid-turn while reading the precompile's interface.
    found = extract(
        "Important finding: `toAccountId` returns `bytes memory`, not `bytes32`. I'll handle "
        "the conversion.",
        "assistant",
    )
    assert [(c.category, c.text) for c in found] == [
        ("gotcha", "`toAccountId` returns `bytes memory`, not `bytes32`.")
    ]


def test_a_finding_label_on_a_progress_report_is_not_a_lesson() -> None:
    assert extract("Finding: I have pushed the branch and opened the PR.", "assistant") == []


def test_noise_named_as_harmless_is_a_gotcha() -> None:
    # yashpunmiya/Solsmile, after `next build` printed Can't resolve warnings.
    said = (
        "The `@react-native-async-storage` warnings are harmless — they're from MetaMask "
        "SDK's optional dependency and don't affect the build."
    )
    assert kinds(said, "assistant") == [("gotcha", "finding.harmless")]


@pytest.mark.parametrize(
    "said",
    [
        # The noise is not named before it is called harmless (the fixture's own case).
        "That warning comes from a transitive dependency and is harmless here; `npm ci` "
        "is already run without `--force` in CI.",
        "These errors are harmless, ignore them.",
        "I checked and the `tsc` warnings are harmless.",  # narration
        "The `foo` warning might be harmless.",  # hedged
    ],
)
def test_harmless_needs_the_noise_named_and_no_hedge(said: str) -> None:
    assert ("gotcha", "finding.harmless") not in kinds(said, "assistant")


def test_a_deferral_with_its_reason_is_a_decision() -> None:
    # bastion-agentique/bastion: the user's pasted commit summary.
    said = (
        "Oracle staleness check deferred (not implemented) because it requires on-chain RPC "
        "lookups of oracle account slot timestamps; oracle_staleness_slots field reserved "
        "but no check wired"
    )
    assert kinds(said, "user") == [("decision", "instruction.correction")]


def test_a_contrast_without_a_deferral_stays_a_gotcha() -> None:
    said = "The keyed URL is path-based on rpc.ankr.com (not a ?apikey= query string)."
    assert kinds(said, "user") == [("gotcha", "instruction.correction")]


# --- commands the assistant states in a summary -----------------------------------


@pytest.mark.parametrize(
    "said",
    [
        # yashpunmiya/Solsmile, the closing summary.
        "Deploy: `cd contracts && npx hardhat run scripts/deploy.js --network polkadotTestnet`",
        # AlexandreVassard/will-it-rain, the closing summary.
        "- `npm run dev` to test locally (loads `.env`)",
    ],
)
def test_a_command_stated_with_its_task_is_a_command_memory(said: str) -> None:
    assert kinds(said, "assistant") == [("command", "recipe.stated")]


@pytest.mark.parametrize(
    ("said", "role"),
    [
        ("`git add -A` to stage everything", "assistant"),  # a step, not a recipe
        ("Deploy: `cd contracts`", "assistant"),
        ("`README.md` to document the setup", "assistant"),  # not a command line
        ("Deploy: `npx hardhat run scripts/deploy.js`", "user"),  # the user's paste
        ("Next I will run `npm test` to check the build", "assistant"),
    ],
)
def test_steps_files_and_plans_are_not_stated_commands(said: str, role: str) -> None:
    assert ("command", "recipe.stated") not in kinds(said, role)
