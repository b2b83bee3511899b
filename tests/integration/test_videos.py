"""Session videos on real Chromium (issue 35; reference §33.2): a recording is a valid MP4 (read
back with ffprobe) within its bounds, whose frames change with the page, with the chapter's
card, following the page the calls use; a close while recording still saves it; no caption or
card shows a secret the session knows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from browsermesh.engine import video as video_engine
from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient, tool_client
from tests.support.eventually import eventually
from tests.support.runtimes import real_runtime
from tests.support.traces import read_artifact

pytestmark = pytest.mark.anyio

TESTING = ("core", "observability", "persistence", "files", "testing")
SECRET = "Blue-Pass-417"  # the blue page's password field holds it; a click's locator names it


def _coloured(colour: str, extra: str = "") -> str:
    # The page shows its colour, and says "ready" after a while: a wait on that text lets the
    # recording take pictures of this page (a condition, not a sleep). Its button, at a known
    # place, says "clicked" a while after a click.
    return (
        f"<!doctype html><title>{colour}</title>"
        f"<style>html,body{{margin:0;height:100%;background:{colour}}} button{{position:absolute;"
        "left:200px;top:200px;width:300px;height:100px;border:0;background:#888}</style>"
        "<p id=p>waiting</p><button onclick=\"setTimeout(() => p.textContent = 'clicked', 1200)\">"
        f"Go</button>{extra}"
        "<script>setTimeout(() => { p.textContent = 'ready'; }, 1200)</script>"
    )


def magenta_frames(path: Path) -> int:
    """How many frames show the highlight's magenta on the ring's top edge above the button
    (x 250..450, y 188..199 of the 1280x720 video: the page's viewport at scale 1; the ring is
    3 px outside the box at y 200, its colour blurred by the encoding's chroma subsampling)."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-vf", "crop=200:12:250:188",
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True, timeout=60,
    ).stdout  # fmt: skip
    size = 200 * 12 * 3
    frames = [raw[i : i + size] for i in range(0, len(raw), size)]
    return sum(
        1
        for f in frames
        if any(f[k] > 120 and f[k + 1] < 100 and f[k + 2] > 180 for k in range(0, len(f), 3))
    )


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    # The secret's field and text sit away from the button and its box.
    secret = (
        f"<input type=password value={SECRET} style='position:absolute;left:800px;top:500px'>"
        f"<span style='position:absolute;left:800px;top:560px'>{SECRET}</span>"
    )
    site.pages.update({"/v/red": _coloured("#ff0000"), "/v/blue": _coloured("#0000ff", secret)})
    return site


@pytest.fixture
def overlays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ASS texts (captions, cards, box labels) the encoder hands to ffmpeg."""
    written: list[str] = []
    real = video_engine.overlay_ass

    def spy(*args: Any, **kwargs: Any) -> str:
        text = real(*args, **kwargs)
        written.append(text)
        return text

    monkeypatch.setattr(video_engine, "overlay_ass", spy)
    return written


def probe(path: Path) -> dict[str, object]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-show_streams", "-show_format",
         "-of", "json", str(path)],
        check=True, capture_output=True, timeout=60,
    ).stdout  # fmt: skip
    data: dict[str, object] = json.loads(out)
    return data


def mean_rgb(path: Path, at_s: float) -> tuple[float, float, float]:
    """The mean colour of the video's frame at `at_s` (scaled to 16x16 raw RGB)."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-ss", f"{at_s:.2f}", "-i", str(path), "-frames:v", "1",
         "-vf", "scale=16:16", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, capture_output=True, timeout=60,
    ).stdout  # fmt: skip
    assert len(raw) == 16 * 16 * 3
    n = len(raw) // 3
    return (sum(raw[0::3]) / n, sum(raw[1::3]) / n, sum(raw[2::3]) / n)


async def _show(c: ToolClient, at: dict[str, str], url: str) -> None:
    await c.ok("browser_navigate", {**at, "url": url})
    await c.ok(
        "browser_wait",
        {**at, "condition": {"kind": "text", "text": "ready", "state": "present"}},
    )


async def test_a_video_follows_the_page_with_captions_and_a_card(
    tmp_path: Path, pages: FixtureSite, overlays: list[str]
) -> None:
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        sid, first = await c.session(name="shopper")
        at = {"sessionId": sid, "pageId": first}
        started = await c.ok(
            "browser_video", {"sessionId": sid, "action": "start", "chapter": "Red page"}
        )
        assert started["recording"] is True
        await _show(c, at, pages.url("/v/red"))
        second = (await c.ok("browser_page_create", {"sessionId": sid}))["pageId"]
        blue_card = f"Blue, signed in with {SECRET}"
        await c.ok("browser_video", {"sessionId": sid, "action": "chapter", "chapter": blue_card})
        blue = {"sessionId": sid, "pageId": second}
        await _show(c, blue, pages.url("/v/blue"))
        await c.ok(
            "browser_click",
            {**blue, "locator": {"strategy": "role", "value": "button", "name": "Go"}},
        )
        await c.ok(
            "browser_wait",
            {**blue, "condition": {"kind": "text", "text": "clicked", "state": "present"}},
        )
        # The session knows the blue page's password (its recording read the page's password
        # values at the click above, after the "Blue" card was made); a locator the client
        # wrote names it. No text of the video shows it.
        await c.ok("browser_click", {**blue, "locator": {"strategy": "text", "value": SECRET}})
        bad = await c.err("browser_video", {"sessionId": sid, "action": "chapter"})
        assert bad["details"]["field"] == "chapter"
        out = await c.ok("browser_video", {"sessionId": sid, "action": "stop"})
        artifact = out["artifact"]
        assert artifact["kind"] == "video" and artifact["name"].endswith(".mp4")
        data = await read_artifact(c, sid, artifact["artifactId"])
        assert len(data) == artifact["size"]
    video = tmp_path / "v.mp4"
    video.write_bytes(data)
    info = probe(video)
    stream = next(s for s in info["streams"] if s["codec_type"] == "video")  # type: ignore[attr-defined]
    assert stream["codec_name"] == "h264"
    assert 0 < stream["width"] <= 1280 and 0 < stream["height"] <= 720
    assert stream["width"] % 2 == 0 and stream["height"] % 2 == 0
    duration = float(info["format"]["duration"])  # type: ignore[index]
    assert 2.4 <= duration <= 120, duration  # two pages shown >= 1.2 s each, plus cards
    frames = int(stream["nb_read_frames"])
    assert frames >= duration * 4  # 5 frames a second, a still page included
    # The frames change with the page: red first (after the first card), blue at the end.
    reds = [mean_rgb(video, t) for t in (1.7, 2.0, 2.3)]
    assert any(r > 180 and g < 80 and b < 80 for r, g, b in reds), reds
    r, g, b = mean_rgb(video, duration - 0.3)
    assert b > 150 and r < 80, (r, g, b)
    # The click's element is boxed in magenta while the click runs (nothing else is magenta).
    assert magenta_frames(video) >= 1
    # The first chapter's card is dark, not the page.
    r, g, b = mean_rgb(video, 0.4)
    assert max(r, g, b) < 90, (r, g, b)
    (ass,) = overlays
    assert SECRET not in ass
    assert 'browser_click text="[REDACTED]"' in ass and "Blue, signed in with [REDACTED]" in ass


async def test_close_while_recording_saves_the_video(tmp_path: Path, pages: FixtureSite) -> None:
    async with real_runtime(tmp_path, tools=TESTING) as rt, tool_client(rt) as c:
        sid, pid = await c.session()
        await c.ok("browser_video", {"sessionId": sid, "action": "start"})
        await _show(c, {"sessionId": sid, "pageId": pid}, pages.url("/v/red"))
        await c.ok("browser_session_close", {"sessionId": sid})

        async def saved() -> list[dict[str, object]]:
            listed = await c.ok("browser_downloads", {"sessionId": sid})
            return [a for a in listed.get("artifacts", []) if a["state"] == "completed"]

        # Encoding runs after the close; the closed session's video stays readable.
        (artifact,) = await eventually(saved, 60, "the closed session's video")
        assert artifact["kind"] == "video"
        video = tmp_path / "closed.mp4"
        video.write_bytes(await read_artifact(c, sid, str(artifact["artifactId"])))
        assert float(probe(video)["format"]["duration"]) >= 1.0  # type: ignore[index]
    leftovers = [p.name for p in (tmp_path / "data").rglob("*") if p.suffix in (".raw", ".part")]
    assert leftovers == []
