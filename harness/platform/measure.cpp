#include "platform/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <type_traits>
#include <variant>

namespace nbody {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}
}  // namespace

void advance_reporting(Simulation& simulation, int steps, const StepProgressHook& hook, int done_before, int total,
                       bool timed) {
    if (!hook.on_steps) {
        simulation.advance(steps);
        return;
    }
    int done = 0, chunk = 1;
    while (done < steps) {
        const int k = std::min(chunk, steps - done);
        const auto start = Clock::now();
        simulation.advance(k);
        simulation.synchronize();
        const double per_step = seconds_since(start) / k;
        done += k;
        hook.on_steps(done_before + done, total, timed);
        chunk = static_cast<int>(std::clamp(hook.chunk_seconds / std::max(per_step, 1e-9), 1.0, 1e9));
    }
}

Measurement measure_variant(Simulation& simulation, const HostState& initial, int warmup, int steps,
                            const TimedPhaseHooks& hooks) {
    Measurement m;
    auto start = Clock::now();
    simulation.upload(initial);
    simulation.synchronize();
    m.upload_s = seconds_since(start);

    const int total = warmup + steps;
    if (warmup > 0) {
        advance_reporting(simulation, warmup, hooks.progress, 0, total, false);
        simulation.synchronize();
        simulation.upload(initial);
        simulation.synchronize();
    }

    // The meter first: it may wait up to an update period of its counter, which the ranks' start
    // (on_start) must not see.
    if (hooks.energy_meter) hooks.energy_meter->start();
    if (hooks.on_start) hooks.on_start();
    start = Clock::now();
    advance_reporting(simulation, steps, hooks.progress, warmup, total, true);
    simulation.synchronize();
    // Too short a phase: more steps at the rate measured so far, until it lasts long enough.
    while (hooks.min_timed_seconds > 0) {
        const double elapsed = seconds_since(start);
        int more = elapsed < hooks.min_timed_seconds
                       ? steps_for_min_time(1, elapsed / steps, 1.1 * hooks.min_timed_seconds - elapsed)
                       : 0;
        if (hooks.agreed_steps) more = hooks.agreed_steps(more);
        if (more == 0) break;
        simulation.advance(more);
        simulation.synchronize();
        steps += more;
    }
    m.steps = steps;
    m.time_per_step_s = seconds_since(start) / steps;
    if (hooks.energy_meter) m.energy = hooks.energy_meter->stop();
    if (hooks.on_stop) hooks.on_stop();

    // download() fills the precision and dimension the state holds on entry: the initial state's.
    m.final_state = empty_state_like(initial);
    start = Clock::now();
    simulation.download(m.final_state, m.activity_map);
    m.download_s = seconds_since(start);
    return m;
}

int steps_for_min_time(int steps, double seconds_per_step, double min_seconds) {
    if (!(seconds_per_step > 0) || !(min_seconds > 0)) return steps;
    const double needed = std::ceil(min_seconds / seconds_per_step);
    return static_cast<int>(std::clamp(needed, static_cast<double>(steps), static_cast<double>(1 << 30)));
}

HostState empty_state_like(const HostState& like) {
    return std::visit([](const auto& b) -> HostState { return std::decay_t<decltype(b)>(b.size(), b.dim); }, like);
}

double interactions_per_second(std::size_t n, double time_per_step_s) {
    const double nn = static_cast<double>(n);
    return nn * nn / time_per_step_s;
}

}  // namespace nbody
