// Run-time choice of the CPU kernels' instruction set (Note [Multi-ISA kernels]).
//
// Note [Multi-ISA kernels]
// The library is built for a portable x86-64 baseline (x86-64-v2). The hot kernel files (those
// listed in ember_add_isa_sources in CMakeLists.txt) are compiled three times: at the baseline,
// for AVX2+FMA (x86-64-v3) and for AVX-512 (x86-64-v4). Each compile names its entry points with
// a suffix (`unary_kernel_default`, `_avx2`, `_avx512`, from EMBER_ISA_KERNEL) and the inline
// dispatcher in the kernel's header calls the one of the level chosen once at start-up from the
// CPU's features, or forced lower with EMBER_CPU_CAPABILITY=default|avx2|avx512.
//
// Only the code between isa_begin.h and isa_end.h gets the wider instruction set (a GCC target
// pragma, not -m flags): every header included before it (the standard library, tensor.h) stays
// baseline code, so an inline function the linker keeps one copy of can never be an AVX-512
// one. Headers whose code belongs to a kernel (loops.h, vec_math.h, unary_math.h,
// reduce_kernels.h) are included after isa_begin.h and put their code in the inline namespace
// EMBER_ISA_NS, so each level's copy has its own symbol names.
//
// EMBER_NATIVE=ON builds compile everything once for the build machine; then every dispatcher
// calls the `_default` entry and EMBER_CPU_CAPABILITY is ignored.
#pragma once

namespace ember::cpu {

enum class CpuCapability : int { Default = 0, AVX2 = 1, AVX512 = 2 };

// The level the dispatched kernels run at: the best one the CPU supports, lowered by
// EMBER_CPU_CAPABILITY (never raised above what the CPU supports). Decided on first use.
CpuCapability cpu_capability();
// The best level this CPU (and this build) supports.
CpuCapability cpu_capability_supported();
// "DEFAULT", "AVX2", "AVX512": the strings torch.backends.cpu.get_cpu_capability() uses.
const char* cpu_capability_name(CpuCapability c);

// Picks one of a kernel's three compiles by the level in use.
template <typename F>
inline F isa_pick(F level_default, F level_avx2, F level_avx512) {
  switch (cpu_capability()) {
    case CpuCapability::AVX512:
      return level_avx512;
    case CpuCapability::AVX2:
      return level_avx2;
    default:
      return level_default;
  }
}

}  // namespace ember::cpu

// The level this translation unit is compiled for: CMake defines EMBER_ISA_LEVEL (0, 1, 2) for
// the multi-ISA kernel files; every other file is baseline code.
#if !defined(EMBER_ISA_LEVEL) || EMBER_ISA_LEVEL == 0
#define EMBER_ISA_NS isa_default
#define EMBER_ISA_KERNEL(name) name##_default
#elif EMBER_ISA_LEVEL == 1
#define EMBER_ISA_NS isa_avx2
#define EMBER_ISA_KERNEL(name) name##_avx2
#elif EMBER_ISA_LEVEL == 2
#define EMBER_ISA_NS isa_avx512
#define EMBER_ISA_KERNEL(name) name##_avx512
#else
#error "EMBER_ISA_LEVEL must be 0, 1 or 2"
#endif

// Declares a kernel's three entry points (the kernel file defines them with EMBER_ISA_KERNEL).
#define EMBER_DECLARE_ISA_KERNEL(ret, name, params) \
  ret name##_default params;                        \
  ret name##_avx2 params;                           \
  ret name##_avx512 params;

// The entry point of the level in use (an expression of function-pointer type).
#ifdef EMBER_SINGLE_ISA
#define EMBER_ISA_SELECT(name) name##_default
#else
#define EMBER_ISA_SELECT(name) ::ember::cpu::isa_pick(name##_default, name##_avx2, name##_avx512)
#endif
