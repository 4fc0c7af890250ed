"""``ember.hub``, as ``torch.hub``: models published as a ``hubconf.py`` (in a local directory or
a GitHub repository) and weights downloaded once into a cache.

The cache is ``get_dir()``: ``set_dir``'s directory, else ``$TORCH_HOME/hub``, else
``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub`` (torch's, so both share downloads).
A hubconf.py names its entry points as functions and may list ``dependencies`` (module names that
must import). Repositories written for torch import torch in their hubconf; they load with ember
when they import ember instead.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
import warnings
import zipfile

__all__ = ["get_dir", "set_dir", "list", "help", "load", "download_url_to_file", "load_state_dict_from_url"]

_hub_dir = None
_MODULE_HUBCONF = "hubconf.py"
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")  # name-<sha256 prefix>.ext


def get_dir():
    """The directory hub downloads and checkouts go to."""
    if _hub_dir is not None:
        return _hub_dir
    if os.getenv("TORCH_HOME"):
        return os.path.join(os.path.expanduser(os.getenv("TORCH_HOME")), "hub")
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.join(os.path.expanduser(cache), "torch", "hub")


def set_dir(d):
    """Makes d (user-expanded) the hub directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads url to the file dst (through a temporary file beside it, moved into place only
    when complete and, with hash_prefix, when its SHA-256 starts with hash_prefix)."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    sha = hashlib.sha256() if hash_prefix is not None else None
    tmp = tempfile.NamedTemporaryFile(delete=False, dir=folder, prefix=os.path.basename(dst) + ".", suffix=".partial")
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "ember.hub"})
        with urllib.request.urlopen(req) as response:
            total = response.headers.get("Content-Length") if hasattr(response, "headers") else None
            done = 0
            while True:
                chunk = response.read(1 << 16)
                if not chunk:
                    break
                tmp.write(chunk)
                done += len(chunk)
                if sha is not None:
                    sha.update(chunk)
                if progress and total:
                    sys.stderr.write(f"\r{url}: {100 * done // int(total)}%")
            if progress and total:
                sys.stderr.write("\n")
        tmp.close()
        if sha is not None:
            digest = sha.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp.name, dst)
    finally:
        tmp.close()
        if os.path.exists(tmp.name):
            os.remove(tmp.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """ember.load of the file at url, downloaded once into model_dir (default get_dir()/checkpoints).
    check_hash: the file name's "-<hex>." part must prefix the file's SHA-256 (torch's convention).
    A zip holding a single file (torch's legacy format) is extracted first."""
    import ember
    model_dir = os.path.join(get_dir(), "checkpoints") if model_dir is None else os.path.expanduser(model_dir)
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        if progress:
            sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        hash_prefix = None
        if check_hash:
            m = _HASH_IN_NAME.search(filename)
            hash_prefix = m.group(1) if m else None
        download_url_to_file(url, cached, hash_prefix, progress=progress)
    if zipfile.is_zipfile(cached):
        with zipfile.ZipFile(cached) as z:
            names = z.namelist()
            legacy = len(names) == 1 and not names[0].endswith("/") and "data.pkl" not in names[0]
            if legacy:  # a zip around one legacy file, not ember/torch's own zip format
                z.extractall(model_dir)
                cached = os.path.join(model_dir, names[0])
    return ember.load(cached, map_location=map_location, weights_only=weights_only)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, _MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} not found: a hub repository needs a {_MODULE_HUBCONF}")
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [d for d in getattr(module, "dependencies", []) if importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(hubconf, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(hubconf, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _parse_github(repo):
    ref = None
    if ":" in repo:
        repo, ref = repo.split(":", 1)
    if repo.count("/") != 1:
        raise ValueError(f'Invalid input: repo_or_dir should be in the form "repo_owner/repo_name[:ref]", got {repo}')
    owner, name = repo.split("/")
    return owner, name, ref or "main"


def _trusted_list():
    path = os.path.join(get_dir(), "trusted_list")
    if not os.path.exists(path):
        return path, []
    with open(path) as f:
        return path, [line.strip() for line in f if line.strip()]


def _check_trust(owner, name, trust_repo, calling_fn):
    path, trusted = _trusted_list()
    key = f"{owner}_{name}"
    if trust_repo is True or owner in ("pytorch", "facebookresearch") or key in trusted:
        pass
    elif trust_repo is None:
        warnings.warn(f"You are about to download and run code from an untrusted repository ({owner}/{name}). In a "
                      f"future release this will ask for confirmation; pass trust_repo=True to {calling_fn} to "
                      "silence this warning.")
        return
    elif trust_repo in (False, "check"):
        answer = input(f"The repository {owner}/{name} does not belong to the list of trusted repositories and as "
                       "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                       "list of repositories (y/N)?")
        if answer.lower() not in ("y", "yes"):
            raise ValueError("Untrusted repository.")
    else:
        raise ValueError(f"Invalid value for trust_repo: {trust_repo!r}")
    if key not in trusted:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write(key + "\n")


def _github_dir(repo, force_reload, trust_repo, calling_fn, verbose):
    owner, name, ref = _parse_github(repo)
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    _check_trust(owner, name, trust_repo, calling_fn)
    repo_dir = os.path.join(hub_dir, f"{owner}_{name}_{ref.replace('/', '_')}")
    if os.path.exists(repo_dir) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    archive = os.path.join(hub_dir, f"{ref.replace('/', '_')}.zip")
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    if verbose:
        sys.stderr.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    shutil.rmtree(repo_dir, ignore_errors=True)
    with zipfile.ZipFile(archive) as z:
        top = z.namelist()[0].split("/")[0]
        z.extractall(hub_dir)
    os.remove(archive)
    shutil.move(os.path.join(hub_dir, top), repo_dir)
    return repo_dir


def _repo_dir(repo_or_dir, source, force_reload, trust_repo, calling_fn, verbose):
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return os.path.expanduser(os.fspath(repo_or_dir))
    return _github_dir(repo_or_dir, force_reload, trust_repo, calling_fn, verbose)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):  # noqa: A001
    """The entry points a repository's hubconf.py defines."""
    hubconf = _import_hubconf(_repo_dir(github, "github", force_reload, trust_repo, "list", verbose))
    return [f for f in dir(hubconf) if callable(getattr(hubconf, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):  # noqa: A001
    """The docstring of one entry point."""
    hubconf = _import_hubconf(_repo_dir(github, "github", force_reload, trust_repo, "help", True))
    return _entry(hubconf, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Calls entry point ``model`` of the hubconf.py in repo_or_dir ("owner/name[:ref]" on
    GitHub, or a directory with source="local") with args and kwargs."""
    source = source.lower()
    hubconf = _import_hubconf(_repo_dir(repo_or_dir, source, force_reload, trust_repo, "load", verbose))
    return _entry(hubconf, model)(*args, **kwargs)
