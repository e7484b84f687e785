#include "nbody/start_affinity.hpp"

namespace nbody {

namespace {

cpu_set_t captured_mask;
bool captured = false;

void capture_start_affinity(int, char**, char**) {
    CPU_ZERO(&captured_mask);
    captured = sched_getaffinity(0, sizeof captured_mask, &captured_mask) == 0 && CPU_COUNT(&captured_mask) > 0;
}

// The dynamic loader calls the executable's .preinit_array before the initialisers of every shared
// library, libgomp's (which binds the main thread) among them.
__attribute__((section(".preinit_array"), used)) void (*capture_at_start)(int, char**, char**) = capture_start_affinity;

}  // namespace

const cpu_set_t& start_affinity() {
    static const bool ready = [] {
        if (!captured) capture_start_affinity(0, nullptr, nullptr);
        if (!captured) CPU_SET(0, &captured_mask);
        return true;
    }();
    (void)ready;
    return captured_mask;
}

int start_cpu_count() { return CPU_COUNT(&start_affinity()); }

std::string cpu_list(const cpu_set_t& cpus) {
    std::string list;
    for (int first = 0; first < CPU_SETSIZE; ++first) {
        if (!CPU_ISSET(first, &cpus)) continue;
        int last = first;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &cpus)) ++last;
        if (!list.empty()) list += ',';
        list += std::to_string(first);
        if (last > first) list += '-' + std::to_string(last);
        first = last;
    }
    return list;
}

}  // namespace nbody
