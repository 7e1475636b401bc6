"""Whether Triton can build its CUDA launcher here: a C compiler and Python's headers, at run time.

On CUDA, the first Triton kernel of a process (vLLM's model runner and LoRA kernels, TRL's fused LM head) makes
Triton compile a small C module, its CUDA driver's ``driver.c`` (``#include <Python.h>``), with the system compiler
(``triton/runtime/build.py`` ``_build``: ``$CC`` as given, else gcc, else clang; the headers from ``sysconfig``'s
include path, Debian's ``posix_local`` scheme read as ``posix_prefix``). A slim or ``-runtime`` image has neither, and
the run stops after the model loaded, with "Failed to find C compiler" or "Python.h: No such file or directory".
Pre-flight (``machine_checks``) and the GPU check's environment row ask here first, on a GPU run only (on CPU these
kernels do not run). Read from Triton 3.9's source; the same rule on a GPU machine is not yet run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig


def c_compiler() -> str | None:
    """The C compiler Triton would run (its path), or None: ``$CC`` if set (Triton runs it as given, so it must be
    found), else gcc, else clang."""
    cc = os.environ.get("CC")
    if cc is not None:
        return shutil.which(cc)
    return shutil.which("gcc") or shutil.which("clang")


def python_include_dir() -> str:
    """Where Triton looks for ``Python.h``: this interpreter's include path, as ``triton/runtime/build.py`` reads it."""
    scheme = sysconfig.get_default_scheme()
    if scheme == "posix_local":
        scheme = "posix_prefix"
    return sysconfig.get_paths(scheme=scheme)["include"]


def triton_build_problem() -> tuple[str, str] | None:
    """(what is missing, what to install) when Triton could not build its launcher here; None when it could, or
    when Triton is not installed (nothing then compiles)."""
    if importlib.util.find_spec("triton") is None:
        return None
    missing = []
    if c_compiler() is None:
        cc = os.environ.get("CC")
        missing.append(f"the C compiler that CC={cc!r} names" if cc is not None else "a C compiler (gcc or clang)")
    include = python_include_dir()
    if not os.path.isfile(os.path.join(include, "Python.h")):
        missing.append(f"Python's headers (no Python.h in {include})")
    if not missing:
        return None
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    problem = (
        "Triton (vLLM's and TRL's GPU kernels) compiles its CUDA launcher at run time and this machine lacks "
        + " and ".join(missing)
    )
    fix = (
        f"install a C compiler and Python {version}'s headers, e.g. apt-get install gcc python{version}-dev "
        "(Debian/Ubuntu; a Python not from the system needs its own headers)"
    )
    return problem, fix
