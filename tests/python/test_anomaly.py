"""Anomaly mode (detect_anomaly / set_detect_anomaly) against torch: errors, warnings, tracebacks."""
import warnings

import pytest
import torch

import ember


def _run(lib, build, **mode):
    """Runs build(lib) under lib's detect_anomaly; returns (error class, message, warning messages)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly(**mode):
            out = build(lib)
            err = None
            try:
                out.backward()
            except Exception as e:  # noqa: BLE001
                err = e
    msgs = [str(x.message) for x in w if x.category is UserWarning]
    return (type(err) if err else None), (str(err) if err else ""), msgs


def _div(lib):
    x = lib.zeros(2, requires_grad=True)
    return (x / x).sum()  # DivBackward0's second gradient is 0/0


def _mul_nan(lib):
    a = lib.zeros(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    return (a * b * float("nan")).sum()


def _log0(lib):
    x = lib.zeros(1, requires_grad=True)
    return lib.log(x).sum()  # gradient inf, not nan: no error


@pytest.mark.parametrize("build", [_div, _mul_nan, _log0])
def test_nan_error_matches_torch(build):
    e_cls, e_msg, e_warn = _run(ember, build)
    t_cls, t_msg, t_warn = _run(torch, build)
    assert (e_cls, e_msg) == (t_cls, t_msg)
    assert e_warn[0] == t_warn[0]  # "Anomaly Detection has been enabled. ..."
    assert len(e_warn) == len(t_warn)
    if e_cls is not None:
        node = e_msg.split("'")[1]
        assert e_warn[-1].startswith(f"Error detected in {node}. Traceback of forward call that caused the error:")


def test_warning_holds_the_forward_traceback():
    def forward_site(lib):
        x = lib.zeros(2, requires_grad=True)
        return (x / x).sum()  # THE FORWARD LINE

    _, msg, warns = _run(ember, forward_site)
    assert msg == "Function 'DivBackward0' returned nan values in its 1th output."
    trace = warns[-1]
    assert f'File "{__file__}"' in trace and "in forward_site" in trace and "# THE FORWARD LINE" in trace
    # the innermost frame is the forward op's line, as in torch's report
    _, _, twarns = _run(torch, forward_site)
    assert trace.strip().splitlines()[-1].strip() == "return (x / x).sum()  # THE FORWARD LINE"
    assert twarns[-1].split("(Triggered internally")[0].strip().splitlines()[-1].strip() == \
        "return (x / x).sum()  # THE FORWARD LINE"


def test_check_nan_false_and_outside_the_mode():
    for lib in (ember, torch):
        e_cls, _, _ = _run(lib, _div, check_nan=False)
        assert e_cls is None
        x = lib.zeros(2, requires_grad=True)
        (x / x).sum().backward()  # no anomaly mode: nan gradients pass
        assert bool(lib.isnan(x.grad).all())


def test_errors_in_a_custom_backward_are_reported_with_the_forward_trace():
    def build(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")

        return Bad.apply(lib.ones(2, requires_grad=True)).sum()

    e_cls, e_msg, e_warn = _run(ember, build)
    t_cls, t_msg, t_warn = _run(torch, build)
    assert (e_cls, e_msg) == (t_cls, t_msg) == (ValueError, "boom")
    assert e_warn[-1].split(".")[0] == t_warn[-1].split(".")[0] == "Error detected in BadBackward"
    assert "Traceback of forward call" in e_warn[-1] and f'File "{__file__}"' in e_warn[-1]


def test_graph_built_outside_the_mode_has_no_forward_trace():
    for lib in (ember, torch):
        x = lib.zeros(2, requires_grad=True)
        y = (x / x).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.set_detect_anomaly(True):
                with pytest.raises(RuntimeError, match=r"returned nan values in its 1th output"):
                    y.backward()
        assert any("No forward pass information available" in str(m.message) for m in w)


def test_set_detect_anomaly_scopes():
    assert not ember.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(True)
    assert ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    ember.autograd.set_detect_anomaly(False)
    assert not ember.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(True, check_nan=False):
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
    assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ember.autograd.detect_anomaly():
            assert ember.is_anomaly_enabled()
    assert not ember.is_anomaly_enabled()
