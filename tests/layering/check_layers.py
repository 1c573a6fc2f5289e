#!/usr/bin/env python3
"""Fails, naming file and line, when a source includes a folder its layer may not include.

Usage: check_layers.py [--root DIR] [--layers FILE]. The layers file lists each folder and the
folders it may include; a file belongs to the longest listed folder that contains it.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(path):
    allowed = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            sys.exit(f"{path}:{number}: expected 'FOLDER: FOLDERS…', got {line!r}")
        folder, deps = line.split(":", 1)
        allowed[folder.strip()] = set(deps.split())
    for folder, deps in allowed.items():
        for dep in deps - allowed.keys():
            sys.exit(f"{path}: {folder} may include {dep}, which is not a listed folder")
    return allowed


def layer_of(path, layers):
    owners = [f for f in layers if path == f or path.startswith(f + "/")]
    return max(owners, key=len) if owners else None


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=pathlib.Path, default=here.parent.parent)
    parser.add_argument("--layers", type=pathlib.Path, default=here / "layers.txt")
    args = parser.parse_args()
    layers = read_layers(args.layers)

    problems, files = [], 0
    for source in sorted(args.root.rglob("*")):
        if source.suffix not in (".h", ".cpp") or not source.is_file():
            continue
        rel = source.relative_to(args.root).as_posix()
        layer = layer_of(rel, layers)
        if layer is None:  # tests, cmake/, third-party trees
            continue
        files += 1
        for number, line in enumerate(source.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = layer_of(m.group(1), layers)
            if target is not None and target != layer and target not in layers[layer]:
                problems.append(f'{rel}:{number}: includes "{m.group(1)}": {layer} may not include {target}')
    for p in problems:
        print(p)
    if files == 0:
        print(f"no sources found under {args.root}")
        return 1
    print(f"layering: {files} files, {len(problems)} forbidden includes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
