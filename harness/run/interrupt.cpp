#include "run/interrupt.hpp"

#include <unistd.h>

#include <atomic>

namespace nbody {

namespace {

std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch lock-free atomics");

extern "C" void on_stop_signal(int signal_number) {
    stop_signal.store(signal_number);
    // Only async-signal-safe calls here: write(2) and signal(2).
    static const char message[] =
        "\nnbody-bench: stopping after the measurement in progress; finished results are kept (a second signal stops at once)\n";
    const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    std::signal(signal_number, SIG_DFL);
}

}  // namespace

InterruptGuard::InterruptGuard() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // interrupted reads and writes resume: the measurement goes on
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
}

InterruptGuard::~InterruptGuard() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
}

int interrupt_signal() { return stop_signal.load(); }

void clear_interrupt_signal() { stop_signal.store(0); }

const char* signal_name(int signal_number) {
    switch (signal_number) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        default: return "a signal";
    }
}

}  // namespace nbody
