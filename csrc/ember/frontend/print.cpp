// operator<< for at::Tensor in libtorch's format, so programs print the same text against either
// library. Every value is shown as a double. One format is chosen per printed matrix:
//  - all finite values integers: plain integers, or scientific when the largest needs > 9 digits;
//  - otherwise by the decimal exponents of the smallest and largest finite magnitudes: scientific
//    when they differ by more than 4, else fixed with 4 decimals, pulling out a power-of-ten
//    scale ("1000 *") when the largest is >= 1e5 or < 0.1.
// A 0-d value and the scale are printed in the shortest form that reads back exactly (libtorch
// formats them with fmt's "{}": fixed notation for decimal exponents -4..15, else d.dde+XX). Matrices wider than
// the line are cut into "Columns a to b" blocks; tensors above 2-d print their 2-d slices headed "(i,j,.,.) = ", the
// first index varying fastest (as libtorch).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "ember/autograd/grad_mode.h"
#include "ember/frontend/tensor.h"

namespace at {

namespace {

// Restores the stream's flags, precision and fill when a print is done.
class StreamState {
 public:
  explicit StreamState(std::ostream& os) : os_(os), flags_(os.flags()), precision_(os.precision()), fill_(os.fill()) {}
  ~StreamState() {
    os_.flags(flags_);
    os_.precision(precision_);
    os_.fill(fill_);
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

 private:
  std::ostream& os_;
  std::ios_base::fmtflags flags_;
  std::streamsize precision_;
  char fill_;
};

struct Format {
  double scale = 1;
  int width = 11;
};

// Chooses the notation for `n` values and sets it on the stream.
Format choose_format(std::ostream& os, const double* v, int64_t n) {
  Format f;
  if (n == 0) {
    f.width = 0;
    return f;
  }
  bool integers = true;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(v[i]) && v[i] != std::ceil(v[i])) {
      integers = false;
      break;
    }
  double lo = 1, hi = 1;  // decimal exponents (digits before the point) of the finite magnitudes
  int64_t first = 0;
  while (first < n && !std::isfinite(v[first])) ++first;
  if (first < n) {
    double mn = std::fabs(v[first]), mx = mn;
    for (int64_t i = first; i < n; ++i)
      if (std::isfinite(v[i])) {
        mn = std::min(mn, std::fabs(v[i]));
        mx = std::max(mx, std::fabs(v[i]));
      }
    lo = mn != 0 ? std::floor(std::log10(mn)) + 1 : 1;
    hi = mx != 0 ? std::floor(std::log10(mx)) + 1 : 1;
  }
  if (integers) {
    if (hi > 9) {
      f.width = 11;
      os << std::scientific << std::setprecision(4);
    } else {
      f.width = static_cast<int>(hi) + 1;
      os << std::defaultfloat;
    }
  } else if (hi - lo > 4) {
    f.width = (std::fabs(hi) > 99 || std::fabs(lo) > 99) ? 12 : 11;
    os << std::scientific << std::setprecision(4);
  } else {
    if (hi > 5 || hi < 0) {
      f.width = 7;
      f.scale = std::pow(10, hi - 1);
    } else {
      f.width = hi == 0 ? 7 : static_cast<int>(hi) + 6;
    }
    os << std::fixed << std::setprecision(4);
  }
  return f;
}

// The shortest decimal that reads back as v, in fmt's default notation.
std::string shortest(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-2.7792006731033325e-01"
  std::string sign = sci[0] == '-' ? "-" : "";
  if (!sign.empty()) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int exp = std::stoi(sci.substr(e + 1));
  std::string out = sign;
  if (exp < -4 || exp >= 16) {
    out.append(digits, 0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
    out.append(exp < 0 ? "e-" : "e+");
    int a = std::abs(exp);
    if (a < 10) out.append("0");
    out.append(std::to_string(a));
  } else if (exp >= 0) {
    size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out.append(digits).append(int_len - digits.size(), '0');
    } else {
      out.append(digits, 0, int_len).append(".").append(digits, int_len, std::string::npos);
    }
  } else {
    out.append("0.").append(static_cast<size_t>(-exp - 1), '0').append(digits);
  }
  return out;
}

void print_scale(std::ostream& os, double scale) { os << shortest(scale) << " *" << std::endl; }

void indent(std::ostream& os, int64_t n) {
  for (int64_t i = 0; i < n; ++i) os << " ";
}

// A contiguous float64 matrix of rows x cols at v.
void print_matrix(std::ostream& os, const double* v, int64_t rows, int64_t cols, int64_t linesize, int64_t ind) {
  Format f = choose_format(os, v, rows * cols);
  int64_t per_line = (linesize - ind) / (f.width + 1);
  if (per_line < 1) per_line = 1;
  for (int64_t first = 0; first < cols;) {
    int64_t last = first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0) os << std::endl;
      os << "Columns " << first + 1 << " to " << last + 1;
      indent(os, ind);
    }
    if (f.scale != 1) {
      print_scale(os, f.scale);
      indent(os, ind);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = v + r * cols;
      for (int64_t c = first; c <= last; ++c) {
        os << std::setw(f.width) << row[c] / f.scale;
        if (c == last) {
          os << std::endl;
          if (r != rows - 1) {
            indent(os, ind);
            if (f.scale != 1) os << " ";
          }
        } else {
          os << " ";
        }
      }
    }
    first = last + 1;
  }
}

void print_slices(std::ostream& os, const ember::Tensor& t, int64_t linesize) {
  int64_t nd = t.dim();
  const auto& sz = t.sizes();
  int64_t rows = sz[nd - 2], cols = sz[nd - 1];
  std::vector<int64_t> counter(static_cast<size_t>(nd - 2), 0);
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - 2; ++d) outer *= sz[d];
  const double* data = t.data<double>();
  for (int64_t k = 0; k < outer; ++k) {
    if (k != 0) {
      // The first index varies fastest.
      for (int64_t d = 0; d < nd - 2; ++d) {
        if (++counter[d] < sz[d]) break;
        counter[d] = 0;
      }
      os << std::endl;
    }
    os << "(";
    int64_t offset = 0;
    for (int64_t d = 0; d < nd - 2; ++d) {
      os << counter[d] + 1 << ",";
      offset = offset * sz[d] + counter[d];
    }
    os << ".,.) = " << std::endl;
    print_matrix(os, data + offset * rows * cols, rows, cols, linesize, 1);
  }
}

}  // namespace

void print(std::ostream& os, const Tensor& tensor, int64_t linesize) {
  StreamState keep(os);
  if (!tensor.defined()) {
    os << "[ Tensor (undefined) ]";
    return;
  }
  ember::Tensor t;
  {
    ember::autograd::NoGradGuard no_grad;
    ember::Tensor src = tensor;
    if (ember::is_complex(src.dtype())) src = ember::to_dtype(src, ember::to_real(src.dtype()));  // real parts
    t = ember::contiguous(ember::to_dtype(src, ember::ScalarType::Float64));
  }
  const double* v = t.data<double>();
  int64_t nd = t.dim();
  if (nd == 0) {
    os << shortest(v[0]) << std::endl;
    os << "[ " << tensor.toString() << "{}";
  } else if (nd == 1) {
    if (t.numel() > 0) {
      Format f = choose_format(os, v, t.numel());
      if (f.scale != 1) print_scale(os, f.scale);
      for (int64_t i = 0; i < t.numel(); ++i) os << std::setw(f.width) << v[i] / f.scale << std::endl;
    }
    os << "[ " << tensor.toString() << "{" << t.sizes()[0] << "}";
  } else {
    if (t.numel() > 0) {
      if (nd == 2)
        print_matrix(os, v, t.sizes()[0], t.sizes()[1], linesize, 0);
      else
        print_slices(os, t, linesize);
    }
    os << "[ " << tensor.toString() << "{" << t.sizes()[0];
    for (int64_t d = 1; d < nd; ++d) os << "," << t.sizes()[d];
    os << "}";
  }
  os << " ]";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  print(os, t, 80);
  return os;
}

}  // namespace at
