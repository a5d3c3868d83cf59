#include "core/util/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnlens {

namespace {

std::atomic<int64_t> teamRegions{0};

std::atomic<int>& threadSetting() {
    static std::atomic<int> threads{1};
    return threads;
}

// The (package, core) of a logical CPU from sysfs; {-1, cpu} where sysfs does not say.
std::pair<long, long> coreOf(int cpu) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    long package = -1, core = -1;
    std::ifstream p(base + "physical_package_id"), c(base + "core_id");
    if (!(p >> package) || !(c >> core)) return {-1, cpu};
    return {package, core};
}

} // namespace

int computeThreads() {
    return threadSetting().load(std::memory_order_relaxed);
}

void setComputeThreads(int threads) {
    threadSetting().store(std::clamp(threads, 1, kMaxComputeThreads), std::memory_order_relaxed);
}

int physicalCores() {
    static const int cores = [] {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) != 0)
            return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        std::set<std::pair<long, long>> seen;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set)) seen.insert(coreOf(cpu));
        return std::max(1, static_cast<int>(seen.size()));
    }();
    return cores;
}

int defaultComputeThreads() {
    if (!parallelBuild()) return 1;
    if (const char* env = std::getenv("ATTNLENS_THREADS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 1 && n <= kMaxComputeThreads) return static_cast<int>(n);
    }
    return std::min(physicalCores(), 16);
}

bool parallelBuild() {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
    if (n <= 0) return;
    const int64_t chunks = std::min<int64_t>(computeThreads(), n / std::max<int64_t>(grain, 1));
#ifdef _OPENMP
    if (chunks > 1 && !omp_in_parallel()) {
        teamRegions.fetch_add(1, std::memory_order_relaxed);
        std::exception_ptr error;
        std::mutex errorMutex;
#pragma omp parallel num_threads(static_cast <int>(chunks))
        {
            const int64_t team = omp_get_num_threads(), i = omp_get_thread_num();
            try {
                body(n * i / team, n * (i + 1) / team);
            } catch (...) {
                const std::lock_guard lock(errorMutex);
                if (!error) error = std::current_exception();
            }
        }
        if (error) std::rethrow_exception(error);
        return;
    }
#endif
    (void)chunks;
    body(0, n);
}

void parallelRows(int64_t rows, int64_t rowSize, const std::function<void(int64_t, int64_t)>& body) {
    constexpr int64_t kParallelValues = int64_t{1} << 15;
    parallelFor(rows, std::max<int64_t>(1, kParallelValues / std::max<int64_t>(1, rowSize)), body);
}

int64_t teamRegionsRun() {
    return teamRegions.load(std::memory_order_relaxed);
}

} // namespace attnlens
