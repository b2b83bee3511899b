"""What a session video shows over the page's pictures (issue 35): the captions of the agent's
calls, the chapter cards and the box around the element a call targets, as one ASS subtitle
file that the encode burns in (engine/video.py).

Texts are kept as given until the file is written: `overlay_ass` then replaces every secret the
session knows by ``[REDACTED]`` (the values known at the end, so a secret learned after its
caption was made is covered too) before it makes them ASS-safe and cuts them, so that a secret is
never cut into a part that no longer matches.

Times are seconds of the video's timeline; coordinates are pixels of the output box
(`PlayResX`/`PlayResY` = the box), so libass draws them where the encode put the picture.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from browsermesh.redact import SecretValues

if TYPE_CHECKING:
    from browsermesh.engine.video import VideoBounds

__all__ = [
    "CAPTION_MAX_S",
    "MARK_MAX_S",
    "TEXT_MAX_CHARS",
    "Caption",
    "Card",
    "Mark",
    "ass_text",
    "overlay_ass",
]

TEXT_MAX_CHARS: Final = 120
"""A caption or a card title is cut to this many characters (one or two lines on the video)."""
CAPTION_MAX_S: Final = 4.0
"""A caption stays at most this long (less when the next caption or a chapter comes first)."""

_FONT: Final = "DejaVu Sans"  # fonts-dejavu-core, installed with ffmpeg's libass on Debian
_CARD_COLOUR: Final = "&H2A1E18&"  # ASS colours are BGR: a dark slate
MARK_MAX_S: Final = 1.5
"""A box stays this long (less when the next box or a chapter comes first): past the action."""
_MARK_COLOUR: Final = "&HFF00FF&"  # magenta (BGR reads the same), as on screenshots


def ass_text(text: str) -> str:
    """`text` as the Text field of an ASS event: one line (line breaks, tabs and other control
    characters become single spaces), at most `TEXT_MAX_CHARS` characters (cut with an
    ellipsis), and nothing libass reads as markup: braces become ``\\{`` / ``\\}`` and every
    backslash is followed by a word joiner (U+2060), so ``\\N`` or ``\\h`` show as written."""
    flat = " ".join(
        "".join(
            " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text
        ).split()
    )
    if len(flat) > TEXT_MAX_CHARS:
        flat = flat[: TEXT_MAX_CHARS - 1].rstrip() + "…"
    return flat.replace("\\", "\\\u2060").replace("{", "\\{").replace("}", "\\}")


def _ass_time(seconds: float) -> str:
    centis = max(0, round(seconds * 100))
    hours, rest = divmod(centis, 360_000)
    minutes, rest = divmod(rest, 6_000)
    whole, centis = divmod(rest, 100)
    return f"{hours}:{minutes:02d}:{whole:02d}.{centis:02d}"


@dataclass(frozen=True, slots=True)
class Card:
    start: float
    end: float
    title: str  # as given (`overlay_ass` redacts and escapes it)


@dataclass(frozen=True, slots=True)
class Caption:
    start: float
    text: str  # as given (`overlay_ass` redacts and escapes it); empty: clears the caption


@dataclass(frozen=True, slots=True)
class Mark:
    """The box around the element a call targets, from `start` for `MARK_MAX_S` (less when the
    next box or a chapter comes first): the element's border box and the viewport it lies in, in
    CSS pixels, and its label (as given; `overlay_ass` redacts and escapes it). The picture is
    the viewport, scaled into the output box and centred (the encode's letterboxing), so the
    box is scaled the same way."""

    start: float
    x: float
    y: float
    width: float
    height: float
    viewport_width: float
    viewport_height: float
    label: str

    def drawing(self, box_w: int, box_h: int) -> list[str]:
        """The ASS event texts: the ring (a transparent shape with a 3 px border) and the
        label above it (inside, at the top, when there is no room above)."""
        if self.viewport_width <= 0 or self.viewport_height <= 0:
            return []
        scale = min(box_w / self.viewport_width, box_h / self.viewport_height)
        left = (box_w - self.viewport_width * scale) / 2
        top = (box_h - self.viewport_height * scale) / 2
        x0 = max(0, round(left + self.x * scale) - 3)
        y0 = max(0, round(top + self.y * scale) - 3)
        x1 = min(box_w, round(left + (self.x + self.width) * scale) + 3)
        y1 = min(box_h, round(top + (self.y + self.height) * scale) + 3)
        if x1 <= x0 or y1 <= y0:
            return []
        ring = (
            rf"{{\an7\pos(0,0)\p1\bord3\1a&HFF&\3c{_MARK_COLOUR}}}"
            f"m {x0} {y0} l {x1} {y0} {x1} {y1} {x0} {y1}"
        )
        size = max(10, box_h // 40)
        above = y0 - 2 >= size
        anchor = rf"\an1\pos({x0},{y0 - 2})" if above else rf"\an7\pos({x0 + 4},{y0 + 4})"
        label = rf"{{{anchor}\fs{size}\bord2\3c{_MARK_COLOUR}}}{self.label}"
        return [ring, label] if self.label else [ring]


def overlay_ass(
    bounds: VideoBounds,
    end: float,
    cards: list[Card],
    captions: list[Caption],
    marks: list[Mark],
    secrets: SecretValues | None = None,
) -> str:
    """The ASS file of one video of `end` seconds. Every text (card titles, captions, box
    labels) is shown with each of `secrets` replaced by ``[REDACTED]``, then `ass_text`: redacted
    before the cut, or a secret near the end of a long text could be cut into a part that no
    longer matches."""
    known = secrets if secrets is not None else SecretValues()

    def shown(text: str) -> str:
        return ass_text(known.text(text))

    cards = [dataclasses.replace(card, title=shown(card.title)) for card in cards]
    captions = [dataclasses.replace(c, text=shown(c.text)) for c in captions]
    marks = [dataclasses.replace(mark, label=shown(mark.label)) for mark in marks]
    w, h, margin = bounds.width, bounds.height, max(8, bounds.height // 36)
    box = f"m 0 0 l {w} 0 {w} {h} 0 {h}"
    lines = [
        f"[Script Info]\nScriptType: v4.00+\nPlayResX: {w}\nPlayResY: {h}\nWrapStyle: 0",
        "ScaledBorderAndShadow: yes\n\n[V4+ Styles]",
        "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, "
        "BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, "
        "BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding",
        # Caption: white on a translucent black box (BorderStyle 3), bottom centre.
        f"Style: Caption,{_FONT},{max(10, h // 24)},&H00FFFFFF,&H00FFFFFF,&H60000000,"
        f"&H60000000,0,0,0,0,100,100,0,0,3,{max(2, h // 120)},0,2,{margin},{margin},"
        f"{margin},1",
        f"Style: Card,{_FONT},{max(12, h // 14)},&H00FFFFFF,&H00FFFFFF,&H00000000,"
        f"&H00000000,1,0,0,0,100,100,0,0,1,0,0,5,{margin},{margin},{margin},1",
        "\n[Events]",
        "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
    ]

    def event(layer: int, start: float, stop: float, style: str, text: str) -> None:
        lines.append(
            f"Dialogue: {layer},{_ass_time(start)},{_ass_time(stop)},{style},,0,0,0,,{text}"
        )

    for card in cards:
        event(0, card.start, card.end, "Card", rf"{{\an7\pos(0,0)\1c{_CARD_COLOUR}\p1}}{box}")
        event(1, card.start, card.end, "Card", rf"{{\an5\pos({w // 2},{h // 2})}}{card.title}")
    for index, caption in enumerate(captions):
        later = [c.start for c in captions[index + 1 :]]
        later += [card.start for card in cards if card.start >= caption.start]
        stop = min([caption.start + CAPTION_MAX_S, end, *later])
        if caption.text and stop > caption.start:
            event(2, caption.start, stop, "Caption", caption.text)
    for index, mark in enumerate(marks):
        later = [m.start for m in marks[index + 1 :]]
        later += [card.start for card in cards if card.start >= mark.start]
        stop = min([mark.start + MARK_MAX_S, end, *later])
        if stop > mark.start:
            for text in mark.drawing(w, h):
                event(3, mark.start, stop, "Card", text)
    return "\n".join(lines) + "\n"
