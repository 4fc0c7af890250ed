// Warnings reported every time (warn_once in core/error.h reports each message once).
#pragma once
#include <string>

namespace ember {

// Through the hook set_warn_hook installs (a UserWarning from Python), else to stderr.
void warn(const std::string& msg);

}  // namespace ember
