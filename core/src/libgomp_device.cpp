#include "nbody/libgomp_device.hpp"

#include <utility>

namespace nbody {
namespace {

std::function<void()>& openacc_device_initialiser() {
    static std::function<void()> initialise;
    return initialise;
}

}  // namespace

void set_openacc_device_initialiser(std::function<void()> initialise) { openacc_device_initialiser() = std::move(initialise); }

void before_openmp_offload() {
    if (const auto& initialise = openacc_device_initialiser()) initialise();
}

}  // namespace nbody
