#!/usr/bin/env python3
"""Fails, naming file and line, when a source includes a folder its layer may not include, when a
folder holding sources is not listed, or when an include between top-level folders points up.

Usage: check_layers.py [--root DIR] [--layers FILE]. The layers file lists each folder and the
folders it may include; a file belongs to the longest listed folder that contains it. `X/*` makes
each sub-folder of X a layer of its own (a plugin), which never includes a sibling.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(path):
    allowed, order = {}, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            sys.exit(f"{path}:{number}: expected 'FOLDER: FOLDERS…', got {line!r}")
        folder, deps = (part.strip() for part in line.split(":", 1))
        if folder == "@order":
            order = deps.split()
        else:
            allowed[folder] = set(deps.split())
    for folder, deps in allowed.items():
        for dep in deps - allowed.keys():
            sys.exit(f"{path}: {folder} may include {dep}, which is not a listed folder")
    return allowed, order


def layer_of(path, layers):
    """The layer a path belongs to: the longest listed folder holding it; under `X/*`, X/<name>."""
    best, best_len = None, -1
    for folder in layers:
        if folder.endswith("/*"):
            base = folder[:-2]
            rest = path[len(base) + 1:] if path.startswith(base + "/") else ""
            if "/" in rest and len(base) + 2 > best_len:
                best, best_len = f"{base}/{rest.split('/', 1)[0]}", len(base) + 2
        elif (path == folder or path.startswith(folder + "/")) and len(folder) > best_len:
            best, best_len = folder, len(folder)
    return best


def rule_of(layer, layers):
    """The listed line that governs a layer (a plugin's is its `X/*` line)."""
    if layer in layers:
        return layer
    return layer.rsplit("/", 1)[0] + "/*"


def may_include(layer, target, layers):
    if target == layer:
        return True
    deps = layers[rule_of(layer, layers)]
    return target in deps or rule_of(target, layers) in deps and rule_of(target, layers).endswith("/*")


def check_file(rel, text, layers, order):
    layer, problems = layer_of(rel, layers), []
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if layer is None or (folder != layer and not rule_of(layer, layers).endswith("/*")):
        problems.append(f"{rel}: its folder {folder or '.'} is not listed in layers.txt")
        return problems
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        target = layer_of(m.group(1), layers) if m else None
        if target is None:
            continue
        if not may_include(layer, target, layers):
            problems.append(f'{rel}:{number}: includes "{m.group(1)}": {layer} may not include {target}')
        top, target_top = rel.split("/", 1)[0], m.group(1).split("/", 1)[0]
        if top != target_top and order.index(target_top) > order.index(top):
            problems.append(f'{rel}:{number}: includes "{m.group(1)}": {top}/ sits below {target_top}/')
    return problems


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=pathlib.Path, default=here.parent.parent)
    parser.add_argument("--layers", type=pathlib.Path, default=here / "layers.txt")
    args = parser.parse_args()
    layers, order = read_layers(args.layers)

    problems, files = [], 0
    for top in order:
        for source in sorted((args.root / top).rglob("*")):
            if source.suffix not in (".h", ".cpp") or not source.is_file():
                continue
            files += 1
            rel = source.relative_to(args.root).as_posix()
            problems += check_file(rel, source.read_text(errors="replace"), layers, order)
    for p in problems:
        print(p)
    if files == 0:
        print(f"no sources found under {args.root}")
        return 1
    print(f"layering: {files} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
