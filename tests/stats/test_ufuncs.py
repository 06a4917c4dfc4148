"""analyze.ufuncs loads scipy.special's compiled functions without the package's __init__: the
same function objects `scipy.special` exports, and a later ordinary import still works."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _python(code: str) -> str:
    """A fresh interpreter: what is imported depends on what was imported before."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.slow
def test_the_ufuncs_load_without_the_package_and_are_the_ones_it_exports() -> None:
    out = _python("""
        import sys
        from skillassay.stats.ufuncs import ufuncs
        u = ufuncs()
        print("package imported:", "scipy.special" in sys.modules, "f2py:", "numpy.f2py" in sys.modules)
        import scipy.special, scipy.stats
        assert scipy.special._ufuncs is u
        for name in ("ndtri", "stdtrit", "gammaincinv", "betaincinv", "stdtr", "bdtr"):
            assert getattr(scipy.special, name) is getattr(u, name), name
        assert float(scipy.stats.norm.ppf(0.975)) == float(u.ndtri(0.975))
        print("ok")
    """)
    assert out.split() == ["package", "imported:", "False", "f2py:", "False", "ok"]


def test_after_an_ordinary_import_the_same_module() -> None:
    out = _python("""
        import scipy.special
        from skillassay.stats.ufuncs import ufuncs
        print(ufuncs() is scipy.special._ufuncs)
    """)
    assert out.strip() == "True"
