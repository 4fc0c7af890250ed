// Closes the region opened by isa_begin.h.
#ifndef EMBER_ISA_REGION
#error "ember/cpu/isa_end.h without ember/cpu/isa_begin.h"
#endif
#if EMBER_ISA_LEVEL == 1 || EMBER_ISA_LEVEL == 2
#pragma GCC pop_options
#endif
