"""Recurrent layers: RNNCellBase, RNNCell, LSTMCell, GRUCell and RNNBase, RNN, LSTM, GRU.

Note [Recurrent layers as compositions]: an LSTM layer without projections and a GRU layer on
float32/float64 CPU tensors are one C++ op over all time steps (ember._C._nn_lstm_layer /
_nn_gru_layer, Note [Fused LSTM layer] in ops/nn_rnn.cpp). Every other layer is a Python loop over
time steps of C++ ops: the
hidden projection (addmm) and the cell's fused pointwise op (ember._C._nn_lstm_cell_fused /
_nn_gru_cell_fused, ops/nn_rnn.cpp: one pass forward and backward instead of about ten
elementwise ops), so autograd, forward hooks and parametrizations need nothing special. The
top-level ember.lstm/gru/rnn_tanh/rnn_relu functions run the same loop. Per layer and direction the input projection
x W_ih^T + b_ih (+ b_hh where it can be folded in) of every time step is one GEMM over the
flattened (time * batch) rows before the loop; each step then costs one addmm for the hidden
projection and a few pointwise ops. Padded and packed inputs share the loop: a padded batch is a
packed one whose batch sizes are all equal. With packed input a sequence's last hidden state is
put aside when it ends (forward direction), or a sequence's initial state joins the batch when it
starts (reverse direction), so h_n holds each sequence's state at its true length.
"""
import math
import numbers
import warnings

import ember
from ember import _C
from ember.nn import functional as F
from ember.nn import init
from ember.nn.parameter import Parameter
from ember.nn.modules.module import Module
from ember.nn.modules.linear import _factory
from ember.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---- one time step of each cell kind ----
# `g` is the input projection of the step (bias of the hidden projection already added for
# RNN/LSTM, not for GRU whose b_hn sits inside the reset gate), `w_hh_t` is weight_hh transposed.

def _rnn_tanh_step(g, h, w_hh_t):
    return ember.tanh(ember.addmm(g, h, w_hh_t))


def _rnn_relu_step(g, h, w_hh_t):
    return ember.relu(ember.addmm(g, h, w_hh_t))


def _lstm_step(g, h, c, w_hh_t, w_hr_t):
    h, c = _C._nn_lstm_cell_fused(ember.addmm(g, h, w_hh_t), c)
    if w_hr_t is not None:
        h = h.mm(w_hr_t)
    return h, c


def _gru_step(g, h, w_hh_t, b_hh):
    gh = h.mm(w_hh_t) if b_hh is None else ember.addmm(b_hh, h, w_hh_t)
    return _C._nn_gru_cell_fused(g, gh, h)


def _run_direction(mode, steps, batch_sizes, h0, c0, w_hh, b_hh, w_hr, reverse):
    """Runs one layer in one direction over the per-step input projections `steps`.

    h0/c0 hold one row per sequence (sorted by decreasing length); returns the outputs of every
    step concatenated in time order (packed row layout) and the final (h, c)."""
    w_hh_t = w_hh.t()
    w_hr_t = w_hr.t() if w_hr is not None else None
    lstm = mode == "LSTM"
    if mode == "RNN_TANH":
        step = _rnn_tanh_step
    elif mode == "RNN_RELU":
        step = _rnn_relu_step
    outs = []
    n_steps = len(batch_sizes)
    full = h0.shape[0]
    if not reverse:
        h, c = h0, c0
        cur = full
        done_h, done_c = [], []
        for t in range(n_steps):
            bs = batch_sizes[t]
            if bs < cur:  # sequences cur-1 .. bs have ended: keep their last state
                done_h.append(h[bs:])
                h = h[:bs]
                if lstm:
                    done_c.append(c[bs:])
                    c = c[:bs]
                cur = bs
            g = steps[t]
            if lstm:
                h, c = _lstm_step(g, h, c, w_hh_t, w_hr_t)
            elif mode == "GRU":
                h = _gru_step(g, h, w_hh_t, b_hh)
            else:
                h = step(g, h, w_hh_t)
            outs.append(h)
        if done_h:
            h = ember.cat([h] + done_h[::-1], 0)
            if lstm:
                c = ember.cat([c] + done_c[::-1], 0)
    else:
        cur = batch_sizes[-1]
        h = h0 if cur == full else h0[:cur]
        c = (c0 if cur == full else c0[:cur]) if lstm else None
        for t in range(n_steps - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > cur:  # sequences cur .. bs-1 start here (their last step): give them h0
                h = ember.cat([h, h0[cur:bs]], 0)
                if lstm:
                    c = ember.cat([c, c0[cur:bs]], 0)
                cur = bs
            g = steps[t]
            if lstm:
                h, c = _lstm_step(g, h, c, w_hh_t, w_hr_t)
            elif mode == "GRU":
                h = _gru_step(g, h, w_hh_t, b_hh)
            else:
                h = step(g, h, w_hh_t)
            outs.append(h)
        outs.reverse()
    return ember.cat(outs, 0), h, c


def _input_gates(x, w, bias, fold_bias):
    """x's input projection for one layer and direction, w = (w_ih, w_hh[, b_ih, b_hh][, w_hr]); with
    fold_bias (LSTM, RNN) both biases, otherwise (GRU) b_ih alone."""
    if not bias:
        return F.linear(x, w[0])
    return F.linear(x, w[0], w[2] + w[3] if fold_bias else w[2])


def _fused_ok(*ts):
    """Whether one LSTM or GRU layer runs as ember._C._nn_lstm_layer / _nn_gru_layer (Note [Fused LSTM
    layer], ops/nn_rnn.cpp): float32/float64 CPU tensors; vmap and other dtypes or devices run the loop of
    _run_direction."""
    dt = ts[0].dtype
    return (dt in (ember.float32, ember.float64) and all(t.dtype == dt and t.device.type == "cpu" for t in ts)
            and not any(type(t).__name__ == "BatchedTensor" for t in ts))


def _run_stacked(mode, input, batch_sizes, h0, c0, weights, bias, proj, num_layers, dropout, training,
                 bidirectional, batch_first):
    """The stacked, optionally bidirectional layers of an RNN/LSTM/GRU over `input` (padded
    (T, B, *) / (B, T, *) when batch_sizes is None, packed rows otherwise); `weights` is the flat
    per-layer, per-direction list (w_ih, w_hh[, b_ih, b_hh][, w_hr]). Returns output in the input's
    layout, h_n and c_n (None unless LSTM)."""
    if batch_sizes is None:
        x = input.transpose(0, 1) if batch_first else input
        seq_len, batch = x.shape[0], x.shape[1]
        if seq_len == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        x = x.reshape(seq_len * batch, x.shape[2])
        sizes = [batch] * seq_len
    else:
        x, sizes = input, batch_sizes
    if mode not in _GATES:
        raise AssertionError(f"mode must be RNN_TANH, RNN_RELU, LSTM or GRU, got {mode}")
    num_directions = 2 if bidirectional else 1
    lstm = mode == "LSTM"
    fold_bias = mode != "GRU"
    per = len(weights) // (num_layers * num_directions)
    train_dropout = training and dropout > 0
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        if lstm and bidirectional and not proj and not ember.is_grad_enabled():
            # both directions at once, a thread each (ember._C._nn_lstm_layer_pair)
            ks = (2 * layer, 2 * layer + 1)
            ws = [weights[k * per:(k + 1) * per] for k in ks]
            gis = [_input_gates(x, w, bias, fold_bias) for w in ws]
            if _fused_ok(gis[0], gis[1], h0[ks[0]], c0[ks[0]], h0[ks[1]], c0[ks[1]], ws[0][1], ws[1][1]):
                (of, hf, cf), (ob, hb, cb) = _C._nn_lstm_layer_pair(
                    gis[0], gis[1], sizes, h0[ks[0]], c0[ks[0]], ws[0][1], h0[ks[1]], c0[ks[1]], ws[1][1],
                    gates_scratch=True)
                h_n += [hf, hb]
                c_n += [cf, cb]
                outs = [of, ob]
        for direction in range(num_directions if not outs else 0):
            k = layer * num_directions + direction
            w = weights[k * per:(k + 1) * per]
            w_hh = w[1]
            b_ih = b_hh = None
            if bias:
                b_ih, b_hh = w[2], w[3]
            w_hr = w[-1] if proj else None
            gi = _input_gates(x, w, bias, fold_bias)
            if lstm and w_hr is None and _fused_ok(gi, h0[k], c0[k], w_hh):
                # gi is this call's own: the layer may write the activations over it (no graph recorded)
                out, h, c = _C._nn_lstm_layer(gi, sizes, h0[k], c0[k], w_hh, direction == 1, gates_scratch=True)
            elif mode == "GRU" and _fused_ok(gi, h0[k], w_hh, *([b_hh] if b_hh is not None else [])):
                out, h = _C._nn_gru_layer(gi, sizes, h0[k], w_hh, b_hh, direction == 1)
                c = None
            else:
                steps = gi.split(sizes, 0)
                out, h, c = _run_direction(mode, steps, sizes, h0[k], c0[k] if lstm else None, w_hh,
                                           None if fold_bias else b_hh, w_hr, direction == 1)
            outs.append(out)
            h_n.append(h)
            if lstm:
                c_n.append(c)
        x = outs[0] if num_directions == 1 else ember.cat(outs, 1)
        if train_dropout and layer < num_layers - 1:
            x = F.dropout(x, dropout, training=True)
    h_n = ember.stack(h_n, 0)
    c_n = ember.stack(c_n, 0) if lstm else None
    if batch_sizes is None:
        x = x.reshape(seq_len, batch, x.shape[1])
        if batch_first:
            x = x.transpose(0, 1)
    return x, h_n, c_n


def _rnn_function(mode, name):
    """torch.lstm / gru / rnn_tanh / rnn_relu: the functional form of the layers, with both of
    torch's overloads: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) and, for packed data, (data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional). `hx` is (h0, c0) for LSTM."""
    lstm = mode == "LSTM"

    def fn(*args):
        # the packed overload has the parameter list fourth (the padded one has has_biases there)
        packed = len(args) == 9 and isinstance(args[3], (list, tuple))
        if packed:
            data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
            sizes, batch_first = [int(n) for n in batch_sizes.tolist()], False
        elif len(args) == 9:
            data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
            sizes = None
            if data.dim() < 3:  # as torch, which indexes the time and batch dims first
                raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
            if data.dim() != 3:
                raise RuntimeError(f"input must have 3 dimensions, got {data.dim()}")
        else:
            raise TypeError(f"{name}() takes 9 arguments ({len(args)} given)")
        if lstm:
            if not isinstance(hx, (list, tuple)) or len(hx) != 2:
                raise RuntimeError("lstm expects two hidden states")
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        params = list(params)
        num_directions = 2 if bidirectional else 1
        per_bias = 4 if has_biases else 2
        per = len(params) // max(1, num_layers * num_directions)
        proj = lstm and per == per_bias + 1
        if num_layers < 1 or len(params) != per * num_layers * num_directions or per != per_bias + proj:
            raise RuntimeError("got an incorrect number of RNN parameters")
        out, h_n, c_n = _run_stacked(mode, data, sizes, h0, c0, params, has_biases, proj, num_layers, dropout,
                                     train, bidirectional, batch_first)
        return (out, h_n, c_n) if lstm else (out, h_n)

    fn.__name__ = fn.__qualname__ = name
    return fn


lstm = _rnn_function("LSTM", "lstm")
gru = _rnn_function("GRU", "gru")
rnn_tanh = _rnn_function("RNN_TANH", "rnn_tanh")
rnn_relu = _rnn_function("RNN_RELU", "rnn_relu")


class RNNBase(Module):
    """Shared state of RNN, LSTM and GRU: the per-layer, per-direction weights (torch's names and
    registration order), the argument checks and the stacked, optionally bidirectional loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]
    __jit_unused_properties__ = ["all_weights"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        kw = _factory(device, dtype)
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            # torch accepts input_size=True (a size-1 dim) but a bool hidden_size fails in empty()
            if not isinstance(value, int) or (name == "hidden_size" and isinstance(value, bool)):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ember.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    # ---- the flat weight list (read by user code; CPU needs no flattening) ----

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, name) if hasattr(self, name) else None
                              for name in self._flat_weights_names]

    def _update_flat_weights(self):
        self._init_flat_weights()

    def _weights_have_changed(self):
        return False

    def __setattr__(self, attr, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """No-op: the weights are used as they are (the packed-weight layout is a cuDNN matter)."""

    def _apply(self, fn, recurse=True):
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()
        return ret

    def __setstate__(self, state):
        super().__setstate__(state)
        if "proj_size" not in self.__dict__:
            self.proj_size = 0
        if "_flat_weights_names" in self.__dict__:
            self._init_flat_weights()

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # ---- argument checks (torch's messages) ----

    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, real_hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ---- the shared forward machinery ----

    def _prepare(self, input, name):
        """Unpacks a PackedSequence, or checks the rank of a tensor input and gives an unbatched one
        its batch dim. Returns (data, batch_sizes list or None, (batch_sizes, sorted_indices, unsorted_indices) or
        None, is_batched, max_batch)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(n) for n in batch_sizes.tolist()]
            return data, sizes, (batch_sizes, sorted_indices, unsorted_indices), True, sizes[0]
        if input.dim() not in (2, 3):
            msg = "tensor instead" if name == "RNN" else "instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D {msg}")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        max_batch = input.size(0) if self.batch_first else input.size(1)
        return input, None, None, is_batched, max_batch

    def _run(self, input, batch_sizes, h0, c0):
        """The stacked layers over `input` (padded (T, B, *) / (B, T, *) when batch_sizes is None,
        packed rows otherwise). Returns output in the input's layout, h_n and c_n."""
        self._update_flat_weights()
        return _run_stacked(self.mode, input, batch_sizes, h0, c0, self._flat_weights, self.bias, self.proj_size > 0,
                            self.num_layers, self.dropout, self.training, self.bidirectional, self.batch_first)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _forward_one_state(self, input, hx, name):
        """RNN and GRU forward: one hidden state (LSTM has its own, with the cell state)."""
        data, batch_sizes, packed, is_batched, max_batch = self._prepare(input, name)
        num_directions = 2 if self.bidirectional else 1
        if packed is not None:
            if hx is None:
                hx = ember.zeros(self.num_layers * num_directions, max_batch, self.hidden_size, dtype=data.dtype)
            else:
                hx = self.permute_hidden(hx, packed[1])
        else:
            if hx is not None:
                if not is_batched:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
                elif hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            else:
                hx = ember.zeros(self.num_layers * num_directions, max_batch, self.hidden_size, dtype=data.dtype)
        self.check_forward_args(data, hx, batch_sizes)
        output, hidden, _ = self._run(data, batch_sizes, hx, None)
        if packed is not None:
            return (PackedSequence(output, packed[0], packed[1], packed[2]),
                    self.permute_hidden(hidden, packed[2]))
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self_nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self_nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self_nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self_nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nonlinearity

    def forward(self, input, hx=None):
        if self.mode not in ("RNN_TANH", "RNN_RELU"):
            raise AssertionError(f"mode must be RNN_TANH or RNN_RELU, got {self.mode}")
        return self._forward_one_state(input, hx, "RNN")


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o) as torch; with proj_size > 0 the hidden state is
    projected by weight_hr (h_t = W_hr (o_t * tanh(c_t))).

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        data, batch_sizes, packed, is_batched, max_batch = self._prepare(input, "LSTM")
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size

        def zeros():
            return (ember.zeros(self.num_layers * num_directions, max_batch, real_hidden_size, dtype=data.dtype),
                    ember.zeros(self.num_layers * num_directions, max_batch, self.hidden_size, dtype=data.dtype))

        if packed is not None:
            if hx is None:
                hx = zeros()
            else:
                # torch checks no argument of a packed LSTM call here; a wrong input surfaces from the
                # matrix products (RuntimeError). The state sizes are still checked.
                self.check_hidden_size(hx[0], self.get_expected_hidden_size(data, batch_sizes),
                                       "Expected hidden[0] size {}, got {}")
                self.check_hidden_size(hx[1], self.get_expected_cell_size(data, batch_sizes),
                                       "Expected hidden[1] size {}, got {}")
                hx = self.permute_hidden(hx, packed[1])
            if data.dim() != 2:
                raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        else:
            if hx is None:
                hx = zeros()
            else:
                if is_batched:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                else:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(data, hx, batch_sizes)
        output, h_n, c_n = self._run(data, batch_sizes, hx[0], hx[1])
        if packed is not None:
            return (PackedSequence(output, packed[0], packed[1], packed[2]),
                    self.permute_hidden((h_n, c_n), packed[2]))
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit, gates (r, z, n) as torch: n_t = tanh(W_in x_t + b_in + r_t * (W_hn h + b_hn)),
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}.

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_one_state(input, hx, "GRU")


# ---- single cells ----

def _check_cell(input, hiddens, input_size, hidden_size):
    """The size checks of torch's cell ops, on 2-D input and states."""
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {input_size}")
    for i, h in enumerate(hiddens):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {h.size(0)}")
        if h.dim() < 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
        if h.size(1) != hidden_size:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected {hidden_size}")


class RNNCellBase(Module):
    """Shared state of the cells: weight_ih (num_chunks * hidden, input), weight_hh
    (num_chunks * hidden, hidden) and the two biases."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        kw = _factory(device, dtype)
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ember.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(ember.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _input_projection(self, input, fold_bias):
        b_ih, b_hh = self.bias_ih, self.bias_hh
        if b_ih is None:
            return F.linear(input, self.weight_ih)
        return F.linear(input, self.weight_ih, b_ih + b_hh if fold_bias else b_ih)


def _cell_dims(name, input, hidden, what="hidden"):
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    if hidden is not None and hidden.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {hidden.dim()}D instead")


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        _cell_dims("RNNCell", input, hx)
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            step = _rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = _rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        _check_cell(input, (hx,), self.input_size, self.hidden_size)
        ret = step(self._input_projection(input, True), hx, self.weight_hh.t())
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c'), gates (i, f, g, o) as torch."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for i in (0, 1):
                if hx[i].dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{i}] to be 1D or 2D, got {hx[i].dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        elif not isinstance(hx, (tuple, list)):
            raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                            f"{type(hx).__name__}")
        h, c = hx
        _check_cell(input, (h, c), self.input_size, self.hidden_size)
        h, c = _lstm_step(self._input_projection(input, True), h, c, self.weight_hh.t(), None)
        if not is_batched:
            h, c = h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step, gates (r, z, n) as torch."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        _cell_dims("GRUCell", input, hx)
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        _check_cell(input, (hx,), self.input_size, self.hidden_size)
        ret = _gru_step(self._input_projection(input, False), hx, self.weight_hh.t(), self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
