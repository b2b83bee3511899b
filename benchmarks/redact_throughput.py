"""Text-redaction throughput: how fast ``text_redact.redact_text`` reads a 1 MB console log.

Every console line, page error and request-failure text of every page passes the text
redactor (``model.observe``), so its cost is paid per line while a page logs. This builds a
deterministic log of about 1 MB from console lines of the kinds pages print (prose errors, URLs
with queries, JSON bodies, stack lines, and a few credentials), then times:

- ``per line``: ``redact_text`` on each line with the default observability bound (2,048
  characters), as ``model.observe`` calls it;
- ``one string``: ``redact_text`` on the whole log at once (the worst case of a long line).

Each figure is the best of five rounds (the machine is shared; the best round is the one least
disturbed). Run: ``python -m benchmarks.redact_throughput`` (prints the figures; not run by CI).
"""

from __future__ import annotations

import random
import time

from browsermesh.text_redact import redact_text

_LINES = (
    "Failed to load resource: the server responded with a status of 404 (Not Found)",
    "authorization required to access package",
    "session expired, please sign in again",
    "Uncaught TypeError: Cannot read properties of undefined (reading 'token')",
    "GET https://api.example.test/v1/items?page={n}&limit=50 200 (OK)",
    "fetch https://cdn.example.test/assets/app.{n}.js net::ERR_ABORTED",
    '{{"level":"info","msg":"request done","status":200,"durationMs":{n},"path":"/api/cart"}}',
    "    at HTMLButtonElement.onClick (https://shop.example.test/static/js/main.{n}.js:1:{n})",
    'Warning: Each child in a list should have a unique "key" prop.',
    "[HMR] connected; password reset link sent to the user",
    "POST /login?next=/admin/ token=abc{n}def 302",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ7bn0ifQ.c2lnbmF0dXJl{n}",
    'config loaded {{"apiKey": "sk-proj-{n}aB3dE5fG7hJ9kL1mN3pQ5rS7", "region": "eu"}}',
    "The resource was preloaded using link preload but not used within a few seconds.",
    "WebSocket connection to 'wss://live.example.test/socket?session={n}' failed",
)


def build_log(target_bytes: int = 1_000_000, seed: int = 7) -> list[str]:
    """Deterministic console lines adding up to about ``target_bytes`` UTF-8 bytes."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < target_bytes:
        line = rng.choice(_LINES).format(n=rng.randrange(10**6))
        lines.append(line)
        size += len(line.encode()) + 1
    return lines


def _best(rounds: int, run: object) -> float:
    assert callable(run)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    lines = build_log()
    text = "\n".join(lines)
    mb = len(text.encode()) / 1_000_000

    def per_line() -> None:
        for line in lines:
            redact_text(line, max_chars=2048)

    def one_string() -> None:
        redact_text(text, max_chars=len(text) + 1)

    line_s = _best(5, per_line)
    whole_s = _best(5, one_string)
    print(f"log: {mb:.2f} MB, {len(lines)} lines")
    print(
        f"per line:   {line_s * 1000:7.1f} ms  {mb / line_s:6.1f} MB/s  "
        f"{line_s / len(lines) * 1e6:5.2f} us/line"
    )
    print(f"one string: {whole_s * 1000:7.1f} ms  {mb / whole_s:6.1f} MB/s")


if __name__ == "__main__":
    main()
