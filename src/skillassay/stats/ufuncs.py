"""scipy.special's compiled ufuncs (`scipy.special._ufuncs`: ndtri, stdtrit, gammaincinv,
betaincinv, _binom_sf, ...) without what `import scipy.special` runs besides.

Why: scipy.special's __init__ also sets up its array-API dispatch, which clones numpy's whole
namespace (scipy._lib.array_api_compat.numpy) and so imports numpy.f2py, numpy.testing, numpy.ma,
unittest, charset_normalizer and ~90 codecs: 0.22 CPU-s of a `skillassay aggregate` that spends
about 2.6 in all (20,000 runs), where the extension modules with the functions load in 0.02.
The functions are the very objects `scipy.special` exports (scipy.special.ndtri is
scipy.special._ufuncs.ndtri; tests/analyze/test_ufuncs.py checks it), so every result is the same.

How: the package's submodules are imported under a bare stand-in for the package (its spec and
search path, none of its __init__), which is removed at once; a later `import scipy.special`
then runs the real __init__, which binds the modules already loaded. Anything unexpected (another
scipy layout) falls back to the ordinary import.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types

_PACKAGE = "scipy.special"
_MODULE = "scipy.special._ufuncs"


@functools.cache
def ufuncs() -> types.ModuleType:
    """scipy.special._ufuncs, loaded as cheaply as it can be."""
    if _MODULE in sys.modules or _PACKAGE in sys.modules:
        return importlib.import_module(_MODULE)
    try:
        return _without_package_init()
    except Exception:  # noqa: BLE001 - any surprise: the ordinary (slower) import, same functions
        return importlib.import_module(_MODULE)


def _without_package_init() -> types.ModuleType:
    spec = importlib.util.find_spec(_PACKAGE)  # imports `scipy` itself (~10 ms), not scipy.special
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{_PACKAGE} is not a package here")
    stand_in = types.ModuleType(_PACKAGE)
    stand_in.__spec__ = spec
    stand_in.__path__ = list(spec.submodule_search_locations)
    stand_in.__package__ = _PACKAGE
    before = set(sys.modules)
    sys.modules[_PACKAGE] = stand_in
    try:
        return importlib.import_module(_MODULE)
    except BaseException:
        for name in set(sys.modules) - before:  # nothing half-loaded under the stand-in stays
            if name == _PACKAGE or name.startswith(_PACKAGE + "."):
                del sys.modules[name]
        raise
    finally:
        if sys.modules.get(_PACKAGE) is stand_in:
            del sys.modules[_PACKAGE]


def preload() -> None:
    """Load what the statistics need now (scipy.special's ufuncs): for a caller that is
    otherwise idle (waiting on worker processes). Not scipy.stats or statsmodels (importing
    scipy.stats costs about 1.3 CPU-s, which `aggregate` paid on every call): only the paths
    that use them (Boschloo, the bootstrap, t-test power) import them, when needed."""
    ufuncs()
