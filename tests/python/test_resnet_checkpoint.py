"""A ResNet-18-shaped model, built with the same module structure from torch.nn and from ember.nn:
torch's checkpoint (torch.save of its state_dict) loads into the ember model with identical
forward outputs, and ember's checkpoint loads back into torch."""
import numpy as np
import torch

import ember
import ember.nn


def resnet18(nn, num_classes=10):
    """torchvision's ResNet-18 layout (the same state_dict names) over either library's nn."""

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            widths, cin = [64, 128, 256, 512], 64
            for i, w in enumerate(widths):
                stride = 1 if i == 0 else 2
                setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
                cin = w
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet()


def _torch_model(seed):
    torch.manual_seed(seed)
    m = resnet18(torch.nn)
    with torch.no_grad():     # trained-looking batch norms, so eval mode uses nontrivial statistics
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
                mod.num_batches_tracked.fill_(seed + 7)
    return m


def _input(seed):
    return np.random.default_rng(seed).standard_normal((2, 3, 64, 64)).astype(np.float32)


def _same_state(esd, tsd):
    assert list(esd.keys()) == list(tsd.keys())
    for k, t in tsd.items():
        e = esd[k]
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], k
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy(), err_msg=k)


def test_torch_checkpoint_loads_into_ember_resnet18(tmp_path):
    tm = _torch_model(0)
    path = tmp_path / "resnet18_torch.pt"
    torch.save({"model": tm.state_dict(), "epoch": 3, "arch": "resnet18"}, path)
    ckpt = ember.load(path)
    assert ckpt["epoch"] == 3 and ckpt["arch"] == "resnet18"
    em = resnet18(ember.nn)
    result = em.load_state_dict(ckpt["model"])
    assert not result.missing_keys and not result.unexpected_keys
    _same_state(em.state_dict(), tm.state_dict())
    x = _input(1)
    tm.eval(), em.eval()
    with torch.no_grad(), ember.no_grad():
        t_out = tm(torch.from_numpy(x)).numpy()
        e_out = em(ember.tensor(x)).numpy()
    assert e_out.shape == (2, 10)
    np.testing.assert_allclose(e_out, t_out, rtol=1e-4, atol=1e-4)
    # the same weights mapped from the file (copy-on-write) instead of read
    em_mapped = resnet18(ember.nn)
    em_mapped.load_state_dict(ember.load(path, mmap=True)["model"])
    em_mapped.eval()
    with ember.no_grad():
        np.testing.assert_array_equal(em_mapped(ember.tensor(x)).numpy(), e_out)
    # train mode too: batch statistics, and the running statistics both update the same way
    tm.train(), em.train()
    t_out = tm(torch.from_numpy(x)).detach().numpy()
    e_out = em(ember.tensor(x)).detach().numpy()
    np.testing.assert_allclose(e_out, t_out, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(em.layer4[1].bn2.running_var.numpy(), tm.layer4[1].bn2.running_var.numpy(),
                               rtol=1e-5, atol=1e-6)
    assert int(em.bn1.num_batches_tracked) == int(tm.bn1.num_batches_tracked) == 8


def test_ember_checkpoint_loads_into_torch_resnet18(tmp_path):
    em = resnet18(ember.nn)
    em.load_state_dict(ember.load(_save_torch(tmp_path, _torch_model(2))))
    # one training step in ember, so the weights are ember's own, not torch's
    opt = ember.optim.SGD(em.parameters(), lr=0.05, momentum=0.9)
    em.train()
    loss = em(ember.tensor(_input(3))).square().mean()
    loss.backward()
    opt.step()
    path = tmp_path / "resnet18_ember.pt"
    ember.save({"model": em.state_dict(), "optimizer": opt.state_dict()}, path)
    ckpt = torch.load(path)                              # torch's own weights_only loader
    tm = resnet18(torch.nn)
    tm.load_state_dict(ckpt["model"])
    _same_state(em.state_dict(), tm.state_dict())
    topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    topt.load_state_dict(ckpt["optimizer"])
    assert len(topt.state) == len(list(tm.parameters()))
    tm.eval(), em.eval()
    x = _input(4)
    with torch.no_grad(), ember.no_grad():
        np.testing.assert_allclose(em(ember.tensor(x)).numpy(), tm(torch.from_numpy(x)).numpy(),
                                   rtol=1e-4, atol=1e-4)


def _save_torch(tmp_path, tm):
    path = tmp_path / "start.pt"
    torch.save(tm.state_dict(), path)
    return path
