"""`python -m models.export --model ORG/NAME[@REVISION]`: resolved through huggingface_hub's cache (laid out here
as huggingface_hub writes it: models--ORG--NAME/{blobs, refs/main, snapshots/COMMIT}), offline; the manifest records
the repository and commit; an unknown id, a missing revision and a gated repository each fail in one line and leave
no folder."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from models.export.__main__ import main  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def lay_out_cache(hub_cache, repo_id, files_dir, commit=COMMIT):
    """The hub cache holding `files_dir`'s files as commit `commit` of `repo_id`, branch main pointing at it."""
    repo = hub_cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for f in sorted(files_dir.iterdir()):
        data = f.read_bytes()
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        (snapshot / f.name).symlink_to(pathlib.Path("..", "..", "blobs", blob))


@pytest.fixture(scope="module")
def hf_home(tmp_path_factory, tiny_export):
    home = tmp_path_factory.mktemp("hf_home")
    lay_out_cache(home / "hub", "tiny-org/tiny-llava", tiny_export("llava_onevision") / "hf")
    return home


def export(root, hf_home, model, out):
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1"}
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "models.export", "--model", model, "--out", str(out)], cwd=root,
                          env=env, capture_output=True, text=True)


def test_export_by_hub_id_records_repository_and_commit(root, hf_home, tiny_export, tmp_path):
    r = export(root, hf_home, "tiny-org/tiny-llava", tmp_path / "export")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert manifest["source"] == f"tiny-org/tiny-llava@{COMMIT}"
    assert manifest["hub"] == {"repo_id": "tiny-org/tiny-llava", "revision": "main", "commit": COMMIT}
    direct = json.loads((tiny_export("llava_onevision") / "manifest.json").read_text())
    assert {k: v for k, v in manifest.items() if k not in ("source", "hub")} == \
        {k: v for k, v in direct.items() if k != "source"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]  # no staging folder left beside it


@pytest.mark.parametrize("model, message", [
    ("tiny-org/absent", "export: tiny-org/absent: not in the Hugging Face cache {cache} and HF_HUB_OFFLINE is set"),
    ("tiny-org/tiny-llava@v9", "export: tiny-org/tiny-llava@v9: revision 'v9' is not in the Hugging Face cache "
                               "{cache}/models--tiny-org--tiny-llava (cached: main) and HF_HUB_OFFLINE is set"),
], ids=["unknown id", "missing revision"])
def test_unresolvable_hub_id_fails_in_one_line_leaving_no_folder(root, hf_home, tmp_path, model, message):
    r = export(root, hf_home, model, tmp_path / "new" / "export")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [message.format(cache=hf_home / "hub")]
    assert list(tmp_path.iterdir()) == []


def hub_error(kind):
    import httpx2
    from huggingface_hub import errors

    url = "https://huggingface.co/api/models/tiny-org/gated/revision/main"
    response = httpx2.Response(403 if kind == "GatedRepoError" else 404, request=httpx2.Request("GET", url))
    return getattr(errors, kind)(f"{response.status_code} Client Error", response=response)


@pytest.mark.parametrize("kind, message", [
    ("GatedRepoError", "export: tiny-org/gated@main: the repository is gated: accept its terms on "
                       "https://huggingface.co/tiny-org/gated and set HF_TOKEN to a token of that account"),
    ("RepositoryNotFoundError", "export: tiny-org/gated@main: no such model on the Hugging Face hub "
                                "(if it is private, set HF_TOKEN)"),
    ("RevisionNotFoundError", "export: tiny-org/gated@main: the repository has no revision 'main'"),
], ids=["gated", "not found", "no revision"])
def test_hub_refusal_fails_in_one_line_leaving_no_folder(monkeypatch, tmp_path, kind, message):
    """What the hub answers online, raised where huggingface_hub asks it (HfApi.repo_info): no network is used."""
    import huggingface_hub
    from huggingface_hub import constants

    def refuse(*args, **kwargs):
        raise hub_error(kind)

    monkeypatch.setattr(huggingface_hub.HfApi, "repo_info", refuse)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(SystemExit) as exit_:
        main(["--model", "tiny-org/gated@main", "--out", str(tmp_path / "out" / "export")])
    assert str(exit_.value) == message
    assert not (tmp_path / "out").exists()
