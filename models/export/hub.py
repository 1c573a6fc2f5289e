"""--model ORG/NAME[@REVISION]: a checkpoint named by its Hugging Face hub id, resolved to a local snapshot
through huggingface_hub, so its cache (HF_HOME, HF_HUB_CACHE), offline mode (HF_HUB_OFFLINE) and token
(HF_TOKEN) apply exactly as they do for transformers."""

import pathlib
import re

# ORG/NAME with the hub's characters; a revision (branch, tag or commit, possibly with slashes) after '@'.
HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>\S+))?$")

# What the exporter reads (config, weights, tokenizer.json, processor and generation settings): other
# files of a repository (PyTorch .bin duplicates, GGUF, ONNX) are not downloaded.
PATTERNS = ["*.json", "*.safetensors"]


def parse(spec):
    """(repo id, revision or None) when `spec` is not an existing path and reads as ORG/NAME[@REVISION]; else None."""
    if pathlib.Path(spec).exists():
        return None
    match = HUB_ID.match(spec)
    if match is None or ".." in match["repo"] or "--" in match["repo"]:
        return None
    return match["repo"], match["revision"]


def resolve(repo_id, revision):
    """(snapshot directory, commit) of the checkpoint; one line naming the repository on any failure."""
    import huggingface_hub
    from huggingface_hub import constants, errors

    asked = f"{repo_id}@{revision}" if revision else repo_id
    try:
        path = huggingface_hub.snapshot_download(repo_id, revision=revision, allow_patterns=PATTERNS)
    except errors.GatedRepoError:
        raise SystemExit(f"export: {asked}: the repository is gated: accept its terms on "
                         f"https://huggingface.co/{repo_id} and set HF_TOKEN to a token of that account") from None
    except errors.RepositoryNotFoundError:
        raise SystemExit(f"export: {asked}: no such model on the Hugging Face hub (if it is private, set HF_TOKEN)") \
            from None
    except errors.RevisionNotFoundError:
        raise SystemExit(f"export: {asked}: the repository has no revision '{revision}'") from None
    except errors.LocalEntryNotFoundError:
        raise SystemExit(f"export: {asked}: {_not_cached(repo_id, revision, constants)}") from None
    except (errors.IncompleteSnapshotError, errors.HfHubHTTPError, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SystemExit(f"export: {asked}: {reason}") from None
    path = pathlib.Path(path)
    return path, path.name


def _not_cached(repo_id, revision, constants):
    """Why the cache could not answer: the repository or only this revision is missing from it."""
    repo_dir = pathlib.Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--"))
    why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else "the hub could not be reached"
    if not repo_dir.is_dir():
        return f"not in the Hugging Face cache {constants.HF_HUB_CACHE} and {why}"
    refs = sorted(p.name for p in (repo_dir / "refs").glob("*") if p.is_file())
    return (f"revision '{revision or 'main'}' is not in the Hugging Face cache {repo_dir} "
            f"(cached: {', '.join(refs) or 'no named revision'}) and {why}")
