"""ember.hub as torch.hub, offline: the cache directory rules, downloads (file:// URLs) with hash
checks, load_state_dict_from_url's cache, and loading entry points from a hubconf.py (a local
directory, and a GitHub checkout already in the cache)."""
import hashlib
import os
import zipfile

import pytest

import ember
from conftest import torch


def test_get_dir_follows_torch_rules(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    for var, value in (("TORCH_HOME", str(tmp_path / "th")), ("XDG_CACHE_HOME", str(tmp_path / "xdg"))):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        monkeypatch.setenv(var, value)
        monkeypatch.setattr(torch.hub, "_hub_dir", None)
        assert ember.hub.get_dir() == torch.hub.get_dir()
    ember.hub.set_dir(str(tmp_path / "mine"))
    assert ember.hub.get_dir() == str(tmp_path / "mine")


def test_download_with_hash_check(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(b"ember" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = tmp_path / "out" / "blob.bin"
    ember.hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=False)
    assert dst.read_bytes() == src.read_bytes()
    bad = tmp_path / "out" / "bad.bin"
    with pytest.raises(RuntimeError, match="invalid hash value"):
        ember.hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="0000", progress=False)
    assert not bad.exists() and [p.name for p in (tmp_path / "out").iterdir()] == ["blob.bin"]  # no partial file


def test_load_state_dict_from_url_caches(tmp_path):
    sd = {"weight": ember.arange(6.0).reshape(2, 3), "bias": ember.ones(2)}
    ember.save(sd, str(tmp_path / "w.pt"))
    digest = hashlib.sha256((tmp_path / "w.pt").read_bytes()).hexdigest()
    named = tmp_path / f"model-{digest[:10]}.pt"
    os.rename(tmp_path / "w.pt", named)
    cache = tmp_path / "cache"
    got = ember.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(cache), check_hash=True, progress=False,
                                             weights_only=True)
    assert ember.equal(got["weight"], sd["weight"]) and (cache / named.name).exists()
    named.unlink()  # a second call reads the cached copy
    again = ember.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(cache), progress=False)
    assert ember.equal(again["bias"], sd["bias"])
    # torch's legacy form: a zip around one serialized file
    ember.save(sd, str(tmp_path / "inner.pt"))
    with zipfile.ZipFile(tmp_path / "legacy.zip", "w") as z:
        z.write(tmp_path / "inner.pt", "inner.pt")
    legacy = ember.hub.load_state_dict_from_url((tmp_path / "legacy.zip").as_uri(), model_dir=str(cache),
                                                progress=False)
    assert ember.equal(legacy["weight"], sd["weight"])


HUBCONF = '''
dependencies = ["ember"]
import ember


def tiny(out_features=2, *, bias=True):
    """A Linear(3, out_features)."""
    return ember.nn.Linear(3, out_features, bias=bias)


def _private():
    pass
'''


def test_load_local_and_cached_github(tmp_path, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)  # restored after the test's set_dir
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    m = ember.hub.load(str(repo), "tiny", 4, source="local", bias=False)
    assert isinstance(m, ember.nn.Linear) and m.out_features == 4 and m.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable"):
        ember.hub.load(str(repo), "nothing", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        ember.hub.load(str(repo), "tiny", source="ftp")
    (repo / "hubconf.py").write_text(HUBCONF.replace('["ember"]', '["ember", "no_such_module_xyz"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        ember.hub.load(str(repo), "tiny", source="local")
    # a GitHub repository already checked out in the hub directory is used as it is
    ember.hub.set_dir(str(tmp_path / "hub"))
    checkout = tmp_path / "hub" / "owner_proj_main"
    checkout.mkdir(parents=True)
    (checkout / "hubconf.py").write_text(HUBCONF)
    assert ember.hub.list("owner/proj", trust_repo=True, verbose=False) == ["tiny"]
    assert ember.hub.help("owner/proj", "tiny", trust_repo=True).strip() == "A Linear(3, out_features)."
    assert ember.hub.load("owner/proj", "tiny", trust_repo=True, verbose=False).in_features == 3
    assert (tmp_path / "hub" / "trusted_list").read_text().split() == ["owner_proj"]
    with pytest.raises(ValueError):
        ember.hub.load("not-a-repo", "tiny")
