#include "rank_binding.cuh"

#include <cuda_runtime.h>

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_common.cuh"

namespace nbody::cuda {
namespace {

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; empty for text that is no CPU list.
std::vector<int> parse_cpu_list(const std::string& text) {
    std::vector<int> cpus;
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item.empty() || item == "\n") continue;
        int first = -1, last = -1;
        char dash = 0;
        std::stringstream range(item);
        if (!(range >> first)) return {};
        if (range >> dash) {
            if (dash != '-' || !(range >> last)) return {};
        } else {
            last = first;
        }
        if (first < 0 || last < first || last >= CPU_SETSIZE) return {};
        for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    }
    return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
    std::string text;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!text.empty()) text += ',';
        text += std::to_string(cpus[i]);
        if (j > i) {
            text += '-';
            text += std::to_string(cpus[j]);
        }
        i = j + 1;
    }
    return text;
}

// The sysfs folder of a GPU's PCI device, e.g. /sys/bus/pci/devices/0000:1b:00.0.
std::string pci_folder(int device) {
    char bus_id[64] = {};
    NBODY_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    std::string id(bus_id);
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return "/sys/bus/pci/devices/" + id;
}

std::string first_line_of(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

std::string bind_near_gpu(int device, int gpus_in_use) {
    const std::string folder = pci_folder(device);
    const std::vector<int> near = parse_cpu_list(first_line_of(folder + "/local_cpulist"));
    if (near.empty()) return "not bound (no CPU list in " + folder + "/local_cpulist)";
    int share = 0, sharing = 0;
    for (int other = 0; other < gpus_in_use; ++other) {
        if (parse_cpu_list(first_line_of(pci_folder(other) + "/local_cpulist")) != near) continue;
        if (other == device) share = sharing;
        ++sharing;
    }
    sharing = std::max(sharing, 1);
    const std::size_t per = near.size() / static_cast<std::size_t>(sharing);
    std::vector<int> mine = per == 0 ? near
                                     : std::vector<int>(near.begin() + static_cast<std::ptrdiff_t>(per * share),
                                                        near.begin() + static_cast<std::ptrdiff_t>(per * (share + 1)));
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : mine) CPU_SET(cpu, &set);
    const std::string numa = first_line_of(folder + "/numa_node");
    const std::string where = "near " + folder.substr(folder.rfind('/') + 1) + " (NUMA node " + (numa.empty() ? "?" : numa) +
                              ", CPUs " + cpu_list_text(near) + (sharing > 1 ? ", shared by " + std::to_string(sharing) + " GPUs" : "") + ")";
    if (sched_setaffinity(0, sizeof set, &set) != 0) return "not bound to CPUs " + cpu_list_text(mine) + " " + where + ": sched_setaffinity refused";
    cpu_set_t now;
    CPU_ZERO(&now);
    std::vector<int> bound;
    if (sched_getaffinity(0, sizeof now, &now) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &now)) bound.push_back(cpu);
    return "bound to CPUs " + cpu_list_text(bound) + " " + where;
}

}  // namespace nbody::cuda
