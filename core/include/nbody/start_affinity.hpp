#pragma once
// The CPUs this process was started on, read before any library's initialiser runs (an entry of the
// executable's .preinit_array). With OMP_PROC_BIND set, libgomp pins the main thread to OpenMP's
// first place while it loads, before main; Kokkos pins it when it initialises. After that the
// thread's own mask names one core. The threads of a runtime OpenMP's binding variables do not
// govern (TBB's workers: tbb_start_arena.hpp) run on this mask, the cores they would use unbound.
#include <sched.h>

#include <string>

namespace nbody {

// The main thread's affinity mask when the program started (read at the first call instead in a
// program whose loader runs no .preinit_array, where it may already be pinned).
const cpu_set_t& start_affinity();
// The CPUs in it, at least 1.
int start_cpu_count();
// Its CPUs as a list of ranges, "0-15" or "0,2,4-7".
std::string cpu_list(const cpu_set_t& cpus);

}  // namespace nbody
