"""SecretValues and redact_tree: page password values replaced in every string of a tree."""

from __future__ import annotations

from browsermesh.model.aria import parse_aria, redact_tree, render_aria
from browsermesh.redact import SecretValues


def test_longest_value_first_and_empty_ignored() -> None:
    secrets = SecretValues(["ab", "abc", ""])
    assert secrets.text("xabcx ab") == "x[REDACTED]x [REDACTED]"
    assert not SecretValues([""])
    assert "abc" not in repr(secrets)
    assert secrets.optional(None) is None


def test_redact_tree_rebuilds_quoted_keys() -> None:
    secret = 'p"w\\d'
    raw = (
        '- button "Sign in with p\\"w\\\\d" [ref=e1]\n'
        '- textbox "Other": p"w\\d\n'
        '- link "go" [ref=e2]:\n  - /url: /x?q=p"w\\d\n'
    )
    nodes = parse_aria(raw)
    assert nodes[0].name == "Sign in with " + secret
    redact_tree(nodes, SecretValues([secret]))
    text = render_aria(nodes, lambda n: None)
    assert nodes[0].name == "Sign in with [REDACTED]"
    assert 'button "Sign in with [REDACTED]"' in text
    assert 'p\\"w' not in text and secret not in text
    assert nodes[1].value == "[REDACTED]"
    assert nodes[2].props == [("url", "/x?q=[REDACTED]")]


def test_redact_tree_without_secrets_changes_nothing() -> None:
    nodes = parse_aria('- button "OK"')
    redact_tree(nodes, SecretValues())
    assert render_aria(nodes, lambda n: None) == '- button "OK"'
