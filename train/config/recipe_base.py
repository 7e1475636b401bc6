"""A recipe's ``base:`` key: a shared default lives once, in a base file the recipes extend.

TRL's ``TrlParser`` reads one YAML file (``yaml.safe_load``: anchors work inside a file, nothing includes another),
so the GPU recipes repeated the same keys. A recipe may name a base instead::

    base: base/gpu-lora.yaml     # relative to this file
    model_name_or_path: Qwen/Qwen2.5-3B-Instruct   # a key set here replaces the base's value whole (lists too)

``resolve_recipe`` merges the chain (a base may have a base) into the one mapping ``TrlParser`` then reads, as if the
recipe had spelled every key itself; ``train/config/parsing.py`` hands it that mapping, and ``--help`` shows the
resolved values (``train/config/cli_help.py``). A base that is missing, not a mapping, or part of a cycle is a
``ConfigError`` naming the file and the key. Standard library + PyYAML (``--help`` reads it without TRL).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from train.config.arguments import ConfigError

BASE_KEY = "base"


def resolve_recipe(path: str | Path) -> dict:
    """The recipe at ``path`` with its ``base:`` chain merged in (the recipe's own keys win); no ``base`` key left."""
    return _resolve(Path(path), ())


def _resolve(path: Path, chain: tuple[Path, ...]) -> dict:
    values = _mapping(path)
    if BASE_KEY not in values:
        return values
    base = values.pop(BASE_KEY)
    if not isinstance(base, str) or not base:
        raise ConfigError(f"{path}: `{BASE_KEY}:` must name a YAML file (relative to {path.parent}), got {base!r}")
    base_path = (path.parent / base).resolve()
    here = (*chain, path.resolve())
    if base_path in here:
        cycle = " -> ".join(str(p) for p in (*here[here.index(base_path) :], base_path))
        raise ConfigError(f"{path}: `{BASE_KEY}: {base}` makes a cycle of bases ({cycle}); a base cannot extend itself")
    if not base_path.is_file():
        raise ConfigError(f"{path}: `{BASE_KEY}: {base}` does not exist (resolved: {base_path})")
    return {**_resolve(base_path, here), **values}


def _mapping(path: Path) -> dict:
    try:
        values = yaml.safe_load(path.read_text())
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(yaml_error(path, exc)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a YAML text file ({exc}). A config is `key: value` lines.") from None
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: a config must be a YAML mapping of keys to values")
    return values


def yaml_error(path: Path, exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's error (a traceback of the scanner's frames, the file called "<unicode string>") as one line: the file,
    line and column (1-based, as editors count), what is wrong and what to do."""
    mark = exc.problem_mark or exc.context_mark
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
    problem = exc.problem or exc.context or "not valid YAML"
    if "'\\t'" in problem:  # PyYAML names the character '\t'
        return f"{where}: a tab character, which YAML does not allow here. Replace the tab with spaces."
    context = ""
    if exc.context and exc.problem:  # e.g. an unclosed [ : where it opened
        at = exc.context_mark
        context = f" ({exc.context}" + (f" at line {at.line + 1}, column {at.column + 1})" if at else ")")
    return f"{where}: not valid YAML: {problem}{context}. A config is `key: value` lines; fix that line."


def resolved_copy(path: str | Path, directory: str | Path) -> str:
    """Write the resolved recipe to ``directory`` (a YAML file ``TrlParser`` reads as is); its path. Without a
    ``base:`` key anywhere, ``path`` itself."""
    values = _mapping(Path(path))
    if BASE_KEY not in values:
        return str(path)
    target = Path(directory) / f"resolved-{Path(path).name}"
    target.write_text(yaml.safe_dump(resolve_recipe(path), sort_keys=False))
    return str(target)
