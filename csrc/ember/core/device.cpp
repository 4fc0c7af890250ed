#include "ember/core/device.h"

#include "ember/core/error.h"

namespace ember {

Device::Device(const std::string& spec) {
  std::string kind = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    std::string num = spec.substr(colon + 1);
    bool digits = !num.empty() && num.size() < 4 && num.find_first_not_of("0123456789") == std::string::npos;
    EMBER_CHECK(digits, "Invalid device string: '", spec, "'");
    index = static_cast<int8_t>(std::stoi(num));
  }
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else {
    EMBER_CHECK(false, "Expected one of cpu, cuda device type at start of device string: ", spec);
  }
}

std::string Device::str() const {
  return index >= 0 ? detail::str_cat(type_name(), ':', static_cast<int>(index)) : type_name();
}

}  // namespace ember
