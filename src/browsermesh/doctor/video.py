"""The doctor's `video-encoder` check (issue 35): whether `browser_video` can encode here.

Videos are optional, so a missing encoder passes with a warning and the way to install it; the
check only looks for the executable on PATH (it never runs it: a doctor run stays fast).
"""

from __future__ import annotations

from browsermesh.doctor.report import CheckResult, passed
from browsermesh.engine.video import ffmpeg_binary

__all__ = ["VIDEO_INSTALL_HINT", "check_video_encoder"]

VIDEO_INSTALL_HINT = (
    "apt-get install ffmpeg (or BROWSERMESH_VIDEO=1 bash scripts/setup.sh in a checkout)"
)


def check_video_encoder() -> CheckResult:
    """Passed either way: with the encoder, or with a warning naming the install step."""
    if ffmpeg_binary() is not None:
        return passed(
            "video-encoder", "VIDEO_ENCODER_AVAILABLE", "ffmpeg found: browser_video can record."
        )
    return passed(
        "video-encoder",
        "VIDEO_ENCODER_MISSING",
        f"Warning: ffmpeg not found; browser_video needs it. Install: {VIDEO_INSTALL_HINT}.",
    )
