"""Mouse gestures at viewport coordinates (issue 36 item 3, profile `vision`): what
browser_mouse takes, checked before and against the page's viewport."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, get_args

from browsermesh.errors import invalid_argument

__all__ = [
    "DRAG_STEPS",
    "MOUSE_ACTIONS",
    "MOUSE_BUTTONS",
    "MouseAction",
    "MouseButton",
    "MouseGesture",
    "Viewport",
    "check_in_viewport",
    "parse_gesture",
]

MouseAction: TypeAlias = Literal["move", "click", "double_click", "down", "up", "drag", "wheel"]
MouseButton: TypeAlias = Literal["left", "right", "middle"]
MOUSE_ACTIONS: Final[tuple[MouseAction, ...]] = get_args(MouseAction)
MOUSE_BUTTONS: Final[tuple[MouseButton, ...]] = get_args(MouseButton)
DRAG_STEPS: Final = 5
"""Intermediate pointer moves of a drag (pages that track `pointermove` see a path)."""


@dataclass(frozen=True, slots=True)
class Viewport:
    """The page's viewport in CSS pixels and its device scale factor (devicePixelRatio)."""

    width: float
    height: float
    device_scale_factor: float

    def wire(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "height": self.height,
            "deviceScaleFactor": self.device_scale_factor,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class MouseGesture:
    """One browser_mouse gesture in CSS pixels of the viewport: `to` only for `drag`,
    `delta_y` only for `wheel`."""

    action: MouseAction
    x: float
    y: float
    button: MouseButton = "left"
    to: tuple[float, float] | None = None
    delta_y: int = 0

    def points(self) -> list[tuple[str, str, float, float]]:
        """The (x field, y field, x, y) the gesture touches, for the viewport check."""
        out = [("x", "y", self.x, self.y)]
        if self.to is not None:
            out.append(("toX", "toY", self.to[0], self.to[1]))
        return out


def _coordinate(args: Mapping[str, Any], name: str) -> float:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise invalid_argument(name, "number (CSS pixels of the viewport)")
    return float(value)


def parse_gesture(args: Mapping[str, Any], wheel_delta: Callable[[object], int]) -> MouseGesture:
    """browser_mouse's arguments as a gesture; INVALID_ARGUMENT naming the field otherwise
    (toX/toY are required for `drag`, deltaY for `wheel`, checked by `wheel_delta`)."""
    action = args.get("action")
    if action not in MOUSE_ACTIONS:
        raise invalid_argument("action", "one of " + ", ".join(MOUSE_ACTIONS))
    button = args.get("button", "left")
    if button not in MOUSE_BUTTONS:
        raise invalid_argument("button", "one of " + ", ".join(MOUSE_BUTTONS))
    x, y = _coordinate(args, "x"), _coordinate(args, "y")
    to = None
    if action == "drag":
        to = (_coordinate(args, "toX"), _coordinate(args, "toY"))
    delta_y = wheel_delta(args.get("deltaY")) if action == "wheel" else 0
    return MouseGesture(action=action, x=x, y=y, button=button, to=to, delta_y=delta_y)


def check_in_viewport(gesture: MouseGesture, viewport: Viewport) -> None:
    """INVALID_ARGUMENT naming the first coordinate outside the viewport (0 <= x < width,
    0 <= y < height)."""
    for x_name, y_name, x, y in gesture.points():
        for name, value, size in ((x_name, x, viewport.width), (y_name, y, viewport.height)):
            if not 0 <= value < size:
                rule = (
                    f"inside the viewport {viewport.width:g}x{viewport.height:g} "
                    f"(0 <= {name} < {size:g})"
                )
                raise invalid_argument(name, rule)
