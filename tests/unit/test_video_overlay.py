"""The boxes a session video draws around a call's element (issue 35; engine/video_overlay.py):
where they land in the output box, and how long they stay."""

from __future__ import annotations

import re

from browsermesh.engine.video import VideoBounds
from browsermesh.engine.video_overlay import MARK_MAX_S, Card, Mark, overlay_ass


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
