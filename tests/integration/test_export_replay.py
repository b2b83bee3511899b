"""An exported regression test runs green on a fresh copy of the site and red on a broken one
(issue 20): steps built by hand, exported by `model.test_export`, run by pytest-playwright on
this machine's Chromium in a subprocess (tests/support/export_runner.py)."""

from __future__ import annotations

from pathlib import Path

from browsermesh.model.matchers import parse_condition
from browsermesh.model.recording import (
    ActAndWait,
    Action,
    ExpectDialog,
    ExpectDownload,
    ExpectNavigation,
    FormField,
    FormFill,
    Navigate,
    Step,
    Upload,
    UploadFile,
    Value,
    Wait,
    secret_name,
)
from browsermesh.model.test_export import SessionExport, export_pytest
from tests.fixtures.export_site import PASSWORD, ExportSite
from tests.support.export_runner import run_exported, write_export

PASSWORD_ENV = secret_name("buyer", "Password")


def label(text: str) -> dict[str, object]:
    return {"strategy": "label", "value": text, "exact": True}


def role(kind: str, name: str) -> dict[str, object]:
    return {"strategy": "role", "value": kind, "name": name, "exact": True}


def order_flow(base: str) -> list[SessionExport]:
    """A buyer orders (text, password, select, checkbox, upload, dialog, download, submit);
    then an admin, in a context of its own, sees the order."""
    b = {"session_id": "s-buyer", "page_id": "p1"}
    a = {"session_id": "s-admin", "page_id": "p9"}
    buyer: list[Step] = [
        Navigate(seq=1, **b, url=f"{base}/order"),
        Action(seq=2, **b, op="fill", locator=label("Name"), value=Value.literal("Ada")),
        Action(seq=3, **b, op="fill", locator=label("Password"), value=Value.secret(PASSWORD_ENV)),
        FormFill(
            seq=4,
            **b,
            fields=(
                FormField(locator=label("Country"), op="select_option", value=Value.literal("de")),
                FormField(locator=label("Subscribe"), op="check"),
            ),
        ),
        Upload(
            seq=5,
            **b,
            locator=label("Attachment"),
            files=(UploadFile(name="notes.txt", mime_type="text/plain", data=b"hello notes"),),
        ),
        ActAndWait(
            seq=6,
            **b,
            op="click",
            locator=role("button", "Discard draft"),
            expect=ExpectDialog(dialog_type="confirm", accept=True),
        ),
        Wait(seq=7, **b, condition=parse_condition(text_present("Draft discarded"))),
        ActAndWait(
            seq=8,
            **b,
            op="click",
            locator=role("link", "Download invoice"),
            expect=ExpectDownload(suggested_filename="invoice.csv"),
        ),
        ActAndWait(
            seq=10,
            **b,
            op="click",
            locator=role("button", "Place order"),
            expect=ExpectNavigation(),
        ),
        Wait(seq=11, **b, condition=parse_condition(text_present("Password accepted"))),
        Wait(
            seq=13,
            **b,
            condition=parse_condition(
                {
                    "kind": "locator",
                    "locator": {"strategy": "text", "value": "attachment: notes.txt (11 bytes)"},
                    "state": "visible",
                }
            ),
        ),
    ]
    admin: list[Step] = [
        Navigate(seq=9, **a, url=f"{base}/admin"),  # before the order: nothing to see yet
        Navigate(seq=14, **a, url=f"{base}/admin"),
        Wait(seq=15, **a, condition=parse_condition(text_present("Ada from de"))),
    ]
    return [
        SessionExport(
            session_id="s-buyer",
            label="buyer",
            settings={"device": "Pixel 7", "locale": "en-GB"},
            steps=buyer,
        ),
        SessionExport(
            session_id="s-admin",
            label="admin",
            settings={"viewport": {"width": 900, "height": 700}, "colorScheme": "dark"},
            steps=admin,
        ),
    ]


def text_present(text: str) -> dict[str, object]:
    return {"kind": "text", "text": text, "state": "present"}


def test_exported_flow_passes_on_a_fresh_site_and_fails_on_a_broken_one(tmp_path: Path) -> None:
    with ExportSite() as recorded:
        export = export_pytest(order_flow(recorded.base_url))
    assert export.secrets == (PASSWORD_ENV,)
    assert PASSWORD not in export.text and repr(PASSWORD)[1:-1] not in export.text
    test = write_export(tmp_path / "export", export.text)
    with ExportSite() as fresh:
        env = {"BM_BASE_URL": fresh.base_url, PASSWORD_ENV: PASSWORD}
        passed = run_exported(test, env)
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert fresh.orders == [("Ada", "de")]  # the replay ran against the fresh copy
    with ExportSite(broken=True) as broken:
        env = {"BM_BASE_URL": broken.base_url, PASSWORD_ENV: PASSWORD, "BM_TIMEOUT_MS": "2000"}
        failed = run_exported(test, env)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "Place order" in failed.stdout  # the step that broke is named
        assert broken.orders == []
