"""The boxes a session video draws around a call's element (issue 35; engine/video_overlay.py):
where they land in the output box, and how long they stay; and every text of the video with the
session's known secrets redacted."""

from __future__ import annotations

import json
import re

from browsermesh.engine.video import VideoBounds
from browsermesh.engine.video_overlay import (
    MARK_MAX_S,
    TEXT_MAX_CHARS,
    Caption,
    Card,
    Mark,
    overlay_ass,
)
from browsermesh.model.call_label import step_label
from browsermesh.runtime.session import SessionRecord
from browsermesh.runtime.videos import known_secrets


def _ring(text: str) -> tuple[int, int, int, int]:
    found = re.search(r"m (\d+) (\d+) l (\d+) \d+ \d+ (\d+)", text)
    assert found, text
    x0, y0, x1, y1 = (int(v) for v in found.groups())
    return x0, y0, x1, y1


def test_a_box_lands_where_the_letterboxed_picture_shows_the_element() -> None:
    # A 1280x800 viewport in a 1280x720 video: scaled by 0.9, centred (64 px each side).
    mark = Mark(0.0, 100, 100, 200, 50, 1280, 800, 'button "Go"')
    ring, label = mark.drawing(1280, 720)
    assert _ring(ring) == (64 + 90 - 3, 90 - 3, 64 + 270 + 3, 135 + 3)
    assert label.endswith('button "Go"') and r"\pos(151,85)" in label


def test_a_box_at_the_top_edge_puts_its_label_inside_and_stays_in_the_picture() -> None:
    ring, label = Mark(0.0, 0, 0, 1280, 720, 1280, 720, "x").drawing(1280, 720)
    assert _ring(ring) == (0, 0, 1280, 720)
    assert r"\an7\pos(4,4)" in label


def test_no_box_for_an_element_outside_the_picture_or_an_empty_viewport() -> None:
    assert Mark(0.0, 2000, 2000, 10, 10, 1280, 720, "x").drawing(1280, 720) == []
    assert Mark(0.0, 1, 1, 10, 10, 0, 720, "x").drawing(1280, 720) == []


def test_a_box_stays_until_the_next_box_a_card_or_its_time() -> None:
    marks = [Mark(1.0, 10, 10, 10, 10, 1280, 720, "a"), Mark(1.5, 10, 10, 10, 10, 1280, 720, "b")]
    marks.append(Mark(5.0, 10, 10, 10, 10, 1280, 720, "c"))
    text = overlay_ass(VideoBounds(), 9.0, [Card(5.5, 7.0, "Next")], [], marks)
    spans = re.findall(r"Dialogue: 3,([\d:.]+),([\d:.]+),", text)
    starts_ends = sorted(set(spans))
    assert starts_ends == [
        ("0:00:01.00", "0:00:01.50"),  # until the next box
        ("0:00:01.50", f"0:00:0{1.5 + MARK_MAX_S:.2f}"),  # its own time
        ("0:00:05.00", "0:00:05.50"),  # until the card
    ]


SECRET = 'pa"ss-Wörd'  # a quote: a label writes a locator's value JSON-escaped


def test_every_text_of_the_video_shows_the_known_secrets_redacted() -> None:
    rec = SessionRecord("s1", "local", None, {}, "", "", {})
    rec.step_secrets.learn([SECRET])
    label = step_label("browser_click", {"locator": {"strategy": "text", "value": SECRET}})
    assert json.dumps(SECRET, ensure_ascii=False)[1:-1] in label  # not the value as typed
    # Near the end of a long caption: redacted before the cut, or its start would show.
    long = "browser_fill " + "x" * 100 + SECRET * 3
    text = overlay_ass(
        VideoBounds(),
        9.0,
        [Card(5.0, 6.5, f"Log in with {SECRET}")],
        [Caption(0.0, label), Caption(1.0, f"{label} → ok"), Caption(2.0, long)],
        [Mark(0.5, 10, 10, 10, 10, 1280, 720, f'text "{SECRET}"')],
        known_secrets(rec),
    )
    events = [line for line in text.splitlines() if line.startswith("Dialogue:")]
    assert len(events) == 7  # the card's box and title, three captions, a ring and its label
    shown = "\n".join(events)
    assert 'pa"' not in shown and "pa\\" not in shown and "Wörd" not in shown, shown
    assert shown.count("[REDACTED]") == 4, shown  # title, 2 captions, box label (not the ring)
    assert 'browser_click text="[REDACTED]"' in shown
    cut = ("browser_fill " + "x" * 100 + "[REDACTED]")[: TEXT_MAX_CHARS - 1] + "…"
    assert f",{cut}\n" in shown  # the long one: cut after the redaction


def test_without_known_secrets_the_texts_show_as_given() -> None:
    text = overlay_ass(VideoBounds(), 3.0, [], [Caption(0.0, f"browser_click {SECRET}")], [])
    assert f"browser_click {SECRET}" in text
