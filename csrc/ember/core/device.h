// Where a tensor's memory lives.
#pragma once
#include <cstdint>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: the current device of that type

  Device() = default;
  Device(DeviceType t, int idx = -1) : type(t), index(static_cast<int8_t>(idx)) {}  // NOLINT
  explicit Device(const std::string& spec);                                         // "cpu", "cuda", "cuda:1"

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0"
  std::string type_name() const { return is_cpu() ? "cpu" : "cuda"; }
};

}  // namespace ember
