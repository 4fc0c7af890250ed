"""Two hosts on one machine: network namespaces joined by a veth pair (ip netns, iproute2), each
running the launcher for one node; one process group spans both and DDP trains across them.

The namespaces hold only their loopback and their end of the veth pair, so all traffic between
the two nodes stays on that private link. Skipped where namespaces cannot be created (no root or
no CAP_SYS_ADMIN, or no `ip`).
"""
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

from dist_cases import ddp_reference
from dist_harness import child_env

SCRIPT = """
import sys
import dist_cases
dist_cases.ddp_under_launcher(sys.argv[1])
"""


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def two_hosts():
    if shutil.which("ip") is None:
        pytest.skip("iproute2's `ip` is not installed")
    tag = f"em{os.getpid() % 100000}"
    ns = [f"{tag}a", f"{tag}b"]
    subnet = f"10.{200 + os.getpid() % 50}.{os.getpid() % 250}"
    addrs = [f"{subnet}.1", f"{subnet}.2"]
    r = _ip("netns", "add", ns[0], check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot create network namespaces here: {r.stderr.strip()}")
    try:
        _ip("netns", "add", ns[1])
        _ip("link", "add", f"{tag}va", "type", "veth", "peer", "name", f"{tag}vb")
        for n, dev, addr in zip(ns, (f"{tag}va", f"{tag}vb"), addrs):
            _ip("link", "set", dev, "netns", n)
            _ip("-n", n, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", n, "link", "set", dev, "up")
            _ip("-n", n, "link", "set", "lo", "up")
    except subprocess.CalledProcessError as e:
        for n in ns:
            _ip("netns", "del", n, check=False)
        pytest.skip(f"cannot set up the veth pair: {e.stderr.strip()}")
    try:
        yield ns, addrs
    finally:
        for n in ns:  # deleting a namespace deletes its end of the veth pair, and so the pair
            _ip("netns", "del", n, check=False)


def test_ddp_across_two_network_namespaces(two_hosts, tmp_path):
    ns, addrs = two_hosts
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = child_env()
    port = "29512"  # the namespaces have their own port spaces
    procs = []
    for node in (1, 0):
        cmd = ["ip", "netns", "exec", ns[node], sys.executable, "-m", "ember.distributed.run", "--nnodes", "2",
               "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr", addrs[0], "--master-port", port,
               str(script), str(tmp_path)]
        procs.append(subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True))
    for p in procs:
        try:
            _, err = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert p.returncode == 0, err
    res = []
    for r in range(2):
        with open(tmp_path / f"rank{r}.pkl", "rb") as f:
            res.append(pickle.load(f))
    # Each node reached the other through its own veth address.
    assert res[0]["gloo_address"] == (addrs[0], "")
    assert res[1]["gloo_address"] == (addrs[1], "")
    ref = ddp_reference("default", 2, steps=10)
    for r in range(2):
        for name, want in ref.items():
            np.testing.assert_allclose(res[r]["params"][name], want, rtol=1e-5, atol=1e-5, err_msg=f"{name} rank {r}")
