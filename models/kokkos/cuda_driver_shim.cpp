// The three CUDA driver functions Kokkos' CUDA backend calls directly, forwarded to libcuda.so.1
// opened at first use. Linking libcuda itself would make nbody-bench fail to start on a machine
// without the NVIDIA driver, where it must instead list the CUDA variants as unavailable (the CUDA
// runtime, linked statically, also opens the driver only at run time). Declared without cuda.h,
// whose macros rename these entry points; CUresult is an int enum, CUdevice an int, contexts and
// streams pointers.
#include <dlfcn.h>

namespace {

constexpr int kCudaErrorNotInitialized = 3;  // CUDA_ERROR_NOT_INITIALIZED

void* driver_symbol(const char* name) {
    static void* const driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return driver != nullptr ? dlsym(driver, name) : nullptr;
}

template <class Fn, class... Args>
int forward(const char* name, Args... args) {
    const auto fn = reinterpret_cast<Fn>(driver_symbol(name));
    return fn != nullptr ? fn(args...) : kCudaErrorNotInitialized;
}

}  // namespace

extern "C" {

int cuCtxGetDevice(int* device) { return forward<int (*)(int*)>("cuCtxGetDevice", device); }

int cuCtxPushCurrent_v2(void* context) { return forward<int (*)(void*)>("cuCtxPushCurrent_v2", context); }

int cuStreamGetCtx(void* stream, void** context) {
    return forward<int (*)(void*, void**)>("cuStreamGetCtx", stream, context);
}

}  // extern "C"
