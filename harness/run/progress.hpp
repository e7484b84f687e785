#pragma once
// Progress of a long matrix run: configuration k of n, what runs now, elapsed, estimated remaining.
// On a terminal one line is redrawn in place; otherwise each event is a plain log line.
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace nbody {

// Where progress goes: stderr, redrawn in place when it is a terminal.
bool stderr_is_terminal();

// How often a plain (non-terminal) progress line is written, and after how long a run starts
// showing progress at all.
inline constexpr double kLogProgressEverySeconds = 30;
inline constexpr double kProgressAfterSeconds = 3;

// The steps of one long run on stderr: on a terminal one line redrawn in place (steps done, rate,
// time left), otherwise a plain line at most every kLogProgressEverySeconds.
class StepProgress {
public:
    StepProgress(std::ostream& out, bool interactive, std::string what, std::size_t n);
    ~StepProgress();  // clears the redrawn line
    void update(int done, int total, bool timed);
    // "steps 12/100 (timed), 3.4e+09 interactions/s, 0:41 left"
    static std::string line(int done, int total, bool timed, double rate, double seconds_left);

private:
    std::ostream& out_;
    bool interactive_;
    std::string what_;
    double n_;
    std::chrono::steady_clock::time_point start_, last_line_;
    bool drawn_ = false;
};

class Progress {
public:
    // `work[k]`: relative cost of configuration k (for the estimate); `on_gpu[k]`: which device runs
    // it (GPU and CPU configurations progress at very different rates, so each has its own rate).
    Progress(std::ostream& out, bool interactive, std::vector<double> work, std::vector<bool> on_gpu);

    void begin(std::size_t k, const std::string& what);
    void repetition(int done, int of);
    // Steps done of the current repetition (a long configuration): redrawn on a terminal, a plain
    // line at most every kLogProgressEverySeconds otherwise.
    void steps(int done, int total, bool timed, double interactions_per_second, double seconds_left);
    void end(const std::string& outcome);
    void note(const std::string& line);

    static std::string clock_text(double seconds);  // h:mm:ss or m:ss

private:
    double elapsed() const;
    std::string status() const;
    void draw(const std::string& line);

    std::ostream& out_;
    bool interactive_;
    std::vector<double> work_;
    std::vector<bool> on_gpu_;
    std::chrono::steady_clock::time_point start_, current_start_;
    std::size_t current_ = 0;
    std::string what_;
    int rep_done_ = 0, rep_of_ = 0;
    std::chrono::steady_clock::time_point last_steps_line_;
    double seconds_done_[2] = {0, 0}, work_done_[2] = {0, 0};
};

}  // namespace nbody
