"""The recording's secrets (model.step_secrets, issue 30 item 1): values that contain a known
secret become secret references, one variable per value, and no other recorded string keeps a
secret."""

from __future__ import annotations

from browsermesh.model.matchers import TextCondition
from browsermesh.model.recording import Action, ExpectDialog, Value, Wait, secret_name
from browsermesh.model.step_secrets import MAX_KNOWN_SECRETS, StepSecrets

LABEL = {"strategy": "label", "value": "Password"}
WHERE = {"seq": 1, "session_id": "s1", "page_id": "p1"}


def test_the_same_value_names_the_same_variable_wherever_it_is_typed() -> None:
    known = StepSecrets()
    typed = known.value("buyer", LABEL, "hunter2", secret=True)
    assert typed == Value.secret(secret_name("buyer", "Password"))
    confirm = {"strategy": "label", "value": "Confirm"}
    assert known.value("buyer", confirm, "hunter2", secret=False) == typed
    assert known.value("buyer", confirm, "other", secret=False) == Value.literal("other")
    assert "hunter2" not in repr(known)


def test_a_page_password_makes_a_value_that_contains_it_secret() -> None:
    known = StepSecrets()
    known.learn(["held-1", ""])
    note = {"strategy": "label", "value": "Note"}
    assert known.value("buyer", note, "x held-1 y", secret=False).env == secret_name(
        "buyer", "Note"
    )


def test_scrub_replaces_secrets_in_every_string_and_turns_values_into_references() -> None:
    known = StepSecrets()
    known.learn(["s3cr3t"])
    step = Action(
        **WHERE,
        op="click",
        locator={"strategy": "role", "value": "button", "name": "Send s3cr3t"},
        value=Value.literal("s3cr3t"),
    )
    clean = known.scrub(step, "buyer")
    assert clean.locator["name"] == "Send [REDACTED]"
    assert clean.value is not None and clean.value.is_secret
    assert clean.value.env is not None and "REDACTED" in clean.value.env
    wait = known.scrub(Wait(**WHERE, condition=TextCondition("is s3cr3t", True)))
    assert wait.condition == TextCondition("is [REDACTED]", True)
    dialog = known.scrub(
        ExpectDialog(dialog_type="prompt", accept=True, prompt_text=Value.literal("s3cr3t"))
    )
    assert dialog.prompt_text is not None and dialog.prompt_text.is_secret
    assert "s3cr3t" not in repr(clean) + repr(wait) + repr(dialog)


def test_nothing_known_leaves_a_step_as_it_is() -> None:
    step = Action(**WHERE, op="fill", locator=LABEL, value=Value.literal("plain"))
    assert StepSecrets().scrub(step) is step


def test_the_oldest_values_are_forgotten_past_the_bound() -> None:
    known = StepSecrets()
    known.learn(f"value-{k:03}" for k in range(MAX_KNOWN_SECRETS + 5))
    assert known.value("a", LABEL, "value-000", secret=False).is_secret is False
    last = f"value-{MAX_KNOWN_SECRETS + 4:03}"
    assert known.value("a", LABEL, last, secret=False).is_secret
