#include "run/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace nbody {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

StepProgress::StepProgress(std::ostream& out, bool interactive, std::string what, std::size_t n)
    : out_(out), interactive_(interactive), what_(std::move(what)), n_(static_cast<double>(n)),
      start_(std::chrono::steady_clock::now()), last_line_(start_) {}

StepProgress::~StepProgress() {
    if (interactive_ && drawn_) out_ << "\r\033[K" << std::flush;
}

std::string StepProgress::line(int done, int total, bool timed, double rate, double seconds_left) {
    return fmt::format("steps {}/{}{}, {:.2e} interactions/s, {} left", done, total, timed ? "" : " (warm-up)", rate,
                       Progress::clock_text(seconds_left));
}

void StepProgress::update(int done, int total, bool timed) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (done <= 0 || elapsed <= 0) return;
    if (!interactive_ && std::chrono::duration<double>(now - last_line_).count() < kLogProgressEverySeconds) return;
    last_line_ = now;
    const double per_step = elapsed / done;
    const std::string text = what_ + ": " + line(done, total, timed, n_ * n_ / per_step, per_step * (total - done));
    if (interactive_) {
        out_ << "\r\033[K" << text << std::flush;
        drawn_ = true;
    } else {
        out_ << text << '\n' << std::flush;
    }
}

Progress::Progress(std::ostream& out, bool interactive, std::vector<double> work, std::vector<bool> on_gpu)
    : out_(out), interactive_(interactive), work_(std::move(work)), on_gpu_(std::move(on_gpu)),
      start_(std::chrono::steady_clock::now()), current_start_(start_) {}

double Progress::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::clock_text(double seconds) {
    const long s = std::lround(seconds);
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string Progress::status() const {
    // Remaining = work left on each device / that device's observed rate (the other's when unseen).
    double remaining = 0;
    bool known = true;
    for (std::size_t k = current_; k < work_.size(); ++k) {
        const int dev = on_gpu_[k] ? 1 : 0;
        const int rate_from = work_done_[dev] > 0 ? dev : (work_done_[1 - dev] > 0 ? 1 - dev : -1);
        if (rate_from < 0) {
            known = false;
            break;
        }
        double share = 1.0;
        if (k == current_ && rep_of_ > 0) share = 1.0 - static_cast<double>(rep_done_) / (rep_of_ + 1);
        remaining += share * work_[k] * seconds_done_[rate_from] / work_done_[rate_from];
    }
    return fmt::format("elapsed {}, remaining {}{}", clock_text(elapsed()), known ? "~" : "", known ? clock_text(remaining) : "?");
}

void Progress::draw(const std::string& line) {
    if (interactive_)
        out_ << "\r\033[K" << line << std::flush;
    else
        out_ << line << '\n' << std::flush;
}

void Progress::begin(std::size_t k, const std::string& what) {
    current_ = k;
    what_ = what;
    rep_done_ = rep_of_ = 0;
    current_start_ = std::chrono::steady_clock::now();
    last_steps_line_ = current_start_;
    draw(fmt::format("[{}/{}] {} ({})", k + 1, work_.size(), what, status()));
}

void Progress::repetition(int done, int of) {
    rep_done_ = done;
    rep_of_ = of;
    if (interactive_) draw(fmt::format("[{}/{}] {} rep {}/{} ({})", current_ + 1, work_.size(), what_, done + 1, of, status()));
}

void Progress::steps(int done, int total, bool timed, double interactions_per_second, double seconds_left) {
    const auto now = std::chrono::steady_clock::now();
    if (!interactive_ && std::chrono::duration<double>(now - last_steps_line_).count() < kLogProgressEverySeconds) return;
    last_steps_line_ = now;
    draw(fmt::format("[{}/{}] {} rep {}/{}: {}", current_ + 1, work_.size(), what_, rep_done_ + 1, rep_of_,
                     StepProgress::line(done, total, timed, interactions_per_second, seconds_left)));
}

void Progress::end(const std::string& outcome) {
    const int dev = on_gpu_[current_] ? 1 : 0;
    seconds_done_[dev] += std::chrono::duration<double>(std::chrono::steady_clock::now() - current_start_).count();
    work_done_[dev] += work_[current_];
    const std::string line = fmt::format("[{}/{}] {}: {}", current_ + 1, work_.size(), what_, outcome);
    if (interactive_)
        out_ << "\r\033[K" << line << '\n' << std::flush;
    else
        out_ << line << '\n' << std::flush;
    ++current_;
    rep_of_ = 0;
}

void Progress::note(const std::string& line) {
    if (interactive_) out_ << "\r\033[K";
    out_ << line << '\n' << std::flush;
}

}  // namespace nbody
