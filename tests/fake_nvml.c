/* A stand-in for the driver's libnvidia-ml.so.1 with the few functions the energy meters use
 * (harness/platform/energy.hpp): one GPU at PCI bus id 0000:1B:00.0 whose energy counter, SM clock
 * and energy status the test sets through fake_nvml_set (from any thread), and which counts the
 * reads of its energy counter (fake_nvml_energy_reads). Built without
 * nvmlDeviceGetTotalEnergyConsumption when FAKE_NVML_WITHOUT_ENERGY is defined. */
#include <strings.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_CLOCK_SM 1

typedef struct FakeDevice { int unused; } FakeDevice;
static FakeDevice the_gpu;
static unsigned long long energy_mj;
static unsigned int sm_clock_mhz;
static int energy_status = NVML_SUCCESS;
static unsigned long long energy_reads;
static int initialised;

void fake_nvml_set(unsigned long long millijoules, unsigned int clock_mhz, int status) {
    __atomic_store_n(&energy_mj, millijoules, __ATOMIC_SEQ_CST);
    __atomic_store_n(&sm_clock_mhz, clock_mhz, __ATOMIC_SEQ_CST);
    __atomic_store_n(&energy_status, status, __ATOMIC_SEQ_CST);
}

unsigned long long fake_nvml_energy_reads(void) { return __atomic_load_n(&energy_reads, __ATOMIC_SEQ_CST); }

int fake_nvml_initialised(void) { return initialised; }

int nvmlInit_v2(void) {
    ++initialised;
    return NVML_SUCCESS;
}

int nvmlShutdown(void) {
    --initialised;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, FakeDevice** device) {
    if (bus_id == 0 || device == 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (strcasecmp(bus_id, "0000:1B:00.0") != 0) return NVML_ERROR_NOT_FOUND;
    *device = &the_gpu;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_WITHOUT_ENERGY
int nvmlDeviceGetTotalEnergyConsumption(FakeDevice* device, unsigned long long* millijoules) {
    if (device != &the_gpu || millijoules == 0) return NVML_ERROR_INVALID_ARGUMENT;
    __atomic_add_fetch(&energy_reads, 1, __ATOMIC_SEQ_CST);
    const int status = __atomic_load_n(&energy_status, __ATOMIC_SEQ_CST);
    if (status != NVML_SUCCESS) return status;
    *millijoules = __atomic_load_n(&energy_mj, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}
#endif

int nvmlDeviceGetClockInfo(FakeDevice* device, int type, unsigned int* mhz) {
    if (device != &the_gpu || type != NVML_CLOCK_SM || mhz == 0) return NVML_ERROR_INVALID_ARGUMENT;
    *mhz = __atomic_load_n(&sm_clock_mhz, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}

const char* nvmlErrorString(int status) {
    switch (status) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        default: return "Unknown Error";
    }
}
