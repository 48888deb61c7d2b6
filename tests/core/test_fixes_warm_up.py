"""fixes.warm_up pays tokenize's first-use cost ahead of the first fix (the server calls it
on its analysis thread at start-up)."""

from __future__ import annotations

import tokenize

import pytest

from pallas_ls.core import fixes


def test_warm_up_compiles_what_the_first_fix_would() -> None:
    cache = getattr(tokenize, "_compile", None)
    if cache is None or not hasattr(cache, "cache_clear"):
        pytest.skip("this Python's tokenize keeps no pattern cache")
    cache.cache_clear()
    fixes.warm_up()
    warmed = cache.cache_info().currsize
    assert warmed >= 1
    # A fix's tokenizing afterwards compiles nothing new.
    assert fixes._tokens("a, opt_level=2, b=3")
    assert cache.cache_info().currsize == warmed
