"""The live view spans the fleet (issue 37 with reference §30): three real replica processes with
the view on (tests/support/fleet_cluster.py), one real redis-server, the round-robin balancer in
front, real Chromium. The view's HTTP API is the single server's; only where a request lands
changes.

Alice has a live session on each replica (r1 `near`, r2 `take`, r3 `traced`, whose navigation
was recorded in a trace) and a closed one on r3 (`recorded`: closed after its trace, so its card
stays for the trace's sake, as on a single server); bob has one on r2. Alice's person signs in
and watches through r1, which holds only one of her sessions. One test, one cluster (its
start-up is the main cost), four properties in order; each failure message names the property
and the replicas involved:

1. Sign-in spans the fleet: a link issued by r1 opens on r2 and is redeemed on r3, once for the
   whole fleet (a second redeem on any replica is 401; of three redeems of one code at once on
   the three replicas exactly one wins); the cookie opens the view on every replica.
2. r1's event stream shows alice's sessions of every replica: their cards in the `state` grid
   (the closed one's too) and `frame` pictures of the live ones' pages; bob's session never
   appears.
3. A take-over through r1 of alice's page on r2 drives that page: while held, a second tab
   through r3 is refused (one holder fleet-wide) and input sent through r3 lands too; after the
   hand-back an MCP call through the balancer reads the text typed.
4. The traces of alice's sessions on r3 (live and closed), listed on their cards, download the
   same bytes from every replica; bob's view is refused them.
"""

from __future__ import annotations

import base64
import secrets
import zipfile
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.fixtures.site import FixtureSite
from tests.support.clients import ToolClient
from tests.support.eventually import eventually
from tests.support.fleet_cluster import FleetCluster, Replica, running_cluster
from tests.support.fleet_records import owner_of
from tests.support.http_transport import TOKENS, connect
from tests.support.view_client import new_link, sign_in, view_events

# Above the suite's 180 s: a failure should end on one of the test's own bounds (a replica's
# start, `WAIT_S`), with its message, and the cluster stopped, not be cut off by pytest-timeout.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(420)]

WAIT_S = 60.0
"""Bounds each wait for something the replicas do (a failure, not a success): generous for three
replicas and their Chromiums on a loaded 2-core machine."""
HOLD_DROP_MS = 300_000
"""No hold is dropped for silence while the test runs (it sends no pings)."""
TYPED = "fleet-typed-4e1b"
BOB_CANARY = "bobfleet-9d3e"

NEAR = "<!doctype html><title>Fleet near</title><h1>Near</h1>"
TRACED = "<!doctype html><title>Fleet traced</title><h1 style='color:#36c'>Traced</h1>"
RECORDED = "<!doctype html><title>Fleet recorded</title><h1 style='color:#c63'>Recorded</h1>"
BOB = f"<!doctype html><title>Bob {BOB_CANARY}</title><h1>Bob</h1>"
# One text input over the whole viewport: a click anywhere in the picture focuses it; what is
# typed shows in the title, which any MCP read can see.
TAKE = """<!doctype html><title>Fleet take-over</title>
<style>html,body{margin:0;height:100%}
#note{position:fixed;inset:0;width:100%;height:100%;box-sizing:border-box;font-size:32px}</style>
<input id=note aria-label="Fleet note" oninput="document.title='typed:'+this.value">"""
PAGES = {
    "/fv/near": NEAR,
    "/fv/take": TAKE,
    "/fv/traced": TRACED,
    "/fv/recorded": RECORDED,
    f"/fv/{BOB_CANARY}": BOB,
}


@pytest.fixture
def pages(site: FixtureSite) -> FixtureSite:
    site.pages.update(PAGES)
    return site


@dataclass
class Made:
    """One session made on a replica: its name and ids, the replica, its page's path, its
    trace."""

    name: str
    sid: str
    pid: str
    replica: Replica
    path: str
    trace: dict[str, Any] | None = None

    @property
    def addr(self) -> dict[str, str]:
        return {"sessionId": self.sid, "pageId": self.pid}


@dataclass
class Watched:
    """What a view's event stream sent: its grids and the newest picture of each page."""

    states: list[dict[str, Any]] = field(default_factory=list)
    frames: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)

    def add(self, kind: str, data: dict[str, Any]) -> None:
        self.texts.append(f"{kind}: {data!r}")
        if kind == "state":
            self.states.append(data)
        elif kind == "frame":
            self.frames[(data["sessionId"], data["pageId"])] = data

    def cards(self) -> dict[str, dict[str, Any]]:
        """The newest grid's cards by session id."""
        if not self.states:
            return {}
        return {card["sessionId"]: card for card in self.states[-1]["sessions"]}

    def summary(self) -> str:
        return (
            f"{len(self.states)} state event(s), newest grid's sessions {sorted(self.cards())}; "
            f"pictures of {sorted(self.frames)}"
        )


async def _made_on(
    replica: Replica,
    principal: str,
    name: str,
    site: FixtureSite,
    path: str,
    *,
    trace: bool = False,
    close: bool = False,
) -> Made:
    """A session of `principal` made through `replica`'s own address (so held by it), on
    `path`; with `trace`, the navigation is recorded in a trace (stopped: a kept artifact);
    with `close`, closed at the end."""
    async with connect(replica.url, "auto", TOKENS[principal]) as c:
        sid, pid = await c.session(name=name)
        made = Made(name, sid, pid, replica, path)
        if trace:
            await c.ok("browser_trace", {"sessionId": sid, "action": "start"})
        await c.ok("browser_navigate", {**made.addr, "url": site.url(path)})
        if trace:
            stopped = await c.ok("browser_trace", {"sessionId": sid, "action": "stop"})
            made.trace = stopped["artifact"]
        if close:
            await c.ok("browser_session_close", {"sessionId": sid})
        return made


async def _redeem(http: httpx2.AsyncClient, replica: Replica, code: str) -> httpx2.Response:
    """Continue on the link's page as `replica` serves it (a same-origin form POST); the
    client keeps no cookie from it."""
    try:
        return await http.post(
            replica.base + "/view/login",
            data={"code": code},
            headers={"Origin": replica.base, "Sec-Fetch-Site": "same-origin"},
        )
    finally:
        http.cookies.clear()


def _code(link: str) -> str:
    return link.split("code=", 1)[1]


async def _view_page(http: httpx2.AsyncClient, replica: Replica, cookie: str) -> int:
    return (await http.get(replica.base + "/view/", headers={"Cookie": cookie})).status_code


async def _signs_in_across_the_fleet(
    http: httpx2.AsyncClient, issuer: Replica, opener: Replica, redeemer: Replica
) -> str:
    """Property 1 (module doc); alice's view cookie (``bm_view=...``)."""
    everyone = (issuer, opener, redeemer)
    link = await new_link(issuer, "alice")
    assert link.startswith(issuer.base + "/view/login?code="), link
    code = _code(link)
    opened = await http.get(f"{opener.base}/view/login?code={code}")
    assert opened.status_code == 200, (
        f"property 1: a link issued by {issuer.replica_id} does not open on "
        f"{opener.replica_id}: {opened.status_code}"
    )
    assert "principal <strong>alice</strong>" in opened.text and "set-cookie" not in opened.headers
    redeemed = await _redeem(http, redeemer, code)
    assert redeemed.status_code == 200, (
        f"property 1: a code issued by {issuer.replica_id} is not redeemed on "
        f"{redeemer.replica_id}: {redeemed.status_code}"
    )
    cookie = redeemed.headers["set-cookie"].split(";")[0]
    assert cookie.startswith("bm_view="), redeemed.headers["set-cookie"]
    for replica in everyone:
        again = await _redeem(http, replica, code)
        assert again.status_code == 401 and "set-cookie" not in again.headers, (
            f"property 1: a code redeemed on {redeemer.replica_id} is redeemed again on "
            f"{replica.replica_id}: {again.status_code}"
        )
    for replica in everyone:
        status = await _view_page(http, replica, cookie)
        assert status == 200, (
            f"property 1: the cookie from {redeemer.replica_id} is not taken by "
            f"{replica.replica_id}: GET /view/ answered {status}"
        )
    # One code, three redeems at once on the three replicas: exactly one signs in.
    racing = _code(await new_link(opener, "alice"))
    statuses: dict[int, int] = {}

    async def race(index: int, replica: Replica) -> None:
        async with httpx2.AsyncClient(trust_env=False, timeout=30) as own:
            statuses[index] = (await _redeem(own, replica, racing)).status_code

    async with anyio.create_task_group() as group:
        for index, replica in enumerate(everyone):
            group.start_soon(race, index, replica)
    answers = [statuses[i] for i in range(len(everyone))]
    assert sorted(answers) == [200, 401, 401], (
        f"property 1: one code redeemed at once on {[r.replica_id for r in everyone]}: "
        f"{answers} (exactly one 200 expected)"
    )
    return cookie


async def _watch_until(
    http: httpx2.AsyncClient,
    replica: Replica,
    cookie: str,
    done: Callable[[Watched], bool],
    what: str,
) -> Watched:
    """Read `replica`'s event stream until `done` (or fail after `WAIT_S`, saying what came)."""
    seen = Watched()
    with anyio.move_on_after(WAIT_S) as scope:
        async with aclosing(view_events(http, replica, cookie)) as events:
            async for kind, data in events:
                seen.add(kind, data)
                if done(seen):
                    break
    if scope.cancelled_caught:
        raise AssertionError(
            f"{what}: not seen on {replica.replica_id}'s /view/events within {WAIT_S} s; "
            f"it sent {seen.summary()}"
        )
    return seen


async def _shows_the_fleet(
    http: httpx2.AsyncClient,
    watcher: Replica,
    cookie: str,
    alices: Sequence[Made],
    closed: Sequence[Made],
    bobs: Made,
) -> Watched:
    """Property 2 (module doc): what the stream sent, up to the grid of alice's live and
    `closed` sessions and the pictures of the live ones' pages."""
    wanted = {m.sid for m in [*alices, *closed]}
    pictures = {(m.sid, m.pid) for m in alices}
    where = {m.sid: m.replica.replica_id for m in [*alices, *closed]}

    def complete(seen: Watched) -> bool:
        return wanted <= set(seen.cards()) and pictures <= set(seen.frames)

    seen = await _watch_until(
        http,
        watcher,
        cookie,
        complete,
        f"property 2: the cards and pictures of alice's sessions on {where}",
    )
    cards = seen.cards()
    for made in alices:
        card = cards[made.sid]
        pages = {page["pageId"]: page for page in card["pages"]}
        assert made.pid in pages, f"property 2: {made.replica.replica_id}'s card: {card}"
        assert pages[made.pid]["url"].endswith(made.path), (
            f"property 2: the card of alice's session on {made.replica.replica_id}: {card}"
        )
        picture = base64.b64decode(seen.frames[(made.sid, made.pid)]["data"])
        assert picture.startswith(b"\xff\xd8"), "property 2: a frame is no JPEG"
    for made in closed:
        card = cards[made.sid]
        assert card["status"] == "closed" and card["pages"] == [], (
            f"property 2: the card of alice's closed session on {made.replica.replica_id}: {card}"
        )
    everything = "\n".join(seen.texts)
    assert bobs.sid not in everything and BOB_CANARY not in everything, (
        f"property 2: bob's session on {bobs.replica.replica_id} reached alice's view on "
        f"{watcher.replica_id}"
    )
    return seen


async def _view_post(
    http: httpx2.AsyncClient, replica: Replica, action: str, body: dict[str, Any], cookie: str
) -> httpx2.Response:
    """`POST /view/<action>` from the view as `replica` serves it (its own Origin)."""
    return await http.post(
        f"{replica.base}/view/{action}",
        json=body,
        headers={"Origin": replica.base, "Cookie": cookie},
    )


async def _title(agent: ToolClient, made: Made) -> str:
    title: str = (await agent.ok("browser_get_title", made.addr))["title"]
    return title


async def _takes_over_across_the_fleet(
    http: httpx2.AsyncClient,
    agent: ToolClient,
    cookie: str,
    taken: Made,
    holder: Replica,
    elsewhere: Replica,
    replicas: int,
) -> None:
    """Property 3 (module doc), through `holder` (and `elsewhere`) for `taken`'s page; `agent`
    is alice's MCP client of the balancer."""
    where = f"through {holder.replica_id} for a session on {taken.replica.replica_id}"
    viewer = secrets.token_hex(16)
    hold = {"viewer": viewer, **taken.addr}
    held = await _view_post(http, holder, "hold", hold, cookie)
    assert held.status_code == 200, f"property 3: hold {where}: {held.status_code} {held.text}"
    assert held.json()["heldBy"] == "alice" and held.json()["pageId"] == taken.pid, held.text
    # The owner holds it: the session's view (forwarded to its replica) says who.
    session = (await agent.ok("browser_session_get", {"sessionId": taken.sid}))["session"]
    assert session.get("heldBy") == "alice", f"property 3: held {where}, yet the session: {session}"
    # One holder for the fleet: another tab of alice, through another replica, watches.
    other = {**hold, "viewer": secrets.token_hex(16)}
    second = await _view_post(http, elsewhere, "hold", other, cookie)
    assert second.status_code == 409 and second.json().get("heldBy") == "alice", (
        f"property 3: a second hold through {elsewhere.replica_id} while held {where}: "
        f"{second.status_code} {second.text}"
    )
    # A click in the middle of the picture (the input fills the page), then text: the click
    # through the holder's replica, the text through another one (as a balancer would spread
    # the view's requests).
    click = [{"type": "down", "x": 0.5, "y": 0.5}, {"type": "up", "x": 0.5, "y": 0.5}]
    clicked = await _view_post(
        http, holder, "input", {"viewer": viewer, "sessionId": taken.sid, "events": click}, cookie
    )
    assert clicked.status_code == 200, f"property 3: a click {where}: {clicked.text}"
    text = [{"type": "text", "text": TYPED}]
    typed = await _view_post(
        http, elsewhere, "input", {"viewer": viewer, "sessionId": taken.sid, "events": text}, cookie
    )
    assert typed.status_code == 200, (
        f"property 3: text through {elsewhere.replica_id} for the hold taken {where}: "
        f"{typed.status_code} {typed.text}"
    )
    back = await _view_post(
        http, holder, "release", {"viewer": viewer, "sessionId": taken.sid}, cookie
    )
    assert back.status_code == 200, f"property 3: release {where}: {back.status_code} {back.text}"
    # Through the balancer (each call on the next replica), the page holds what was typed.
    await eventually(
        lambda: _title_is(agent, taken, f"typed:{TYPED}"),
        WAIT_S,
        f"property 3: the text typed {where} reaches the page",
    )
    for _ in range(replicas):
        title = await _title(agent, taken)
        assert title == f"typed:{TYPED}", f"property 3: typed {where}, then the title {title!r}"
    session = (await agent.ok("browser_session_get", {"sessionId": taken.sid}))["session"]
    assert "heldBy" not in session, f"property 3: released {where}, yet the session: {session}"


async def _title_is(agent: ToolClient, made: Made, title: str) -> bool:
    return await _title(agent, made) == title


async def _downloads_anywhere(
    http: httpx2.AsyncClient,
    watched: Watched,
    traced: Made,
    everyone: Sequence[Replica],
    cookie: str,
    bob_cookie: str,
    bob_on: Replica,
) -> None:
    """Property 4 (module doc): the trace listed on the card of `traced`, from every replica."""
    assert traced.trace is not None
    which = f"alice's {traced.name!r} session on {traced.replica.replica_id}"
    artifact_id = traced.trace["artifactId"]
    card = watched.cards()[traced.sid]
    listed = [r for r in card.get("recordings", []) if r["artifactId"] == artifact_id]
    assert listed and listed[0]["kind"] == "trace", (
        f"property 4: the card of {which} does not list its trace {artifact_id}: {card}"
    )
    path = f"/view/artifacts/{traced.sid}/{artifact_id}"
    got: dict[str, bytes] = {}
    for replica in everyone:
        answer = await http.get(replica.base + path, headers={"Cookie": cookie})
        assert answer.status_code == 200, (
            f"property 4: the trace of {which} from {replica.replica_id}: {answer.status_code}"
        )
        assert answer.headers["content-type"] == "application/zip"
        assert answer.headers["content-disposition"].startswith("attachment;")
        got[replica.replica_id] = answer.content
    sizes = {replica_id: len(content) for replica_id, content in got.items()}
    assert len(set(got.values())) == 1, f"property 4: {which}: different bytes (sizes {sizes})"
    content = next(iter(got.values()))
    assert len(content) == traced.trace["size"]
    with zipfile.ZipFile(BytesIO(content)) as archive:
        assert "trace.trace" in archive.namelist()
    refused = await http.get(bob_on.base + path, headers={"Cookie": bob_cookie})
    assert refused.status_code == 404, (
        f"property 4: bob's view on {bob_on.replica_id} got the trace of {which}: "
        f"{refused.status_code}"
    )


@dataclass
class Fleet:
    """The roles the replicas play (module doc); all three may be one replica (a check of the
    test itself against a single replica)."""

    cluster: FleetCluster
    near: Replica
    far: Replica
    other: Replica

    @property
    def everyone(self) -> tuple[Replica, Replica, Replica]:
        return (self.near, self.far, self.other)


async def check_the_fleet_view(fleet: Fleet, site: FixtureSite) -> None:
    """Properties 1-4 (module doc) on `fleet`'s replicas, in order."""
    near, far, other = fleet.near, fleet.far, fleet.other
    alices = [
        await _made_on(near, "alice", "near", site, "/fv/near"),
        await _made_on(far, "alice", "take", site, "/fv/take"),
        await _made_on(other, "alice", "traced", site, "/fv/traced", trace=True),
    ]
    recorded = await _made_on(
        other, "alice", "recorded", site, "/fv/recorded", trace=True, close=True
    )
    bobs = await _made_on(far, "bob", "bobs", site, f"/fv/{BOB_CANARY}")
    for made in [*alices, recorded, bobs]:  # each lives (or lived) where it was made
        assert await owner_of(fleet.cluster, made.sid) == made.replica.replica_id
    _, taken, traced = alices
    async with httpx2.AsyncClient(trust_env=False, timeout=30) as http:
        cookie = await _signs_in_across_the_fleet(http, near, far, other)
        watched = await _shows_the_fleet(http, near, cookie, alices, [recorded], bobs)
        async with connect(fleet.cluster.url, "auto", TOKENS["alice"]) as through_balancer:
            await _takes_over_across_the_fleet(
                http, through_balancer, cookie, taken, near, other, len(fleet.cluster.replicas)
            )
        bob_login = await sign_in(http, near, await new_link(near, "bob"))
        http.cookies.clear()
        assert bob_login.status_code == 200, bob_login.text
        bob_cookie = bob_login.headers["set-cookie"].split(";")[0]
        for made in (traced, recorded):
            await _downloads_anywhere(http, watched, made, fleet.everyone, cookie, bob_cookie, near)


async def test_the_live_view_spans_the_fleet(tmp_path: Path, pages: FixtureSite) -> None:
    """Properties 1-4 of the module doc, through three replicas: r1 issues alice's link and
    watches, r2 holds the session taken over (and bob's), r3 the traced ones."""
    async with running_cluster(
        tmp_path,
        replicas=3,
        view=True,
        extra_args=["--tools", "core,testing"],
        extra_env={"BROWSERMESH_HOLD_DROP_MS": str(HOLD_DROP_MS)},
    ) as cluster:
        near, far, other = cluster.replicas
        await check_the_fleet_view(Fleet(cluster, near, far, other), pages)
