#pragma once
// SIGINT and SIGTERM during a long command (matrix): the first one asks the command to stop after
// the measurement in progress and write what it has; a second one ends the process at once (the
// default action is restored when the first arrives).
#include <csignal>

namespace nbody {

class InterruptGuard {
public:
    InterruptGuard();   // installs the handlers
    ~InterruptGuard();  // restores the previous ones
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
    struct sigaction previous_int_ {}, previous_term_ {};
};

// The signal that asked to stop (SIGINT, SIGTERM), 0 while none has.
int interrupt_signal();
// For tests: forget a recorded signal.
void clear_interrupt_signal();

// "SIGINT", "SIGTERM", or the number.
const char* signal_name(int signal_number);

}  // namespace nbody
