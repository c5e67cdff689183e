"""`deep_gemm` as another name of hopgemm, on request.

Serving stacks look for DeepGEMM with ``importlib.util.find_spec("deep_gemm")`` and then ``import deep_gemm``.
``hopgemm.provide_deep_gemm()`` puts a finder on ``sys.meta_path`` that answers for ``deep_gemm`` and every
``deep_gemm.x`` with hopgemm's own module objects (``deep_gemm is hopgemm``, ``deep_gemm.utils is hopgemm.utils``: one
state, no second copy of the extension). By default it answers only where no real DeepGEMM is installed: the other
finders are asked first, and a ``deep_gemm`` they find is left to them. ``force=True`` answers regardless (a test that
must run DeepGEMM's code against hopgemm). Nothing happens unless it is called: ``import hopgemm`` alone never makes
``deep_gemm`` importable.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

__all__ = ["provide_deep_gemm", "withdraw_deep_gemm"]

_ALIAS, _TARGET = "deep_gemm", "hopgemm"


def _target_name(fullname):
    """'deep_gemm.utils.math' -> 'hopgemm.utils.math'; None for other names."""
    if fullname == _ALIAS or fullname.startswith(_ALIAS + "."):
        return _TARGET + fullname[len(_ALIAS):]
    return None


class _DeepGemmAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, force):
        self.force = force
        self._own_specs = {}  # alias name -> the spec of the hopgemm module being handed out under it

    def _real_deep_gemm_exists(self, path, target):
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if isinstance(finder, _DeepGemmAlias) or find is None:
                continue
            if find(_ALIAS, path, target) is not None:
                return True
        return False

    def find_spec(self, fullname, path=None, target=None):
        target_name = _target_name(fullname)
        if target_name is None:
            return None
        if fullname == _ALIAS:
            if not self.force and self._real_deep_gemm_exists(path, target):
                return None
        elif sys.modules.get(_ALIAS) is not sys.modules.get(_TARGET):
            return None  # a submodule of a real DeepGEMM: not ours to answer
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name == target_name:
                return None  # deep_gemm.x where hopgemm has no x: the import fails as it would with DeepGEMM
            raise
        return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(module, "__path__"),
                                              loader_state=target_name)

    def create_module(self, spec):
        module = importlib.import_module(spec.loader_state)
        self._own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system has just given hopgemm's module the alias's spec: it keeps its own.
        module.__spec__ = self._own_specs.pop(module.__spec__.name)


def provide_deep_gemm(force: bool = False) -> bool:
    """Make ``import deep_gemm`` (and ``importlib.util.find_spec("deep_gemm")``) give hopgemm where no real DeepGEMM is
    installed (force=True: even where one is). Idempotent; returns whether ``deep_gemm`` now resolves to hopgemm."""
    for finder in sys.meta_path:
        if isinstance(finder, _DeepGemmAlias):
            finder.force = finder.force or force
            break
    else:
        # First in line, so that deep_gemm.x is answered before the path finder would load hopgemm's file a second
        # time under the alias; for deep_gemm itself it asks the other finders first.
        sys.meta_path.insert(0, _DeepGemmAlias(force))
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None:
        return loaded is sys.modules[_TARGET]
    spec = importlib.util.find_spec(_ALIAS)
    return spec is not None and isinstance(spec.loader, _DeepGemmAlias)


def withdraw_deep_gemm() -> None:
    """Undo provide_deep_gemm: remove the finder and the ``deep_gemm`` modules it gave (hopgemm stays imported)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _DeepGemmAlias)]
    for name in [n for n in sys.modules if _target_name(n) is not None]:
        if getattr(sys.modules[name], "__name__", "").startswith(_TARGET):
            del sys.modules[name]
