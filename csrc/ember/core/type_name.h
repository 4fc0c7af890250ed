// The C++ type name of a dtype ("float", "long int", "c10::Half"), as libtorch's TypeMeta prints
// it and torch's error messages spell it.
#pragma once
#include <string_view>

#include "ember/core/dtype.h"

namespace ember {
std::string_view cpp_type_name(ScalarType t);
// libtorch's ScalarType name ("Float", "Long", "ComplexDouble"), as c10::toString gives it.
std::string_view scalar_type_name(ScalarType t);
}  // namespace ember
