"""The HTML pages in a real headless browser: Debian's Chromium, driven by Playwright.

Each page is opened from its file as a user would; the test records every request the page makes and
every console message. A page passes when it renders (title, tables, highlights, the figure decoded
with a real width), logs no error, and asks for nothing but itself and its ``data:`` images: the
hostile note's remote image and script (tests/review/pages.py) must neither load nor run.

Skipped, with the reason, where Chromium or Playwright is missing (``.ci/run`` installs Chromium);
one browser serves the whole session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from deid_ds.evaluation import evaluate
from deid_ds.review import review
from tests.review.pages import HOSTILE_ID, write_inputs

#: A browser and the pages' inputs take seconds to start: ``make test`` runs them, ``-m "not slow"`` skips them.
pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium package (.ci/run does, as root)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pages")
    notes, gold, system = write_inputs(base, n_notes=3)
    evaluate(gold, [system], names=["model"], notes=notes, html=base / "report.html", n_bootstrap=50)
    review(notes, gold, base / "review.html", sample=10, mode="surrogate", key="browser-test-key-not-secret")
    return {"report": base / "report.html", "review": base / "review.html"}


@dataclass
class Visit:
    url: str
    page: object
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if url != self.url and not url.startswith("data:")]


@pytest.fixture
def visit(browser):
    """Open a page file in a fresh context, recording its requests and console errors."""
    contexts = []

    def open_page(path: Path) -> Visit:
        context = browser.new_context(java_script_enabled=True)
        contexts.append(context)
        page = context.new_page()
        seen = Visit(path.resolve().as_uri(), page)
        page.on("request", lambda request: seen.requests.append(request.url))
        page.on("console", lambda message: message.type == "error" and seen.errors.append(message.text))
        page.on("pageerror", lambda error: seen.errors.append(str(error)))
        page.goto(seen.url, wait_until="load")
        return seen

    yield open_page
    for context in contexts:
        context.close()


def test_the_evaluation_report_renders_offline(visit, pages):
    seen = visit(pages["report"])
    page = seen.page
    assert page.title() == "deid-ds evaluation report"
    assert page.locator(".banner").inner_text().startswith("This page holds note text.")
    assert page.locator("table").count() >= 4  # side by side, per label, per document type, examples
    assert page.locator("table").first.locator("thead th").all_inner_texts() == ["micro scores", "model"]
    width = page.eval_on_selector("img.figure", "img => img.complete ? img.naturalWidth : 0")
    assert width > 300
    assert page.locator("table.examples mark").count() >= 3
    assert seen.errors == [] and seen.foreign_requests == []


def test_the_review_page_renders_offline_and_the_hostile_note_stays_text(visit, pages):
    seen = visit(pages["review"])
    page = seen.page
    assert page.title() == "deid-ds review"
    assert page.locator(".banner").inner_text().startswith("This page holds identifiers.")
    assert page.locator("section.reviewed").count() == 4
    assert page.locator(".legend span").count() >= 8
    hostile = page.locator("section.reviewed").filter(has=page.locator(f"h2:text-is('{HOSTILE_ID}')"))
    original = hostile.locator(".note.original")
    assert original.locator("mark").all_inner_texts() == ["Jean DUPONTDOCTOR", "12/03/2020DATE", "RennesVILLE"]
    assert "<script>alert(1)</script>" in original.inner_text()  # shown as text, not run
    assert hostile.locator(".note.deidentified mark").count() == 3
    assert "DUPONT" not in hostile.locator(".note.deidentified").inner_text()
    colours = {m.evaluate("e => getComputedStyle(e).backgroundColor") for m in original.locator("mark").all()}
    assert len(colours) == 3  # a colour per label
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    assert seen.errors == [] and seen.foreign_requests == []


def test_the_checks_see_a_request_leaving_a_page(visit, tmp_path):
    """The recorder works: a page with a remote image (to a port of this machine that serves nothing) is caught."""
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!DOCTYPE html><title>t</title><img src="http://127.0.0.1:9/pixel.png">', encoding="utf-8")
    seen = visit(leaky)
    assert seen.foreign_requests == ["http://127.0.0.1:9/pixel.png"]
