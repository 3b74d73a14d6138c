"""The package as a user meets it: import cost, public surface, layering."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import mars
import mars.oscar

ROOT = pathlib.Path(mars.__file__).parent


def _import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3)]
    return min(runs)


def test_import_mars_is_fast_and_light() -> None:
    # the target is 0.3 s on a 2-core machine; the margin absorbs a loaded CI box
    assert _import_seconds("mars") < 0.6
    code = "import sys, mars; print(sorted(m for m in ('numpy', 'pandas', 'asyncio') if m in sys.modules))"
    loaded = subprocess.check_output([sys.executable, "-c", code], text=True).strip()
    assert loaded == "[]", f"import mars pulled in heavy modules: {loaded}"


def test_oscar_public_api_is_pinned() -> None:
    assert sorted(mars.oscar.__all__) == sorted(
        [
            "Actor", "ActorAlreadyExist", "ActorNotExist", "ActorPool", "ActorRef",
            "AllocateStrategy", "AuthenticationError", "IdleLabel", "LeastLoaded", "MainActorPool", "MainPool",
            "NoMatchingPool", "OscarError", "PoolProcess", "PoolStartError", "ProcessIndex", "RandomLabel",
            "RandomSubPool", "RemoteError", "ServerClosed", "TLSConfig", "actor_ref", "close_connections",
            "create_actor", "create_actor_pool", "destroy_actor", "extensible", "has_actor",
            "get_tls", "get_token", "new_event_loop", "no_lock", "run", "set_tls", "set_token",
        ]
    )
    for name in mars.oscar.__all__:
        assert getattr(mars.oscar, name) is not None


def test_oscar_imports_nothing_else_from_mars() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+(mars\.\w+|\.\.+\w*)", re.M)
    for path in (ROOT / "oscar").rglob("*.py"):
        for match in pattern.finditer(path.read_text()):
            target = match.group(2)
            assert target in ("mars.oscar", "mars.serialization", "..serialization") or target.startswith(
                ("mars.oscar.", "mars.serialization.", "..serialization")
            ), f"{path.name} imports {target}"


def test_serialization_imports_nothing_from_mars() -> None:
    for path in (ROOT / "serialization").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+mars\b|^\s*from\s+\.\.", text, re.M), path.name


def test_mypy_passes_on_oscar_serialization_core_services_and_sessions() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", str(ROOT / "oscar"), str(ROOT / "serialization"), str(ROOT / "core"),
         str(ROOT / "services"), str(ROOT / "session.py"), str(ROOT / "remote.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_unused_imports_or_undefined_names() -> None:
    tree = ROOT.parent
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F,E9", "--quiet",
         str(tree / "mars"), str(tree / "tests"), str(tree / "benchmarks")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _imported_mars_modules(package: str) -> set[tuple[str, str]]:
    """(file, imported module) pairs for the mars modules a package's files import."""
    found = set()
    pattern = re.compile(r"^\s*(?:from|import)\s+(\.+[\w.]*|mars[\w.]*)", re.M)
    for path in (ROOT / package).rglob("*.py"):
        depth = len(path.relative_to(ROOT).parts) - 1  # packages between mars/ and the file
        for match in pattern.finditer(path.read_text()):
            target = match.group(1)
            if target.startswith("."):
                dots = len(target) - len(target.lstrip("."))
                base = list(path.relative_to(ROOT).parts[:depth][: depth - dots + 1])
                target = ".".join(["mars", *base, target.lstrip(".")]).rstrip(".")
            found.add((path.name, target))
    return found


def test_layers_import_downward_only() -> None:
    rules = {
        "core": ("mars.tensor", "mars.dataframe", "mars.services", "mars.session", "mars.deploy"),
        "tensor": ("mars.dataframe", "mars.services", "mars.session", "mars.deploy"),
        # services handle chunk graphs and opaque operators through core only
        "services": ("mars.tensor", "mars.dataframe", "mars.session", "mars.remote", "mars.deploy"),
    }
    for package, forbidden in rules.items():
        for name, target in _imported_mars_modules(package):
            assert not target.startswith(forbidden), f"mars/{package}/{name} imports {target}"
