"""The engine layer: the only importer of Playwright (reference §14, §25; docs/architecture.md).

The rules it follows (one bounded wait, one failure translator, owned tasks) are in
docs/architecture.md, "Deadlines and cancellation".

Module map:

- ``protocol``: the engine port, what the runtime may ask of a browser backend.
- ``playwright_engine``: the one implementation of the port; where Playwright objects live.
- ``backends``: the backend kinds (local, CDP, browser servers, Selenium Grid) and launch flags.
- ``slots``: one browser connection each (local Chromium, CDP browser, browser-server endpoint).
- ``grid``: the Selenium Grid backend, one slot per Grid browser session.
- ``grid_client``: the Selenium Grid 4 HTTP client (new session, delete session, status).
- ``abandoned``: creations given up at their deadline, owned until what they made is closed.
- ``bounded``: the one bounded wait and the bounded clean-up (``quietly``).
- ``failures``: the one translator of Playwright failures into codes and reasons.
- ``locators``: the Playwright call of every locator strategy (catalogue ``model.strategies``).
- ``elements``: locating elements (frame chains, strictness, classification) and acting on them.
- ``actionability``: why an existing element cannot act, and how long to wait before saying so.
- ``blocked``: the errors of an element that cannot act or of an element call that ran out.
- ``candidates``: candidates and renewed refs for element errors.
- ``refs``: a page's element-ref registry.
- ``snapshot``: snapshot capture: scope, source budget, ARIA serialization, refs, action table.
- ``page_source``: what a capture may read: the source budget and the page's password values.
- ``page_facts``: a page's notices, and a whole page's facts before a capture in one read.
- ``find``: ``browser_find``'s page side: the page's lines, matched, their elements made refs.
- ``text_match``: the text a page shows, for text waits.
- ``waits``: passive waits and action-and-wait.
- ``navigation``: navigation whose result matches where the page is.
- ``landing``: what a navigation answered: status, title and key text.
- ``quiet``: the one detector of "the page has stopped changing".
- ``changes``: what an interaction changed, the ``changes`` object of every result.
- ``forms``: one field of ``browser_fill_form``, whose element decides the operation.
- ``select``: selecting ``<select>`` options and reading back what is selected.
- ``describe``: the replayable locator of an action's target, for the session's recording.
- ``capture``: screenshots: measure a plan, pre-validate, capture, post-validate.
- ``evaluate``: caller JavaScript in the page, converted to bounded JSON in the page.
- ``files``: file inputs, file choosers, downloads and PDFs.
- ``observers``: page listeners that feed the observation rings.
- ``popups``: popups nobody asked for, reported and closed past the page limit.
- ``crash``: recovering a page whose renderer crashed.
- ``fork``: what a fork copies out of a live context, and how sessionStorage is put back.
- ``policy``: the one request route of a session: network policy and blocked resource types.
- ``guard``: the redirect guard of a session's network policy (Chromium's own interception).
- ``shared_workers``: shared workers in a policy session, closed before they run.
- ``screencast``: the live view's pictures of a page, over CDP.
"""
