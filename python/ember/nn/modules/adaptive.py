"""AdaptiveLogSoftmaxWithLoss (Grave et al., 2017, "Efficient softmax approximation for GPUs") with
torch.nn's interface, parameter names and checks.

The head scores the `cutoffs[0]` most frequent classes plus one logit per tail cluster; cluster i
projects the input to in_features // div_value^(i+1) features and scores its classes from there.
A target's log-probability is the head's for a shortlist class, or the head's log-probability of
its cluster plus the cluster's log-probability of the class; forward evaluates only the clusters
that the batch's targets fall in."""
from collections import namedtuple

import ember
from ember.nn import functional as F
from ember.nn.modules.container import ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection, scores in self.tail:
            projection.reset_parameters()
            scores.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{tuple(input_.size())}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{tuple(input_.size())}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() > 0:
            lo, hi = int(target.min()), int(target.max())
            if lo < 0 or hi > self.n_classes - 1:
                raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                   f"[{lo}, {hi}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        # the shortlist's targets read the head directly; the others their cluster's entry
        in_head = target < self.shortlist_size
        gather_col = ember.where(in_head, target, ember.zeros_like(target))
        output = head_logprob.gather(1, gather_col.unsqueeze(1)).squeeze(1) * in_head.to(head_logprob.dtype)
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = ((target >= low) & (target < high)).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            local = (target.index_select(0, rows) - low).unsqueeze(1)
            logprob = head_logprob.index_select(0, rows)[:, self.shortlist_size + i] + \
                cluster_logprob.gather(1, local).squeeze(1)
            output = output.index_copy(0, rows, logprob)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, low:high] = cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Log-probabilities of every class of a batch: (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each input of a batch (log_prob(input).argmax(1), cheaper when the
        shortlist wins)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if bool(not_in_shortlist.any()):
            rows = not_in_shortlist.nonzero().squeeze(1)
            full = self._full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows))
            output = output.index_copy(0, rows, full.argmax(dim=1))
        return output
