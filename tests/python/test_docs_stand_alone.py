"""The docs stand alone: every relative link in README.md and docs/ names a file of this repository, and no
text points outside it (the project's reference notes beside the checkout are not shipped to users)."""

import re

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def documents(root):
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def test_relative_links_resolve_inside_the_repository(root):
    broken = []
    for doc in documents(root):
        for target in LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (doc.parent / target).resolve()
            if not path.is_relative_to(root) or not path.exists():
                broken.append(f"{doc.relative_to(root)}: {target}")
    assert broken == []


def test_no_text_points_outside_the_repository(root):
    outside = [f"{doc.relative_to(root)}:{n}" for doc in documents(root)
               for n, line in enumerate(doc.read_text().splitlines(), 1) if "../shared" in line]
    assert outside == []
