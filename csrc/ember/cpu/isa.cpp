#include "ember/cpu/isa.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::cpu {
namespace {

CpuCapability detect() {
#ifdef EMBER_SINGLE_ISA
  // One compile (EMBER_NATIVE, or EMBER_ISA_DISPATCH=OFF): report what it was compiled for.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
  return CpuCapability::AVX512;
#elif defined(__AVX2__) && defined(__FMA__)
  return CpuCapability::AVX2;
#else
  return CpuCapability::Default;
#endif
#elif defined(__x86_64__)
  // The features isa_begin.h compiles each level for (libgcc also checks the OS saves the registers).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return CpuCapability::AVX512;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuCapability::AVX2;
  return CpuCapability::Default;
#else
  return CpuCapability::Default;
#endif
}

CpuCapability choose() {
  const CpuCapability best = cpu_capability_supported();
  const char* env = std::getenv("EMBER_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0') return best;
  std::string v(env);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CpuCapability want;
  if (v == "default" || v == "baseline")
    want = CpuCapability::Default;
  else if (v == "avx2")
    want = CpuCapability::AVX2;
  else if (v == "avx512")
    want = CpuCapability::AVX512;
  else {
    std::fprintf(stderr, "ember: ignoring EMBER_CPU_CAPABILITY=%s (expected default, avx2 or avx512)\n", env);
    return best;
  }
#ifdef EMBER_SINGLE_ISA
  if (want != best)
    std::fprintf(stderr,
                 "ember: ignoring EMBER_CPU_CAPABILITY=%s: this build (EMBER_NATIVE) has one kernel level, %s\n", env,
                 cpu_capability_name(best));
  return best;
#else
  if (static_cast<int>(want) > static_cast<int>(best)) {
    std::fprintf(stderr, "ember: EMBER_CPU_CAPABILITY=%s is not supported by this CPU; using %s\n", env,
                 cpu_capability_name(best));
    return best;
  }
  return want;
#endif
}

}  // namespace

CpuCapability cpu_capability_supported() {
  static const CpuCapability c = detect();
  return c;
}

CpuCapability cpu_capability() {
  static const CpuCapability c = choose();
  return c;
}

const char* cpu_capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::AVX512:
      return "AVX512";
    case CpuCapability::AVX2:
      return "AVX2";
    default:
      return "DEFAULT";
  }
}

}  // namespace ember::cpu
