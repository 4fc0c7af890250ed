"""Rendezvous: from an init_method URL (env://, tcp://, file://) to a store, a rank and a world size."""
import os
from datetime import timedelta
from urllib.parse import parse_qs, unquote, urlparse

from ember._C import _distributed as _C_dist

__all__ = ["rendezvous", "register_rendezvous_handler"]

_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """Registers handler(url, **kwargs), a generator of (store, rank, world_size), for a URL scheme."""
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    """An iterator over (store, rank, world_size) for the init_method `url`."""
    if not isinstance(url, str):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, int) or not isinstance(world_size, int):
        raise RuntimeError(f"`rank` and `world_size` must be ints, got {rank!r} and {world_size!r}")
    scheme = urlparse(url).scheme
    if scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {scheme}://")
    # rank and world_size given as arguments go into the query, where the handlers look for them.
    if rank != -1 or world_size != -1:
        parsed = urlparse(url)
        query = parse_qs(parsed.query)
        if rank != -1:
            if "rank" in query and int(query["rank"][0]) != rank:
                raise ValueError(f"The rank {rank} conflicts with rank={query['rank'][0]} in init_method {url!r}")
            query["rank"] = [str(rank)]
        if world_size != -1:
            if "world_size" in query and int(query["world_size"][0]) != world_size:
                raise ValueError(f"The world_size {world_size} conflicts with world_size={query['world_size'][0]} "
                                 f"in init_method {url!r}")
            query["world_size"] = [str(world_size)]
        q = "&".join(f"{k}={v[0]}" for k, v in query.items())
        url = parsed._replace(query=q).geturl()
    return _handlers[scheme](url, **kwargs)


def _query_int(query, name, url):
    if name not in query:
        raise ValueError(f"Error initializing ember.distributed using {url}: {name} parameter missing "
                         f"(pass {name}= to init_process_group or put it in the URL)")
    try:
        return int(query[name][0])
    except ValueError:
        raise ValueError(f"{name} in {url!r} is not an integer") from None


def _env_int(name):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set")
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"environment variable {name} is not an integer: {v!r}") from None


def _tcp_store(host, port, rank, world_size, timeout):
    return _C_dist.TCPStore(host, port, world_size, rank == 0, timeout=timeout, wait_for_workers=True)


def _tcp_handler(url, timeout=timedelta(minutes=30), **kwargs):
    parsed = urlparse(url)
    if not parsed.port:
        raise ValueError(f"init_method {url!r} has no port (expected tcp://host:port)")
    query = parse_qs(parsed.query)
    rank = _query_int(query, "rank", url)
    world_size = _query_int(query, "world_size", url)
    yield _tcp_store(parsed.hostname, parsed.port, rank, world_size, timeout), rank, world_size


def _file_handler(url, timeout=timedelta(minutes=30), **kwargs):
    parsed = urlparse(url)
    path = unquote(parsed.path)
    if parsed.netloc:  # file://relative/path
        path = parsed.netloc + path
    if not path:
        raise ValueError(f"init_method {url!r} names no file")
    query = parse_qs(parsed.query)
    rank = _query_int(query, "rank", url)
    world_size = _query_int(query, "world_size", url)
    store = _C_dist.FileStore(path, world_size)
    store.set_timeout(timeout)
    yield store, rank, world_size


def _env_handler(url, timeout=timedelta(minutes=30), **kwargs):
    query = parse_qs(urlparse(url).query)
    rank = int(query["rank"][0]) if "rank" in query else _env_int("RANK")
    world_size = int(query["world_size"][0]) if "world_size" in query else _env_int("WORLD_SIZE")
    addr = os.environ.get("MASTER_ADDR")
    if addr is None:
        raise ValueError("Error initializing ember.distributed using env:// rendezvous: environment variable "
                         "MASTER_ADDR expected, but not set")
    port = _env_int("MASTER_PORT")
    yield _tcp_store(addr, port, rank, world_size, timeout), rank, world_size


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)
register_rendezvous_handler("file", _file_handler)
