// Anomaly mode's reports (torch.autograd.detect_anomaly): under it, each node remembers the
// traceback of the forward call that made it (Node::forward_site); when its backward fails or
// returns NaN, the engine warns with that traceback and raises torch's error.
#pragma once
#include <string>

namespace ember::autograd {

class Node;

// The caller's full traceback ("  File "x.py", line 3, in f\n    y = g(x)\n..."); the Python
// bindings install one. Without it (or without the GIL) the forward site is current_site().
using TraceHook = std::string (*)();
void set_forward_trace_hook(TraceHook hook);
std::string forward_trace();

// "Error detected in XBackward0. Traceback of forward call that caused the error: ..." as a warning.
void warn_anomaly(const Node& node);

}  // namespace ember::autograd
