#include "ember/core/parallel.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "ember/core/error.h"

namespace ember {
namespace {

// Note [Thread count across threads]: the last count set, and how many times one was set.
std::atomic<int> g_requested{0};
std::atomic<uint64_t> g_generation{0};
thread_local uint64_t t_adopted = 0;

bool read_line(const std::string& path, std::string& out) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, out));
}

// CPUs allowed by a quota of `quota` microseconds per `period`, rounded up; 0 when unlimited.
int cpus_from_quota(double quota, double period) {
  if (!(quota > 0) || !(period > 0)) return 0;
  return std::max(1, static_cast<int>(std::ceil(quota / period - 1e-9)));
}

int apply_default_threads() {
#ifdef _OPENMP
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    int limit = process_cpu_limit();
    if (limit > 0 && limit < omp_get_max_threads()) {
      g_requested.store(limit);
      g_generation.fetch_add(1);
      adopt_num_threads();
    }
  }
#endif
  return 0;
}
// Before main (and before Python imports the module's first op): the quota cap is in place for
// every thread that asks (Note [Default thread count]).
[[maybe_unused]] const int g_default_threads_applied = apply_default_threads();

}  // namespace

void adopt_num_threads() {
#ifdef _OPENMP
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (t_adopted != gen) {
    t_adopted = gen;
    omp_set_num_threads(g_requested.load(std::memory_order_relaxed));
  }
#endif
}

int get_num_threads() {
#ifdef _OPENMP
  adopt_num_threads();
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads expects a positive integer, got ", n);
#ifdef _OPENMP
  g_requested.store(n, std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_release);
  adopt_num_threads();
#endif
}

int cgroup_cpu_limit(const char* dir) {
  const std::string d(dir);
  std::string line;
  if (read_line(d + "/cpu.max", line)) {  // cgroup v2: "max 100000" or "150000 100000"
    std::istringstream in(line);
    std::string quota;
    double period = 0;
    in >> quota >> period;
    if (quota == "max") return 0;
    char* end = nullptr;
    double q = std::strtod(quota.c_str(), &end);
    return end && *end == '\0' ? cpus_from_quota(q, period) : 0;
  }
  std::string period;
  if (read_line(d + "/cpu.cfs_quota_us", line) && read_line(d + "/cpu.cfs_period_us", period))  // v1; -1: none
    return cpus_from_quota(std::strtod(line.c_str(), nullptr), std::strtod(period.c_str(), nullptr));
  return 0;
}

int process_cpu_limit() {
  // /proc/self/cgroup: "0::/path" (v2) or "N:cpu,cpuacct:/path" (v1). The limit may sit on any
  // ancestor of the process's cgroup, so every level up to the mount point is read.
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  int best = 0;
  auto consider = [&best](const std::string& mount, std::string path) {
    while (true) {
      int l = cgroup_cpu_limit((mount + path).c_str());
      if (l > 0 && (best == 0 || l < best)) best = l;
      if (path.empty() || path == "/") break;
      path = path.substr(0, path.find_last_of('/'));
    }
  };
  while (std::getline(f, line)) {
    auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (controllers.empty()) {
      consider("/sys/fs/cgroup", path);
      consider("/sys/fs/cgroup/unified", path);
    } else if (("," + controllers + ",").find(",cpu,") != std::string::npos) {
      consider("/sys/fs/cgroup/" + controllers, path);
      if (controllers != "cpu") consider("/sys/fs/cgroup/cpu", path);
    }
  }
  return best;
}

}  // namespace ember
