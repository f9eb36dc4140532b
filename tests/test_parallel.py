"""Batch helpers: ordered parallel map and the paused garbage collector."""

from __future__ import annotations

import gc

from deid_ds.parallel import ordered_map, relaxed_gc


def test_relaxed_gc_pauses_the_collector_and_restores_its_state():
    assert gc.isenabled()
    with relaxed_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with relaxed_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # was off before: stays off
    finally:
        gc.enable()


def test_relaxed_gc_restores_the_collector_after_an_error():
    try:
        with relaxed_gc():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_ordered_map_in_process_keeps_order():
    assert list(ordered_map(abs, [-3, 1, -2], workers=1)) == [3, 1, 2]
