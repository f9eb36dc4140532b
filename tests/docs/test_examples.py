"""Every example of README.md and docs/*.md runs as written, from a shell or as a Python script, in a
directory prepared like a checkout after ``make demo`` (on 12 notes): see :mod:`tests.docs.examples`."""

from __future__ import annotations

import shutil

import pytest

from tests.docs.examples import MEASUREMENTS, PAGES, REPO, RUN, SHOWN, blocks, make_checkout, needs_model, run_block

#: At most this many examples may be marked not run, each with its reason.
MAX_NOT_RUN = 6


@pytest.fixture(scope="session")
def checkouts(tmp_path_factory):
    """The small checkouts, made once: without a model, and (on first need) with one."""
    made = {}

    def get(model: bool):
        if model not in made:
            path = tmp_path_factory.mktemp("checkout-model" if model else "checkout")
            make_checkout(path, model=model)
            made[model] = path
        return made[model]

    return get


def test_every_block_says_what_it_is():
    for page in PAGES:
        if page in MEASUREMENTS:  # shell recipes of measurements, never run here
            continue
        for block in blocks(page):
            assert block.language in RUN | SHOWN, f"{block.where()}: a fence needs a language ({sorted(RUN | SHOWN)})"


def test_examples_not_run_are_few_and_say_why():  # the pages of measurements aside (examples.MEASUREMENTS)
    not_run = [block for page in PAGES for block in blocks(page) if block.not_run is not None]
    for block in not_run:
        assert block.not_run.strip(), f"{block.where()}: say why the example is not run"
        assert block.language in RUN, f"{block.where()}: only an example (bash, python) can be marked not run"
    assert len(not_run) <= MAX_NOT_RUN, [block.where() for block in not_run]
    assert sum(block.runs for page in PAGES for block in blocks(page)) >= 20


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [page for page in PAGES if any(block.runs for block in blocks(page))],
    ids=lambda page: str(page.relative_to(REPO)),
)
def test_examples_run_as_written(page, checkouts, tmp_path):
    workdir = tmp_path / "checkout"
    shutil.copytree(checkouts(needs_model(page)), workdir)
    for index, block in enumerate(block for block in blocks(page) if block.runs):
        done = run_block(block, workdir, index)
        assert done.returncode == 0, (
            f"{block.where()} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
