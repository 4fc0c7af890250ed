// Included by each kernel header (loops.h, vec_math.h, ...): in a multi-ISA kernel file such a
// header must come after ember/cpu/isa_begin.h, or its code would be compiled for the baseline
// only (Note [Multi-ISA kernels] in isa.h). No include guard on purpose.
#include "ember/cpu/isa.h"
#if defined(EMBER_ISA_LEVEL) && !defined(EMBER_ISA_REGION)
#error "a multi-ISA kernel file includes a kernel header (loops.h, vec_math.h, ...) before ember/cpu/isa_begin.h"
#endif
