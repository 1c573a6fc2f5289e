"""An export is written into a hidden sibling of --out and renamed into place when complete: a failed or
interrupted export leaves no folder behind (nor a half-overwritten earlier export)."""

import contextlib
import os
import pathlib
import shutil


def _first_missing(path):
    """The outermost ancestor of `path` (itself included) that does not exist yet, or None."""
    missing = None
    for p in [path, *path.parents]:
        if p.exists():
            break
        missing = p
    return missing


@contextlib.contextmanager
def staged(out):
    """Yields the folder to write into; on success it becomes `out` (replacing an earlier export there),
    on any failure it is removed, with every parent folder this call created."""
    out = pathlib.Path(out)
    if out.exists() and not (out.is_dir() and (not any(out.iterdir()) or (out / "manifest.json").exists())):
        raise SystemExit(f"export: --out {out}: exists and is not an export (no manifest.json); not overwritten")
    created = _first_missing(out.parent)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)  # left by an earlier process of the same id, killed
    work.mkdir()
    try:
        yield work
    except BaseException:
        shutil.rmtree(created or work, ignore_errors=True)
        raise
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(old)
        work.rename(out)
        shutil.rmtree(old)
    else:
        work.rename(out)
