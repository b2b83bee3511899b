"""engine/navigation: an interrupted navigation is done when the page reached its URL or where
that URL redirected to (issue 32: under a network policy Playwright reported an allowed
redirect's own target as "another navigation", and the call answered NAVIGATION_FAILED)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import Error

from browsermesh.engine import navigation
from browsermesh.errors import BrowserMeshError, ErrorCode
from browsermesh.model.deadline import Deadline, OperationCancelled, OperationContext

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:9"
ERROR_PAGE = "chrome-error://chromewebdata/"


@dataclass
class Request:
    url: str
    frame: object
    redirected_from: Request | None = None

    def is_navigation_request(self) -> bool:
        return True


@dataclass
class Page:
    """A page whose `goto` attempts are scripted: each step gets the page and may emit
    requests, move the page, and raise."""

    steps: list[Callable[[Page, str], None]]
    url: str = "about:blank"
    main_frame: object = field(default_factory=object)
    listeners: list[Callable[[Any], None]] = field(default_factory=list)
    gotos: int = 0

    def on(self, event: str, listener: Callable[[Any], None]) -> None:
        assert event == "request"
        self.listeners.append(listener)

    def remove_listener(self, event: str, listener: Callable[[Any], None]) -> None:
        self.listeners.remove(listener)

    def emit(self, request: Request) -> None:
        for listener in list(self.listeners):
            listener(request)

    async def goto(self, url: str, **_: Any) -> None:
        self.gotos += 1
        self.steps[min(self.gotos, len(self.steps)) - 1](self, url)

    async def wait_for_load_state(self, *_: Any, **__: Any) -> None:
        return None


def _ctx() -> OperationContext:
    return OperationContext("op", Deadline(10_000))


def interrupted_by(target: str, url: str) -> Error:
    return Error(f'Navigation to "{url}" is interrupted by another navigation to "{target}"')


def error_page_commits(page: Page, url: str) -> None:
    page.url = ERROR_PAGE
    raise interrupted_by(ERROR_PAGE, url)


def redirect_reported_as_another_navigation(page: Page, url: str) -> None:
    first = Request(url, page.main_frame)
    page.emit(first)
    page.emit(Request(BASE + "/frame", page.main_frame, redirected_from=first))
    page.url = BASE + "/frame"
    raise interrupted_by(page.url, url)


def someone_else_navigates(page: Page, url: str) -> None:
    page.emit(Request(BASE + "/elsewhere", page.main_frame))
    page.url = BASE + "/elsewhere"
    raise interrupted_by(page.url, url)


async def test_a_redirect_reported_as_another_navigation_is_where_the_page_arrived() -> None:
    page = Page([error_page_commits, redirect_reported_as_another_navigation])
    landed = await navigation.goto(page, BASE + "/redirect?to=/frame", _ctx())  # type: ignore[arg-type]
    assert landed == BASE + "/frame"
    assert page.gotos == 2
    assert page.listeners == []  # the listener goes with the call


async def test_a_navigation_that_is_not_ours_is_still_not_an_answer() -> None:
    page = Page([someone_else_navigates])
    with pytest.raises(BrowserMeshError) as raised:
        await navigation.goto(page, BASE + "/redirect?to=/frame", _ctx())  # type: ignore[arg-type]
    assert raised.value.code == ErrorCode.NAVIGATION_FAILED
    assert page.gotos == navigation.MAX_ATTEMPTS
    assert page.listeners == []


async def test_an_uninterrupted_navigation_listens_to_nothing() -> None:
    def arrives(page: Page, url: str) -> None:
        assert page.listeners == []
        page.url = url

    page = Page([arrives])
    landed = await navigation.goto(page, BASE + "/a", _ctx())  # type: ignore[arg-type]
    assert landed == BASE + "/a"


async def test_a_cancelled_navigation_issues_no_further_attempt() -> None:
    ctx = _ctx()

    def cancelled_meanwhile(page: Page, url: str) -> None:
        ctx.cancelled.set()  # the caller cancels while this attempt runs
        error_page_commits(page, url)

    page = Page([cancelled_meanwhile])
    with pytest.raises(OperationCancelled):
        await navigation.goto(page, BASE + "/a", ctx)  # type: ignore[arg-type]
    assert page.gotos == 1
    assert page.listeners == []
