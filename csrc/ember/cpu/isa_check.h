// Included by each kernel header (loops.h, vec_math.h, ...): in a multi-ISA kernel file such a
// header must come after ember/cpu/isa_begin.h, or its code would be compiled for the baseline
// only (Note [Multi-ISA kernels] in isa.h). No include guard on purpose.
#include "ember/cpu/isa.h"
#if defined(EMBER_ISA_LEVEL) && !defined(EMBER_ISA_REGION)
#error "a multi-ISA kernel file includes a kernel header (loops.h, vec_math.h, ...) before ember/cpu/isa_begin.h"
#endif

// EMBER_AVX512_LANES: this code is compiled for AVX-512 (the AVX-512 level of a multi-ISA file, or
// a native build on such a CPU), so its explicit 16-lane paths exist. GCC's target pragma of
// isa_begin.h does not define __AVX512F__: the level says it.
#if (defined(EMBER_ISA_LEVEL) && EMBER_ISA_LEVEL == 2) || (!defined(EMBER_ISA_LEVEL) && defined(__AVX512F__))
#ifndef EMBER_AVX512_LANES
#define EMBER_AVX512_LANES 1
#include <immintrin.h>
#endif
#endif
