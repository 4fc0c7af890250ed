// Opens the part of a multi-ISA kernel file compiled for its level (Note [Multi-ISA kernels] in
// isa.h). Include it after every header that is not kernel code, and end the file with
// isa_end.h. Not include-guarded on purpose: a second inclusion is an error.
#ifdef EMBER_ISA_REGION
#error "ember/cpu/isa_begin.h included twice"
#endif
#ifndef EMBER_ISA_LEVEL
#error "ember/cpu/isa_begin.h is for files listed in ember_add_isa_sources (CMakeLists.txt)"
#endif

// Shared headers the kernel headers use: included here, before the target pragma, so their
// inline functions stay baseline code.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>  // for the AVX-512 level's 16-lane paths (EMBER_AVX512_LANES)
#endif

#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"

#define EMBER_ISA_REGION 1
#if EMBER_ISA_LEVEL == 1
#pragma GCC push_options
// x86-64-v3's features; arch and tuning stay as for the baseline, so baseline inline functions
// still inline here. 256-bit vectors, as the native build's math kernels use.
#pragma GCC target("avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,prefer-vector-width=256")
#elif EMBER_ISA_LEVEL == 2
#pragma GCC push_options
// x86-64-v4's features, with 256-bit vectors (AVX-512VL gives them masks and 32 registers), as
// GCC's tuning for most AVX-512 CPUs prefers: 512-bit ones lower the clock on several Intel CPUs.
#pragma GCC target( \
    "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,prefer-vector-width=256")
// The 16-lane paths (EMBER_AVX512_LANES) pass __m512 by value between inlined functions, which
// GCC flags as an ABI change (-Wpsabi; each level has its own copies, nothing crosses a call),
// and GCC 12's AVX-512 intrinsics start from a self-initialized "undefined" vector that
// -Wmaybe-uninitialized reports.
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
